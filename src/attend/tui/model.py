"""The sensors tab's model: what `attend tui` shows and changes, over the functions the CLI calls (ADR-403 §5).

"Anything one surface can do, the other can": nothing here decides anything of its own. The list is
`attend sensors list --json`'s rows (`runtime.commands.sensor_rows`); a sensor's fields are `attend
settings list`'s effective view (`settings.resolve`); an edit is planned by `settings set|unset`'s own
`plan_sensor_set`/`plan_sensor_unset` and validated by `check_edit` (the same reasons, word for word),
then written by `apply_edit` (atomic, comments kept); copy, rename and delete are `sensors copy|rename|
delete`'s functions, the preview is `sensors poll --dry-run`'s `poll_report`, the probe `sensors probe`'s.

Decisions:
- Edits are pending until applied. Pending edits of one sensor are replayed in order over its files
  as they are on disk (`SensorFiles.with_text`), so each new edit is validated against the sensor as
  the earlier ones leave it, and the tab shows the sensor as it would be.
- Applying refuses a file whose bytes changed on disk since the tab first read it for an edit (someone
  else wrote it); that file's changes stay pending, the others are written.
- The list refreshes from the store every couple of seconds (one query); sensor files are read again
  only when the file watcher (runtime/watching/watcher.py, the daemon's own, in a thread here) saw a
  layer's `*.yaml` or config file change, or cannot watch them.
- No textual here, and trio only in the file watcher's own thread (imported by the first `reload`): the app
  imports this module, and the CLI's lint path never does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.errors import EXIT_REJECTED, EXIT_USAGE
from attend.settings.edits import SensorFiles, apply_edit, check_edit
from attend.settings.keys import Key, format_key
from attend.settings.plans import (
    NothingToUnset,
    SensorEdit,
    check_field_key,
    plan_sensor_set,
    plan_sensor_unset,
    render,
)
from attend.settings.policy import SettingsRefusal
from attend.settings.resolve import flatten, resolve, shown_document
from attend.spec.layers import layer_paths, load_set
from attend.spec.loaded import LayerPaths, MergedSensor, SensorSet

if TYPE_CHECKING:
    from attend.compiler.sensors import CompiledSensor
    from attend.runtime.mcp.probe import ProbeRun
    from attend.runtime.reports import SensorRow
    from attend.runtime.store import Store
    from attend.runtime.watching.notify import BackgroundWatcher
    from attend.settings.manage import Managed

__all__ = ["FieldRow", "Pending", "SensorsModel", "shown_path", "when"]

#: What `when` shows for a time the store does not have.
NEVER = "-"


def shown_path(path: str | Path | None, paths: LayerPaths, home: str | None = None) -> str:
    """A file as the tab shows it: shipped files by name, project files from the project, `~` for home.

    Short, and the same on every machine (the snapshot tests depend on it).
    """
    if path is None:
        return ""
    p = Path(path)
    if p.parent in (paths.shipped, paths.shipped_projection):
        return p.name  # the package's own folder: where the checkout or wheel sits says nothing
    try:
        return str(p.relative_to(paths.project_dir))
    except ValueError:
        pass
    home = home if home is not None else os.environ.get("HOME", "")
    if home:
        try:
            return "~/" + str(p.relative_to(home))
        except ValueError:
            pass
    return str(p)


def when(iso: str | None, now: float, *, upcoming: bool = False) -> str:
    """An ISO time from the store, relative to `now`: `12s ago`, `in 3m`. An `upcoming` time (a next
    poll) that has passed is `due now`, or `due 5m ago` when it passed a while ago (no daemon polls)."""
    if not iso:
        return NEVER
    try:
        delta = datetime.fromisoformat(iso).timestamp() - now
    except ValueError:
        return iso
    span = abs(delta)
    text = (f"{span:.0f}s" if span < 90 else f"{span / 60:.0f}m" if span < 5400
            else f"{span / 3600:.0f}h" if span < 172800 else f"{span / 86400:.0f}d")
    if delta > 0.5:
        return f"in {text}"
    if upcoming:
        return "due now" if span < 1.5 else f"due {text} ago"
    return f"{text} ago"


@dataclass(slots=True)
class Pending:
    """One change not yet written: `key: before → after`, the layer and file it writes.

    `op` is `set` (with `value_text`, the VALUE as typed) or `unset` (reset to the default, or to
    what a lower layer sets).
    """

    sensor: str
    path: tuple[str, ...]
    layer: str
    op: str
    value_text: str | None
    file: Path
    before: object = None
    after: object = None

    @property
    def key(self) -> Key:
        """The settings key this change sets or unsets."""
        return Key("sensor", self.path, self.sensor)

    def describe(self) -> str:
        """`key: from → to` as the review shows it."""
        after = f"{render(self.after)} (unset)" if self.op == "unset" else render(self.after)
        return f"{self.key}: {render(self.before)} → {after}"


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One field of a sensor's detail: its key path, value as written, where it comes from."""

    path: tuple[str, ...]
    value: object
    layer: str
    file: str | None
    line: int | None
    pending: Pending | None = None

    @property
    def dotted(self) -> str:
        """The key path inside the sensor, as a settings key writes it (quoted where needed)."""
        return format_key(self.path)


@dataclass(slots=True)
class Applied:
    """What `apply` did: the files written, and the changes that stay pending with the reason."""

    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class SensorsModel:
    """The sensors of one project, their live state and the tab's pending changes.

    Args:
        project_dir: the project directory (the project layer and the store's scope).
        layer: the layer edits write, `user` or `project` (as `settings set` without or with `--project`).
        env: the environment (default `os.environ`); XDG variables choose the layers and the store.
        clock: the wall clock, for `12s ago` (tests pass a fixed one).
    """

    def __init__(
        self, project_dir: str | Path, *, layer: str = "user", env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.project_dir = Path(project_dir).absolute()
        self.env = dict(os.environ if env is None else env)
        self.layer = layer
        self.clock = clock
        self.paths = layer_paths(self.project_dir, self.env)
        self.sensor_set: SensorSet = SensorSet({})
        self.rows: list[SensorRow] = []
        self.pending: list[Pending] = []
        #: Each (sensor, layer) file's bytes when the first pending change to it was made (None: no file).
        self._read: dict[tuple[str, str], bytes | None] = {}
        self._compiled: dict[str, tuple[CompiledSensor | None, str]] = {}
        #: The watcher of the layer files and the store, from the first reload.
        self._watcher: BackgroundWatcher | None = None
        #: Called from the watcher's thread when a layer file or the store changed (the app refreshes then).
        self.on_change: Callable[[], None] | None = None
        self._shown: dict[str, MergedSensor] = {}
        self._store: Store | None = None

    # --- reading -----------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read every layer again (as `attend sensors list` does) and compile each sensor once."""
        from attend.runtime.runnable import compiled_or_error, runnable

        if self._watcher is None:  # watching before the first read: no edit made after it is missed
            from attend.runtime.store import default_db_path
            from attend.runtime.watching.notify import EDIT_STEP_MS, BackgroundWatcher
            from attend.runtime.watching.targets import reload_targets, store_targets

            folders = (self.paths.shipped, self.paths.shipped_projection, self.paths.user, self.paths.project)
            self._watcher = BackgroundWatcher(
                {"files": reload_targets(folders, (self.paths.config_file, self.paths.project_config_file)),
                 "store": store_targets(default_db_path(self.paths.state_dir))},
                on_change=self._changed_on_disk, step_ms=EDIT_STEP_MS)
        self.sensor_set = load_set(self.project_dir, self.env)
        self._compiled = {name: compiled_or_error(s) if runnable(s) else (None, "")
                          for name, s in self.sensor_set.sensors.items()}
        self._shown = {}
        self.refresh_state()

    def _changed_on_disk(self, names: set[str]) -> None:
        if self.on_change is not None:
            self.on_change()

    @property
    def watching(self) -> bool:
        """Whether changes on disk are seen as they come (else the caller refreshes on its own timer)."""
        return self._watcher is not None and self._watcher.working

    def refresh(self) -> bool:
        """Reload when a sensor or config file changed on disk, then read the live state; True if reloaded."""
        if self._watcher is None or self._watcher.changed("files"):
            self.reload()
            return True
        self._watcher.changed("store")  # read below: a change up to here is seen
        self.refresh_state()
        return False

    def refresh_state(self) -> None:
        """Read every sensor's live status from the store (one query) into `rows`."""
        from attend.runtime.reports import sensor_rows
        from attend.runtime.store import open_project_store

        if self._store is None:  # kept open between refreshes (the refresh runs every couple of seconds)
            self._store = open_project_store(self.paths)
        self.rows = sensor_rows(self.sensor_set, self._store, self.project_dir, self._compiled)

    def close(self) -> None:
        """Stop watching the files and close the store the refreshes read."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def row(self, name: str) -> SensorRow | None:
        """The list row of sensor `name`."""
        return next((r for r in self.rows if r["name"] == name), None)

    def names(self) -> list[str]:
        """Every sensor's name, in list order."""
        return [r["name"] for r in self.rows]

    def shown(self, path: str | Path | None) -> str:
        """A file path as the tab shows it (see `shown_path`)."""
        return shown_path(path, self.paths, self.env.get("HOME"))

    def shorten(self, message: str) -> str:
        """A message of the CLI with the file paths in it written as the tab writes them.

        Only a path followed by `/` is shortened, so a directory a message quotes whole (the project
        in "To trust the project: ...") stays a command the user can paste.
        """
        home = self.env.get("HOME", "")
        for folder in (self.paths.shipped, self.paths.shipped_projection):
            message = message.replace(f"{folder}/", "")
        message = message.replace(f"{self.project_dir}/", "")
        return message.replace(f"{home}/", "~/") if home else message

    # --- pending edits -----------------------------------------------------------------------------

    def _replayed(self, name: str, upto: int | None = None) -> tuple[SensorFiles, MergedSensor]:
        """`name`'s files with its pending changes (the first `upto` of them) applied in memory."""
        files = SensorFiles.read(self.paths, name)
        sensor = files.build() or self.sensor_set.sensors[name]
        for change in [p for p in self.pending if p.sensor == name][:upto]:
            edit = self._plan(files, sensor, change)
            check_edit(files, change.layer, edit.text)
            files = files.with_text(change.layer, edit.text)
            sensor = files.build() or sensor
        return files, sensor

    def _plan(self, files: SensorFiles, sensor: MergedSensor, change: Pending) -> SensorEdit:
        if change.op == "set":
            check_field_key(change.key, sensor)
            return plan_sensor_set(files, sensor, change.key, change.value_text or "", change.layer)
        return plan_sensor_unset(files, sensor, change.key, change.layer)

    def sensor(self, name: str) -> MergedSensor:
        """Sensor `name` as its pending changes would leave it (as loaded, when it has none)."""
        if not any(p.sensor == name for p in self.pending):
            return self.sensor_set.sensors[name]
        if name not in self._shown:
            try:
                self._shown[name] = self._replayed(name)[1]
            except SettingsRefusal:
                # A file changed under a pending edit so that it no longer applies: show the files as
                # they are; `apply` refuses that file and says so.
                self._shown[name] = self.sensor_set.sensors[name]
        return self._shown[name]

    def fields(self, name: str) -> list[FieldRow]:
        """Every field of sensor `name` with its value as written, layer and file (`settings list`'s view)."""
        sensor = self.sensor(name)
        marks = {p.path: p for p in self.pending if p.sensor == name}
        rows = []
        for path, _ in flatten(shown_document(sensor)):
            res = resolve(Key("sensor", path, name), sensor)
            rows.append(FieldRow(path, res.value, res.layer, res.file, res.line, marks.get(path)))
        return rows

    def _record(self, change: Pending) -> Pending:
        """Validate `change` after the sensor's other pending changes, then keep it (replacing one of the
        same key). Raises `SettingsRefusal` with `settings set|unset`'s own reason."""
        others = [p for p in self.pending if not (p.sensor == change.sensor and p.path == change.path)]
        kept, self.pending = self.pending, others
        try:
            files, sensor = self._replayed(change.sensor)
            before = resolve(change.key, self.sensor_set.sensors[change.sensor]).value
            edit = self._plan(files, sensor, change)
            after_sensor = check_edit(files, change.layer, edit.text)
        except SettingsRefusal as refusal:
            self.pending = kept
            # the CLI's reason, but the tab writes nothing until `apply`: what it did not do is keep it
            raise SettingsRefusal(refusal.message.replace("nothing was written", "nothing was kept"),
                                  refusal.code) from None
        change.file = edit.path
        change.before = before
        change.after = edit.value if change.op == "set" else (
            resolve(change.key, after_sensor).value if after_sensor is not None else None)
        self._read.setdefault((change.sensor, change.layer), _bytes(edit.path))
        if change.op == "set" and render(change.before) == render(change.after):
            return change  # the value it already has: nothing to apply, nothing pending
        self.pending.append(change)
        # the sensor as its pending changes leave it: the replay just made, not another one on the next key
        self._shown[change.sensor] = after_sensor if after_sensor is not None else sensor
        return change

    def edit(self, name: str, path: tuple[str, ...], value_text: str) -> Pending:
        """A pending `settings set attend.sensors.NAME.PATH VALUE` (validated now, written by `apply`)."""
        self._require(name)
        return self._record(Pending(name, tuple(path), self.layer, "set", value_text, Path()))

    def reset(self, name: str, path: tuple[str, ...]) -> Pending:
        """A pending `settings unset` of the key in the tab's layer: back to the default or a lower layer.

        Raises:
            NothingToUnset: the layer does not set the key (nothing to do).
            SettingsRefusal: `unset`'s refusal.
        """
        self._require(name)
        return self._record(Pending(name, tuple(path), self.layer, "unset", None, Path()))

    def toggle(self, name: str, path: tuple[str, ...] = ("enabled",)) -> Pending | None:
        """Flip a boolean field (a sensor's or trigger's `enabled`); toggling back drops the pending change."""
        current = self.pending_for(name, path)
        if current is not None and current.op == "set":
            self.revert(name, path)
            return None
        value = resolve(Key("sensor", path, name), self.sensor(name)).value
        on = True if value is None else bool(value)
        return self.edit(name, path, "false" if on else "true")

    def pending_for(self, name: str, path: tuple[str, ...]) -> Pending | None:
        """The pending change of this key, if any."""
        return next((p for p in self.pending if p.sensor == name and p.path == tuple(path)), None)

    def revert(self, name: str, path: tuple[str, ...] | None = None) -> int:
        """Drop the pending change of one key (or, with `path` None, all of the sensor's); how many went."""
        kept = [p for p in self.pending if not (p.sensor == name and (path is None or p.path == tuple(path)))]
        dropped = len(self.pending) - len(kept)
        self.pending = kept
        self._shown.pop(name, None)
        for key in [k for k in self._read if not any((p.sensor, p.layer) == k for p in kept)]:
            del self._read[key]
        return dropped

    def _require(self, name: str) -> None:
        if name not in self.sensor_set.sensors:
            raise SettingsRefusal(f"no sensor named {name!r}", EXIT_USAGE)

    def apply(self) -> Applied:
        """Write every pending change through `apply_edit`, one file at a time.

        A file whose bytes changed since the tab read it is refused (its changes stay pending), as is a
        change the settings code refuses now (a trust decision taken since, say); the rest are written.
        """
        done = Applied()
        groups: dict[tuple[str, str], list[Pending]] = {}
        for change in self.pending:
            groups.setdefault((change.sensor, change.layer), []).append(change)
        for (name, layer), changes in groups.items():
            path = changes[0].file
            if _bytes(path) != self._read.get((name, layer)):
                done.refused.append(f"{self.shown(path)} changed on disk since it was read; its changes are "
                                    "still pending: revert them (u) and edit again")
                continue
            try:
                files = SensorFiles.read(self.paths, name)
                sensor = files.build() or self.sensor_set.sensors[name]
                text: str | None = None
                for change in changes:
                    edit = self._plan(files, sensor, change)
                    files = files.with_text(layer, edit.text)
                    sensor = files.build() or sensor
                    text = edit.text
                apply_edit(SensorFiles.read(self.paths, name), layer, text)
            except NothingToUnset as nothing:
                done.refused.append(nothing.message)
                continue
            except SettingsRefusal as refusal:
                done.refused.append(refusal.message)
                continue
            done.written.extend(f"{c.describe()}  ({layer}: {self.shown(path)})" for c in changes)
            self.pending = [p for p in self.pending if p not in changes]
            self._read.pop((name, layer), None)
        self.reload()
        return done

    # --- actions -----------------------------------------------------------------------------------

    def preview(self, name: str) -> dict[str, Any]:
        """A dry-run poll of `name` as its pending changes leave it: each trigger's verdict, nothing written.

        Blocking (it runs the poll with trio): the app calls it from a worker thread.
        """
        from attend.runtime.reports import poll_report
        from attend.runtime.runnable import compiled_or_error, first_error, runnable

        sensor = self.sensor(name)
        if not runnable(sensor):
            return {"sensor": name, "state": sensor.status, "message": first_error(sensor), "triggers": [],
                    "fires": [], "warnings": []}
        compiled, error = compiled_or_error(sensor)
        if compiled is None:
            return {"sensor": name, "state": "invalid", "message": error, "triggers": [], "fires": [],
                    "warnings": []}
        return poll_report(compiled, self.paths, self.project_dir, self.env, dry_run=True)

    def copy(self, name: str, new: str) -> list[str]:
        """`attend sensors copy NAME NEW` into the tab's layer; its messages."""
        from attend.settings.manage import copy_sensor

        return self._managed(copy_sensor(self.project_dir, name, new, self.layer))

    def rename(self, name: str, new: str) -> list[str]:
        """`attend sensors rename NAME NEW` in the tab's layer; its messages."""
        from attend.settings.manage import rename_sensor

        self._refuse_pending(name, "renaming")
        return self._managed(rename_sensor(self.project_dir, name, new, self.layer))

    def delete(self, name: str) -> list[str]:
        """`attend sensors delete NAME` in the tab's layer; its messages."""
        from attend.settings.manage import delete_sensor

        self._refuse_pending(name, "deleting")
        return self._managed(delete_sensor(self.project_dir, name, self.layer))

    def _refuse_pending(self, name: str, doing: str) -> None:
        if any(p.sensor == name for p in self.pending):
            raise SettingsRefusal(f"{name} has pending changes: apply (w, a) or revert (u) them before {doing} it",
                                  EXIT_REJECTED)

    def _managed(self, done: Managed) -> list[str]:
        self.reload()
        return [*done.lines, *done.notes]

    def probe(self, name: str) -> ProbeRun:
        """The two back-to-back tool calls of `sensors probe NAME` and their comparison (not recorded).

        Blocking (trio, the MCP server): the app calls it from a worker thread.

        Raises:
            ProbeRefused: not an mcp sensor, or not runnable.
            RuntimeFailure: the tool could not be called.
        """
        import trio

        from attend.runtime.kinds.mcp import probe_calls
        from attend.runtime.mcp.probe import probe_target
        from attend.runtime.store import open_project_store

        compiled, paths = probe_target(self.project_dir, name, self.env)
        with open_project_store(paths) as store:
            return trio.run(probe_calls, compiled, paths, self.env, self.project_dir, store)

    def record_probe(self, run: ProbeRun, confirmed: bool) -> dict[str, Any]:
        """Write the probe record with the operator's answer (as `sensors probe` does after its prompt)."""
        from attend.runtime.store import open_project_store

        with open_project_store(self.paths) as store:
            record = run.record(store, confirmed)
        self.refresh_state()
        return record

    def shelve(self, target: str, text: str) -> str:
        """`attend sensors shelve TARGET --for DURATION --reason REASON` from `DURATION [REASON]`.

        Raises:
            SettingsRefusal: the shelve command's refusal (a bad duration, an unknown trigger).
        """
        from attend.runtime.noise.shelving import ShelfRefused, shelve_target

        duration, _, reason = text.strip().partition(" ")
        try:
            shelf = shelve_target(self.project_dir, target, duration, reason.strip())
        except ShelfRefused as refused:
            raise SettingsRefusal(refused.message, refused.code) from None
        self.refresh_state()
        return f"shelved {shelf.target} for {duration}" + (f": {shelf.reason}" if shelf.reason else "")

    def unshelve(self, target: str) -> str:
        """`attend sensors unshelve TARGET`.

        Raises:
            SettingsRefusal: nothing shelved there, or an unknown trigger.
        """
        from attend.runtime.noise.shelving import ShelfRefused, unshelve_target

        try:
            shown = unshelve_target(self.project_dir, target)
        except ShelfRefused as refused:
            raise SettingsRefusal(refused.message, refused.code) from None
        self.refresh_state()
        return f"unshelved {shown}"

    def history(self, name: str, limit: int = 10) -> str:
        """`attend sensors history NAME --limit LIMIT` as text: shelves, flapping keys, the last polls."""
        from attend.runtime.noise.history import render_history
        from attend.runtime.noise.query import sensor_noise

        if self._store is None:
            self.refresh_state()
        assert self._store is not None  # refresh_state opened it
        return render_history(sensor_noise(self._store, name, limit=limit))

    def pending_files(self) -> Iterator[tuple[str, str, Path]]:
        """Each (sensor, layer, file) a pending change writes, once."""
        seen = set()
        for p in self.pending:
            if (p.sensor, p.layer) not in seen:
                seen.add((p.sensor, p.layer))
                yield p.sensor, p.layer, p.file


def _bytes(path: Path) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None
