"""The sensors tab's dialogs and screens: edit form, confirmation, name entry, review, preview, keys.

Each dialog calls the model (the CLI's own functions) and shows a refusal in place, with the reason
the CLI would print, so the user corrects the value without losing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Static

from attend.settings.plans import render
from attend.settings.policy import SettingsRefusal
from attend.spec.schema import describe
from attend.text import printable
from attend.tui.bindings import KEYS

if TYPE_CHECKING:
    from attend.tui.model import SensorsModel

__all__ = [
    "ConfirmDialog", "EditForm", "HelpScreen", "InputDialog", "NameDialog", "PendingChanged", "PreviewScreen",
    "ReviewScreen", "TextDialog", "steady_cursor",
]


class PendingChanged(Message):
    """The pending changes changed outside the main screen (applied or reverted in the review)."""


def steady_cursor(screen: Screen[Any]) -> None:
    """No blinking cursor when headless (tests, screenshots): a blink would make each screenshot differ."""
    if screen.app.is_headless:
        for box in screen.query(Input):
            box.cursor_blink = False


class InputDialog(ModalScreen[bool]):
    """One value to enter; Enter hands it to `submit`, whose refusal shows in place (the form stays open)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, heading: str, initial: str, submit: Callable[[str], Any], *, input_id: str = "value",
                 hint: str = "Enter: go   Esc: cancel") -> None:
        super().__init__()
        self.heading = heading
        self.initial = initial
        self.submit = submit
        self.input_id = input_id
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.heading), id="form-help")  # Text: `[REASON]` is not markup
            yield Input(value=self.initial, id=self.input_id)
            yield Static("", id="error")
            yield Static(self.hint, classes="hint")

    def on_mount(self) -> None:
        steady_cursor(self)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.submit(event.value.strip())
        except SettingsRefusal as refusal:
            self.query_one("#error", Static).update(Text(refusal.message, style="bold red"))
            return
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class EditForm(InputDialog):
    """Edit one field: its description, type, allowed values and default; Enter keeps a pending change."""

    def __init__(self, sensor: str, path: tuple[str, ...], current: object, submit: Callable[[str], object]) -> None:
        from attend.settings.keys import format_key

        lines = [f"attend.sensors.{sensor}.{format_key(path)}"]
        doc = describe(path)
        if doc is not None:
            lines.append(doc.description)
            extra = f"type: {doc.type}"
            if doc.allowed:
                extra += f"; allowed: {', '.join(str(a) for a in doc.allowed)}"
            if doc.default is not None:
                extra += f"; default: {render(doc.default)}"
            lines.append(extra)
        super().__init__("\n".join(lines), "" if current is None else render(current), submit,
                         hint="Enter: keep as a pending change   Esc: cancel")


class NameDialog(InputDialog):
    """Ask for a sensor name (copy, rename); the action's refusal shows in place."""

    def __init__(self, title: str, initial: str, submit: Callable[[str], Any]) -> None:
        super().__init__(title, initial, submit, input_id="name")


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question: `y` answers yes; `n` or Esc no."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n", "answer(False)", "No"),
                Binding("escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.question), id="question")
            yield Static("y: yes   n / Esc: no", classes="hint")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class TextDialog(ModalScreen[None]):
    """Some text (a probe's verdict, a message); any of Esc, Enter or q closes it."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close")]

    def __init__(self, text: str | RenderableType, dialog_id: str = "text") -> None:
        super().__init__()
        self.text = text
        self.dialog_id = dialog_id

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Text(self.text) if isinstance(self.text, str) else self.text, id=self.dialog_id)
            yield Static("Esc: close", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(TextDialog):
    """`?`: every key of the tab."""

    def __init__(self) -> None:
        from rich.console import Group
        from rich.table import Table  # rich is loaded with textual already

        # a grid, so a description that wraps goes on under its own column
        grid = Table.grid(padding=(0, 2, 0, 0))
        grid.add_column(no_wrap=True, style="bold cyan")
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column()
        for keys, place, what in KEYS:
            grid.add_row(keys, place, what)
        super().__init__(Group(Text("Keys of the sensors tab\n", style="bold"), grid), "help")


class PreviewScreen(TextDialog):
    """`p`: the dry-run poll of a sensor as its pending changes leave it; filled in when the poll ends."""

    def __init__(self, sensor: str, pending: int) -> None:
        self.sensor = sensor
        self.pending = pending
        super().__init__(Text(f"dry run of {sensor}: polling…"), "preview")

    def show(self, report: dict[str, Any]) -> None:
        """Show the poll's report (`attend sensors poll --dry-run --json`'s data)."""
        self.query_one("#preview", Static).update(preview_text(report, self.pending))


def preview_text(report: dict[str, Any], pending: int) -> Text:
    """A dry-run report as the preview shows it: state, each trigger's verdict, the fires (what came from the
    sensor printable and redacted, as `sensors poll` shows it)."""
    changes = f"with {pending} pending change{'s' if pending != 1 else ''}" if pending else "as it is"
    text = Text()
    text.append(f"dry run of {report['sensor']} {changes}: nothing written, no state touched\n\n", style="bold")
    ok = report["state"] == "ok"
    text.append(f"poll: {report['state']}", style="green" if ok else "bold red")
    if report.get("seconds") is not None and ok:
        text.append(f"  ({report['seconds']:.2f} s)", style="dim")
    text.append("\n")
    if report.get("message"):
        text.append(f"  {printable(report['message'], one_line=True)}\n", style="" if ok else "red")
    for verdict in report.get("triggers", []):
        text.append(f"trigger {verdict.get('trigger')}: ", style="bold")
        text.append(f"{verdict.get('transition', '')}\n")
    fires = report.get("fires", [])
    if ok:
        text.append(f"\nwould fire {len(fires)}:\n" if fires else "\nwould fire nothing\n",
                    style="bold yellow" if fires else "dim")
    for fire in fires:
        text.append(f"  {printable(str(fire['description']), one_line=True)}  (trigger {fire['trigger']}, "
                    f"magnitude {fire['magnitude']:g})\n")
    for warning in report.get("warnings", []):
        text.append(f"  warning: {printable(warning, one_line=True)}\n", style="yellow")
    return text


class ReviewScreen(ModalScreen[None]):
    """`w`: every pending change `key: from → to` with the layer and file it writes; `a` applies them."""

    BINDINGS = [Binding("a", "apply", "Apply"), Binding("u", "revert", "Revert"),
                Binding("escape", "back", "Back")]

    def __init__(self, model: SensorsModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        with Vertical(id="review-box"):
            yield Static("", id="review-title")
            table: DataTable[Any] = DataTable(id="review", cursor_type="row", zebra_stripes=True)
            yield table
            yield Static("", id="review-result")
            yield Static("a: apply all   u: revert the selected change   Esc: back", classes="hint")

    def on_mount(self) -> None:
        table = self.query_one("#review", DataTable)
        table.add_columns("change", "layer", "file")
        self.fill()

    def fill(self) -> None:
        """Show the model's pending changes."""
        table = self.query_one("#review", DataTable)
        table.clear()
        for i, change in enumerate(self.model.pending):
            table.add_row(change.describe(), change.layer, self.model.shown(change.file), key=str(i))
        count = len(self.model.pending)
        title = (f"{count} pending change{'s' if count != 1 else ''}: nothing is written until you apply"
                 if count else "no pending changes")
        self.query_one("#review-title", Static).update(Text(title, style="bold"))

    def action_apply(self) -> None:
        if not self.model.pending:
            return
        done = self.model.apply()
        text = Text()
        for line in done.written:
            text.append(f"written: {line}\n", style="green")
        for line in done.refused:
            text.append(f"refused: {self.model.shorten(line)}\n", style="bold red")
        self.query_one("#review-result", Static).update(text)
        self.fill()
        self.app.post_message(PendingChanged())

    def action_revert(self) -> None:
        table = self.query_one("#review", DataTable)
        if not self.model.pending or table.row_count == 0:
            return
        change = self.model.pending[table.cursor_row]
        self.model.revert(change.sensor, change.path)
        self.fill()
        self.app.post_message(PendingChanged())

    def action_back(self) -> None:
        self.dismiss(None)

