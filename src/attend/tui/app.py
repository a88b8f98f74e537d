"""`attend tui`: the sensors tab, a Textual app over the functions the CLI calls (ADR-403 §5).

The list (`DataTable#sensors`, one row per sensor keyed by name) shows what `attend sensors list`
shows and refreshes when something changed: the store (another process committed), a sensor or config
file (the model's watcher says so from its thread), or a key was pressed; in between, a tick every
`REFRESH_SECONDS` only redraws the relative times (`12s ago`) from the rows it has, without reading the
store (where the files cannot be watched, the tick reads everything, as before); below it the highlighted sensor's fields
(`DataTable#fields`, `attend settings list`'s effective view with layer and file) and its triggers.
Edits are pending (`SensorsModel`) until reviewed and applied. Trio is imported only when a preview
or a probe runs, in a worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from attend.ir import SensorTrigger
from attend.redact import cut
from attend.settings.keys import format_key
from attend.settings.plans import NothingToUnset, render
from attend.settings.policy import SettingsRefusal
from attend.spec.headers import shown_value
from attend.text import iso_time, printable, printable_path
from attend.tui.model import FieldRow, SensorsModel, when
from attend.tui.screens import (
    ConfirmDialog,
    EditForm,
    HelpScreen,
    InputDialog,
    NameDialog,
    PendingChanged,
    PreviewScreen,
    ReviewScreen,
    TextDialog,
    steady_cursor,
)

if TYPE_CHECKING:
    from attend.runtime.reports import SensorRow

__all__ = ["REFRESH_SECONDS", "SensorsApp"]

#: How often the open tab redraws its relative times (`12s ago`) between two changes (seconds); it reads the
#: store then only where the files cannot be watched.
REFRESH_SECONDS = 5.0

#: The colour of each state in the list (failures red; anything not listed is red too).
STATE_STYLES = {
    "ok": "green",
    "disabled": "dim",
    "unprobed": "yellow",
    "refused": "yellow",
}

#: The longest value the field list shows in full (the form shows all of it).
VALUE_WIDTH = 44

#: The list's columns: (key, label).
COLUMNS = (
    ("name", "sensor"),
    ("on", "on"),
    ("kind", "kind"),
    ("layer", "layer"),
    ("state", "state"),
    ("last", "last poll"),
    ("next", "next poll"),
    ("lane", "lane"),
    ("marks", "marks"),
    ("message", "message"),
)

CSS = """
#title { height: 1; background: $primary-background; color: $text; padding: 0 1; }
#sensors { height: auto; max-height: 45%; min-height: 4; }
#detail { height: auto; max-height: 6; padding: 0 1; border-top: solid $primary; }
#fields { height: 1fr; min-height: 4; }
#filter { display: none; border: none; height: 1; padding: 0 1; }
#filter.shown { display: block; }
ModalScreen { align: center middle; }
#dialog { width: 90%; max-width: 110; height: auto; max-height: 90%; border: thick $primary; padding: 1 2;
          background: $surface; }
#review-box { width: 95%; height: 90%; border: thick $primary; padding: 0 1; background: $surface; }
#review { height: 1fr; }
#review-result { height: auto; max-height: 8; }
#error { height: auto; margin-top: 1; }
.hint { color: $text-muted; margin-top: 1; }
"""


def _state_text(row: SensorRow) -> Text:
    state = row["state"]
    return Text(state, style=STATE_STYLES.get(state, "bold red"))


def _shown_value(row: FieldRow) -> object:
    """A field's value as the fields table shows it: an MCP header's literal credential hidden (as explain)."""
    return shown_value(row.path, row.value)


def _clip(text: str, width: int = VALUE_WIDTH) -> str:
    return cut(text, width)  # never splits a <redacted> mark (attend.redact)


def _marks(row: SensorRow) -> str:
    """Shelved, flapping and override marks."""
    marks = []
    for shelf in row.get("shelves") or []:
        marks.append("shelved" if shelf.get("trigger") is None else f"{shelf['trigger']} shelved")
    if row.get("flapping"):
        marks.append("flapping")
    marks.extend(f"override {o}" for o in row.get("overrides") or [])
    if row.get("running_last_good"):
        marks.append("last good")
    return ", ".join(marks)


class SensorsScreen(Screen[None]):
    """The list, the highlighted sensor's detail, the filter; every key of the tab's main view."""

    BINDINGS = [
        Binding("space", "toggle_enabled", "Toggle"),
        Binding("e", "edit", "Edit"),
        Binding("d", "reset", "Default"),
        Binding("u", "revert", "Revert"),
        Binding("p", "preview", "Preview"),
        Binding("w,ctrl+s", "review", "Review"),
        Binding("c", "copy", "Copy", show=False),
        Binding("R", "rename", "Rename", show=False),
        Binding("X", "delete", "Delete", show=False),
        Binding("P", "probe", "Probe", show=False),
        Binding("s", "shelve", "Shelve", show=False),
        Binding("S", "unshelve", "Unshelve", show=False),
        Binding("h", "history", "History"),
        Binding("l", "layer", "Layer", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("question_mark", "help", "Keys"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "escape", "Quit", show=False),
    ]

    def __init__(self, model: SensorsModel) -> None:
        super().__init__()
        self.model = model
        self.filter_text = ""
        self._fields: dict[str, FieldRow] = {}
        self._shown_sensor: str | None = None
        self._detail: tuple[object, ...] | None = None
        self._columns_ready = False  # set by on_mount: a refresh tick before it must not add rows

    # --- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="title")
        yield DataTable(id="sensors", cursor_type="row", zebra_stripes=True)
        yield Static("", id="detail")
        yield DataTable(id="fields", cursor_type="row")
        box = Input(placeholder="filter: part of a name, kind, layer or state", id="filter")
        box.can_focus = False  # reached by `/` only: Tab moves between the list and the fields
        yield box
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one("#sensors", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        fields = self.query_one("#fields", DataTable)
        for key, label in (("field", "field"), ("value", "value"), ("layer", "layer"), ("file", "file")):
            fields.add_column(label, key=key)
        self._columns_ready = True
        self.fill()
        table.focus()
        steady_cursor(self)

    # --- filling -----------------------------------------------------------------------------------

    def _visible(self) -> list[SensorRow]:
        needle = self.filter_text.lower()
        if not needle:
            return self.model.rows
        return [r for r in self.model.rows
                if any(needle in str(r.get(k) or "").lower() for k in ("name", "kind", "layer", "state"))]

    def _cells(self, row: SensorRow) -> list[Any]:
        now = self.model.clock()
        name = row["name"]
        pending = [p for p in self.model.pending if p.sensor == name]
        enabled = self.model.sensor(name).enabled if pending else row["enabled"]
        on = Text("on" if enabled else "off", style="green" if enabled else "dim")
        if any(p.path == ("enabled",) for p in pending):
            on = Text(f"{'on' if enabled else 'off'}●", style="bold yellow")
        label = Text(printable(name), style="bold yellow" if pending else "")
        if pending:
            label.append(f" ({len(pending)})", style="yellow")
        message = printable(row["message"] or "", one_line=True) if row["state"] not in ("ok", "disabled") else ""
        return [label, on, row["kind"] or "-", row["layer"], _state_text(row), when(row["last_poll"], now),
                when(row["next_poll"], now, upcoming=True), row["lane"], _marks(row), Text(message, style="red")]

    def fill(self, select: str | None = None) -> None:
        """Show the model's rows (rebuilt when the names changed, else cell by cell); the cursor stays on
        the highlighted sensor, or moves to `select` (a sensor just renamed)."""
        table = self.query_one("#sensors", DataTable)
        rows = self._visible()
        names = [r["name"] for r in rows]
        current = [k.value for k in table.rows]
        if names != current:
            keep = select or self.current_name()
            table.clear()
            for row in rows:
                table.add_row(*self._cells(row), key=row["name"])
            if keep in names:
                table.move_cursor(row=names.index(keep))
        else:
            for row in rows:
                for (key, _), cell in zip(COLUMNS, self._cells(row), strict=True):
                    if table.get_cell(row["name"], key) != cell:
                        table.update_cell(row["name"], key, cell)
        self.fill_title()
        # The fields are rebuilt only when what they show changed: a refresh every couple of seconds
        # must stay cheap while idle, and must not move the user's place in the fields.
        if self._detail_key(self.current_name()) != self._detail:
            self.fill_detail()

    def fill_title(self) -> None:
        count = len(self.model.pending)
        text = Text()
        text.append("attend sensors", style="bold")
        text.append(f"  {self.model.project_dir.name or self.model.project_dir}  ")
        text.append(f"edits write: {self.model.layer} layer", style="cyan")
        if count:
            text.append(f"  {count} pending (w: review)", style="bold yellow")
        if self.filter_text:
            text.append(f"  filter: {self.filter_text}", style="magenta")
        live = self.model.rows[0].get("sessions") if self.model.rows else None
        if live:  # each live session and its conduit (the Monitor stream, or its hooks alone)
            text.append("  sessions: " + ", ".join(
                printable(f"{s['session']} {s['conduit']}" + (" (stream stopped)" if s.get("stream_stopped") else ""),
                          one_line=True) for s in live), style="green")
        self.query_one("#title", Static).update(text)

    def current_name(self) -> str | None:
        """The highlighted sensor's name."""
        table = self.query_one("#sensors", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _detail_key(self, name: str | None) -> tuple[object, ...]:
        """What the detail and fields of sensor `name` show: its row, its pending changes, the loaded set."""
        row = self.model.row(name) if name else None
        return (name, repr(row), [p.describe() for p in self.model.pending if p.sensor == name],
                id(self.model.sensor_set))

    def fill_detail(self) -> None:
        """The highlighted sensor's state, files and fields."""
        name = self.current_name()
        detail = self.query_one("#detail", Static)
        fields = self.query_one("#fields", DataTable)
        row = self.model.row(name) if name else None
        if name is None or row is None:
            detail.update(Text("no sensor selected", style="dim"))
            fields.clear()
            self._fields = {}
            self._detail = None  # the fields are empty: the next sensor highlighted fills them
            return
        self._detail = self._detail_key(name)
        detail.update(self._detail_text(row))
        keep = self.current_field() if self._shown_sensor == name else None
        self._shown_sensor = name
        fields.clear()
        self._fields = {}
        sensor = self.model.sensor(name)
        for field_row in self.model.fields(name):
            key = field_row.dotted
            path = field_row.path
            if path[0] == "triggers" and len(path) >= 2 and ("triggers", path[1]) not in [r.path for r in self._fields.values()]:
                self._add_trigger_row(fields, name, path[1], sensor.ir.trigger(path[1]))
            self._fields[key] = field_row
            fields.add_row(*self._field_cells(field_row), key=key)
        if keep in self._fields:
            fields.move_cursor(row=list(self._fields).index(keep))

    def _add_trigger_row(self, fields: DataTable[Any], name: str, trigger: str, declared: SensorTrigger | None) -> None:
        path = ("triggers", trigger)
        key = format_key(path)
        enabled = declared is None or declared.enabled
        # the settings editor shows the trigger as written: its `on` and `path` from the document
        definition = declared.definition if declared is not None and isinstance(declared.definition, dict) else {}
        pending = self.model.pending_for(name, (*path, "enabled"))
        on = Text(f"trigger {trigger}: {'on' if enabled else 'off'}", style="bold" if enabled else "dim")
        if pending:
            on.append("●", style="bold yellow")
        row = FieldRow(path, None, "", None, None, pending)
        self._fields[key] = row
        fields.add_row(on, Text(str(definition.get("on", "")) + " " + str(definition.get("path", "")), style="dim"),
                       "", "", key=key)

    def _field_cells(self, row: FieldRow) -> list[Any]:
        indent = "  " if row.path[0] == "triggers" else ""
        label = format_key(row.path[2:]) if row.path[0] == "triggers" and len(row.path) > 2 else row.dotted
        if row.pending is not None:
            before, after = (render(shown_value(row.path, v)) for v in (row.pending.before, row.pending.after))
            value = Text(f"{_clip(before, 25)} → {_clip(after, 30)}", style="bold yellow")
            label_text = Text(f"{indent}{label} ●", style="bold yellow")
        else:
            value = Text(_clip(render(_shown_value(row))), style="dim" if row.layer == "default" else "")
            label_text = Text(f"{indent}{label}")
        # The file's name and line: the detail's `files:` line above names each file in full.
        where = printable_path(Path(row.file).name) + (f":{row.line}" if row.line else "") if row.file else ""
        return [label_text, value, row.layer, where]

    def _detail_text(self, row: SensorRow) -> Text:
        now = self.model.clock()
        text = Text()
        # Everything shown is escaped (text.printable): a file name or a command's stderr in a status
        # message must never drive the terminal (an OSC sequence retitling it; issue 28, item 10).
        text.append(printable(row["name"]), style="bold")
        text.append(f"  {row['kind'] or '-'}  ")
        text.append(row["state"], style=STATE_STYLES.get(row["state"], "bold red"))
        if row.get("description"):
            text.append(f"  {printable(str(row['description']), one_line=True)}", style="italic")
        text.append("\n")
        sensor = self.model.sensor_set.sensors.get(row["name"])
        files = "  ".join(f"{f.layer}: {printable_path(self.model.shown(f.path))}" for f in (sensor.files if sensor else ()))
        text.append(f"files: {files or '-'}\n", style="dim")
        text.append(f"lane {row['lane']}  last poll {when(row['last_poll'], now)}  next poll "
                    f"{when(row['next_poll'], now, upcoming=True)}", style="dim")
        if not row.get("daemon_running", True):
            text.append("  (no daemon runs: `attend run`)", style="dim")
        text.append("\n")
        if row["message"] and row["state"] != "disabled":
            text.append(printable(row["message"], one_line=True) + "\n", style="red" if row["state"] != "ok" else "")
        for err in row.get("line_errors") or []:
            text.append(f"line error: {printable(str(err), one_line=True)}\n", style="red")
        if row.get("lane_note"):
            text.append(f"{printable(row['lane_note'], one_line=True)}\n", style="yellow")
        if sensor is not None and sensor.ir.kind == "mcp":
            from attend.runtime.mcp.servers import describe_mcp

            for name, said in describe_mcp(sensor.ir.mcp).items():  # explain's `mcp` lines
                text.append(f"mcp {name}: {printable(said, one_line=True)}\n", style="dim")
        for shelf in row.get("shelves") or []:
            what = "shelved" if shelf.get("trigger") is None else f"trigger {shelf['trigger']} shelved"
            text.append(f"{what} until {when(iso_time(shelf['until']), now)}"
                        + (f": {printable(shelf['reason'], one_line=True)}" if shelf.get("reason") else "") + "\n",
                        style="magenta")
        for flap in row.get("flapping") or []:
            key = f" key {flap['key']}" if flap.get("key") is not None else ""
            text.append(f"flapping: {flap['trigger']}{key}, {flap.get('held', 0)} fire(s) held\n", style="magenta")
        return text

    def current_field(self) -> str | None:
        """The highlighted field's key (a dotted path inside the sensor)."""
        fields = self.query_one("#fields", DataTable)
        if fields.row_count == 0:
            return None
        return fields.coordinate_to_cell_key(fields.cursor_coordinate).row_key.value

    # --- events ------------------------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # Textual highlights the row again after each rebuild of the list and each cursor move to the
        # same row: the detail and fields are rebuilt only for another sensor or a change in this one.
        if event.data_table.id == "sensors" and self._detail_key(self.current_name()) != self._detail:
            self.fill_detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "sensors":
            self.action_toggle_enabled()
        elif event.data_table.id == "fields":
            row = self._fields.get(str(event.row_key.value))
            if row is not None and ((row.value is None and len(row.path) == 2) or isinstance(row.value, bool)):
                self.action_toggle_enabled()
            else:
                self.action_edit()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.filter_text = event.value.strip()
            self.fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self._leave_filter()

    def on_pending_changed(self, _: PendingChanged) -> None:
        self.fill()

    # --- actions -----------------------------------------------------------------------------------

    def _in_fields(self) -> bool:
        return self.focused is self.query_one("#fields", DataTable)

    def _refused(self, refusal: SettingsRefusal) -> None:
        self.notify(self.model.shorten(refusal.message), title="refused",
                    severity="error" if refusal.code else "information", timeout=8)

    def _in_dialog(self, action: Callable[[str], object]) -> Callable[[str], object]:
        """`action` for a dialog: its refusal shown in the dialog with the tab's short paths."""

        def run(value: str) -> object:
            try:
                return action(value)
            except SettingsRefusal as refusal:
                raise SettingsRefusal(self.model.shorten(refusal.message), refusal.code) from None

        return run

    def _changed(self) -> None:
        self.fill()

    def action_toggle_enabled(self) -> None:  # not `toggle`: textual's own action (an attribute)
        name = self.current_name()
        if name is None:
            return
        path: tuple[str, ...] = ("enabled",)
        if self._in_fields():
            row = self._fields.get(self.current_field() or "")
            if row is None:
                return
            if len(row.path) == 2 and row.path[0] == "triggers":
                path = (*row.path, "enabled")
            elif isinstance(row.value, bool):
                path = row.path
            else:
                self.notify("Space turns a trigger or a true/false field on or off; use e to edit this field")
                return
        try:
            self.model.toggle(name, path)
        except SettingsRefusal as refusal:
            self._refused(refusal)
        self._changed()

    def _selected_field(self) -> tuple[str, FieldRow] | None:
        name = self.current_name()
        if name is None:
            return None
        if not self._in_fields():
            self.query_one("#fields", DataTable).focus()
            return None
        row = self._fields.get(self.current_field() or "")
        return (name, row) if row is not None else None

    def action_edit(self) -> None:
        chosen = self._selected_field()
        if chosen is None:
            return
        name, row = chosen
        if row.value is None and len(row.path) == 2 and row.path[0] == "triggers":
            self.notify("a trigger: edit its fields, or turn it on or off with Space")
            return
        pending = row.pending
        current = pending.after if pending is not None and pending.op == "set" else row.value

        def submit(value: str) -> None:
            self.model.edit(name, row.path, value)

        def done(changed: bool | None) -> None:
            if changed:
                self._changed()

        self.app.push_screen(EditForm(name, row.path, current, self._in_dialog(submit)), done)

    def action_reset(self) -> None:
        chosen = self._selected_field()
        if chosen is None:
            return
        name, row = chosen
        path = (*row.path, "enabled") if row.value is None and len(row.path) == 2 else row.path
        try:
            self.model.reset(name, path)
        except NothingToUnset as nothing:
            self.notify(nothing.message)
        except SettingsRefusal as refusal:
            self._refused(refusal)
        self._changed()

    def action_revert(self) -> None:
        name = self.current_name()
        if name is None:
            return
        if self._in_fields():
            row = self._fields.get(self.current_field() or "")
            if row is None:
                return
            path = (*row.path, "enabled") if row.value is None and len(row.path) == 2 else row.path
            dropped = self.model.revert(name, path)
        else:
            dropped = self.model.revert(name)
        if not dropped:
            self.notify("nothing pending here")
        self._changed()

    def action_review(self) -> None:
        self.app.push_screen(ReviewScreen(self.model), lambda _: self._changed())

    def action_preview(self) -> None:
        name = self.current_name()
        if name is None:
            return
        screen = PreviewScreen(name, len([p for p in self.model.pending if p.sensor == name]))
        self.app.push_screen(screen)
        self._run_preview(name, screen)

    @work(thread=True, exit_on_error=False, group="preview")
    def _run_preview(self, name: str, screen: PreviewScreen) -> None:
        try:
            report = self.model.preview(name)
        except Exception as exc:  # noqa: BLE001 - shown in the dialog, never a crash of the tab
            report = {"sensor": name, "state": "failed", "message": f"{type(exc).__name__}: {exc}",
                      "triggers": [], "fires": [], "warnings": []}
        self.app.call_from_thread(screen.show, report)

    def _managed(self, action: Callable[[], list[str]], select: str | None = None) -> None:
        lines = action()
        self.notify(self.model.shorten("\n".join(lines)), title="done", timeout=6)
        self.fill(select)

    def action_copy(self) -> None:
        name = self.current_name()
        if name is None:
            return
        self.app.push_screen(NameDialog(
            f"copy {name} to a new sensor in the {self.model.layer} layer: new name", f"{name}-copy",
            self._in_dialog(lambda new: self._managed(lambda: self.model.copy(name, new)))))

    def action_rename(self) -> None:
        name = self.current_name()
        if name is None:
            return
        self.app.push_screen(NameDialog(
            f"rename {name}'s {self.model.layer} file: new name", name,
            self._in_dialog(lambda new: self._managed(lambda: self.model.rename(name, new), select=new))))

    def action_delete(self) -> None:
        name = self.current_name()
        if name is None:
            return
        layer = self.model.layer

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self._managed(lambda: self.model.delete(name))
            except SettingsRefusal as refusal:
                self._refused(refusal)

        self.app.push_screen(ConfirmDialog(f"delete {name}'s {layer} file? (a lower layer's file, if any, "
                                           "runs again)"), answered)

    def action_probe(self) -> None:
        name = self.current_name()
        if name is None:
            return
        self.notify(f"probing {name}: calling its tool twice…", timeout=3)
        self._run_probe(name)

    @work(thread=True, exit_on_error=False, group="probe")
    def _run_probe(self, name: str) -> None:
        from attend.errors import RuntimeFailure
        from attend.runtime.mcp.probe import ProbeRefused

        try:
            run = self.model.probe(name)
        except ProbeRefused as refused:
            self.app.call_from_thread(self.notify, printable(str(refused)), title="probe", severity="error", timeout=8,
                                      markup=False)
            return
        except RuntimeFailure as failure:
            # the server's words: printable, and no markup (a `[/]` in them is text)
            self.app.call_from_thread(self.notify, printable(f"{failure.state}: {failure.message}", one_line=True),
                                      title="probe failed", severity="error", timeout=8, markup=False)
            return
        self.app.call_from_thread(self._probe_answer, run)

    def _probe_answer(self, run: Any) -> None:
        from attend.runtime.mcp.probe import CONFIRM_QUESTION

        found = printable(run.describe())  # the lost keys are the server's words
        if not run.verdict.ok:
            run_record = self.model.record_probe(run, False)
            self.app.push_screen(TextDialog(Text(found + f"\nrecorded: {run_record['sensor']} stays unprobed",
                                                 style="red"), "probe"))
            self.fill()
            return

        def answered(yes: bool | None) -> None:
            self.model.record_probe(run, bool(yes))
            outcome = (f"recorded: {run.compiled.name} may poll {run.settings.resource or run.settings.tool} on {run.server_name}" if yes
                       else f"recorded as not confirmed: {run.compiled.name} stays unprobed")
            self.notify(outcome, title="probe", timeout=8)
            self.fill()

        question = CONFIRM_QUESTION.format(server=run.server_name)
        self.app.push_screen(ConfirmDialog(f"{found}\n{question}\n\nAre they untouched?"), answered)

    def _shelf_target(self) -> str | None:
        """The highlighted sensor, or `NAME/TRIGGER` when a trigger's row is highlighted in its fields."""
        name = self.current_name()
        if name is None:
            return None
        if self._in_fields():
            row = self._fields.get(self.current_field() or "")
            if row is not None and row.path[0] == "triggers" and len(row.path) >= 2:
                return f"{name}/{row.path[1]}"
        return name

    def action_shelve(self) -> None:
        target = self._shelf_target()
        if target is None:
            return
        self.app.push_screen(InputDialog(
            f"shelve {target}: it keeps polling and keeping state but delivers nothing until the shelf "
            "expires (attend sensors shelve)\nDURATION [REASON], e.g. 2h deploy in progress", "1h",
            self._in_dialog(lambda text: self._shelved(self.model.shelve(target, text))), input_id="shelf"))

    def _shelved(self, message: str) -> None:
        self.notify(message, title="shelf", timeout=6)
        self.fill()

    def action_unshelve(self) -> None:
        target = self._shelf_target()
        if target is None:
            return
        try:
            self._shelved(self.model.unshelve(target))
        except SettingsRefusal as refusal:
            self._refused(refusal)

    def action_history(self) -> None:
        name = self.current_name()
        if name is None:
            return
        self.app.push_screen(TextDialog(Text(f"history of {name} (attend sensors history {name}), newest first\n\n",
                                             style="bold") + Text(self.model.history(name)), "history"))

    def action_layer(self) -> None:
        self.model.layer = "project" if self.model.layer == "user" else "user"
        self.notify(f"edits now write the {self.model.layer} layer"
                    + (" (as `attend settings set --project`)" if self.model.layer == "project" else ""))
        self.fill_title()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.can_focus = True
        box.focus()

    def _leave_filter(self) -> None:
        """Back to the list; the filter box stays shown (while it filters) but out of Tab's way."""
        self.query_one("#filter", Input).can_focus = False
        self.query_one("#sensors", DataTable).focus()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_escape(self) -> None:
        """Esc clears an active filter (or leaves the empty filter box); otherwise it quits, as `q` does."""
        box = self.query_one("#filter", Input)
        if self.focused is box or self.filter_text:
            box.value = ""
            box.remove_class("shown")
            self.filter_text = ""
            self.fill()
            self._leave_filter()
            return
        self.action_quit()

    def action_quit(self) -> None:
        count = len(self.model.pending)
        if not count:
            self.app.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.exit()

        self.app.push_screen(ConfirmDialog(
            f"{count} change{'s are' if count != 1 else ' is'} pending and not written. Quit and drop "
            f"{'them' if count != 1 else 'it'}?"), answered)

    def refresh_live(self) -> None:
        """Read the live state (and the files, when they changed on disk) and update the list."""
        if not self._columns_ready:
            return  # a tick before on_mount has added the columns (the app's timer can run first): the next draws
        try:
            self.model.refresh()
        except Exception as exc:  # noqa: BLE001 - a store that went away shows, the tab stays open
            self.notify(f"could not refresh: {exc}", severity="error", timeout=4)
            return
        self.redraw()

    def redraw(self) -> None:
        """Update the list from the rows the model has (the relative times move on), reading nothing."""
        if not self._columns_ready:
            return
        try:
            self.fill()
        except NoMatches:
            return  # a tick before the screen's widgets are mounted, or while the app closes: the next one draws

    def redraw_times(self) -> None:
        """Only the relative times (`12s ago`, `in 3m`) of the rows shown, each cell only when its text moved:
        what the tick between two changes does (a whole `fill` cost some 10 ms a tick)."""
        if not self._columns_ready:
            return
        try:
            table = self.query_one("#sensors", DataTable)
        except NoMatches:
            return
        now = self.model.clock()
        shown = {k.value for k in table.rows}
        for row in self._visible():
            name = row["name"]
            if name not in shown:
                continue
            for key, text in (("last", when(row["last_poll"], now)),
                              ("next", when(row["next_poll"], now, upcoming=True))):
                if table.get_cell(name, key) != text:
                    table.update_cell(name, key, text)


class KeyBar(Footer):
    """Textual's footer, composed again only when the keys it shows change.

    The footer composes its keys afresh whenever the screen's bindings may have changed: at every change
    of focus (Tab, a filter, a dialog closed), though the sensors screen shows the same keys throughout.
    Each composition mounts and styles every key again: a fifth of the CPU of a key press in the tab.
    """

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        shown = tuple((key, binding, enabled, tooltip)
                      for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items())
        if shown == self._shown:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = shown  # the footer composes these keys now; one it cannot compose yet is not kept
        super().bindings_changed(screen)


class SensorsApp(App[None]):
    """The sensors tab: `attend.tui.SensorsApp(project_dir)`.

    Args:
        project_dir: the project directory (its layer, its store scope).
        layer: the layer edits write (`user`, or `project` as `--project` chooses on the CLI).
        env: the environment (default `os.environ`).
        clock: the wall clock for `12s ago` (tests pass a fixed one).
        refresh_seconds: how often the relative times are redrawn between changes (`REFRESH_SECONDS`);
            None: never, and nothing is read on a change or a key either (snapshot tests).
    """

    CSS = CSS
    TITLE = "attend sensors"

    def __init__(
        self, project_dir: str | Path = ".", *, layer: str = "user", env: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time, refresh_seconds: float | None = REFRESH_SECONDS,
        model: SensorsModel | None = None,
    ) -> None:
        super().__init__()
        self.model = model if model is not None else SensorsModel(project_dir, layer=layer, env=env, clock=clock)
        if not self.model.rows and not self.model.sensor_set.sensors:
            self.model.reload()
        self.refresh_seconds = refresh_seconds

    def get_default_screen(self) -> Screen[Any]:
        return SensorsScreen(self.model)

    def on_unmount(self) -> None:
        self.model.close()

    def on_mount(self) -> None:
        if self.refresh_seconds:
            import asyncio

            loop = asyncio.get_running_loop()

            def changed() -> None:  # the model's watcher thread: the store or a file changed
                try:
                    loop.call_soon_threadsafe(self._refresh_live)
                except RuntimeError:
                    pass  # the app has closed its loop

            self.model.on_change = changed
            self.set_interval(self.refresh_seconds, self._tick)

    def on_key(self) -> None:
        """A key pressed: the list shows the live state at once (a change may not have been seen yet)."""
        if self.refresh_seconds:
            self._refresh_live()

    def _tick(self) -> None:
        """Between changes: redraw the relative times, or read everything when the files are not watched."""
        if not self.model.watching:
            self._refresh_live()
            return
        screen = self._sensors_screen()
        if screen is not None:
            screen.redraw_times()

    def _sensors_screen(self) -> SensorsScreen | None:
        screen = self.screen_stack[0] if self.screen_stack else None
        return screen if isinstance(screen, SensorsScreen) else None

    def _refresh_live(self) -> None:
        screen = self._sensors_screen()
        if screen is not None:
            screen.refresh_live()


