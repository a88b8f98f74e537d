"""`wake_on`: a change to a watched path polls the sensor at once (DESIGN.md, Spec v1: `wake_on`).

Decisions:
- One watcher for the whole daemon (runtime/watching/watcher.py, the one file watcher): every
  sensor's patterns are resolved to folders (targets.py, no trio: `explain` shows them) and watched
  together; `WakeHub` is that watcher with the sensors' patterns.
- Debounce: a wake never polls sooner than `min_interval` after the sensor's last poll, and a burst
  of changes inside that gap is one poll (`WakeSignal`, read by `cadence.poll_on_cadence`). A change
  during a poll polls once more afterwards, since the poll may have read the state before it.
- Crate sensors declare their own paths with an optional ``wake_on(focus)`` method (git: HEAD, index,
  refs and packed-refs of the repository, worktrees resolved); they are asked again after every poll,
  so a repository created after the daemon started is watched from its first poll on. A polled command
  whose argv names `{branch}` wakes on the repository's HEAD (`process.branch_wake_on`): a switch polls it.
- Watching is an accelerator: a pattern whose folder cannot be watched (a permission error inside
  `/proc`, a folder replaced while it is walked, no inotify watches left) leaves its sensor on its
  `interval`; the daemon logs why once, records it in the sensor's status (`wake_error`, shown by
  `attend sensors`), and tries again later. Nothing else changes: the daemon never stops for it.
- A project file's pattern is checked inside the project after symlinks are resolved
  (`targets.inside_project`): `escape/**` with `escape → /outside` is refused like `../**`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from attend.runtime.watching.targets import (
    PROJECT_OUTSIDE,
    inside_project,
    watch_target,
)
from attend.runtime.watching.watcher import WakeSignal, Watcher

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.runtime.kinds import PollContext

__all__ = ["WakeHub", "WakeSignal", "declared_wake_on"]


def declared_wake_on(compiled: CompiledSensor, ctx: PollContext) -> tuple[list[str], list[str]]:
    """Every `wake_on` entry of a running sensor, and those refused: its file's, then its crate object's.

    A crate sensor declares paths with an optional ``wake_on(focus)`` method on its object; the
    object exists once the sensor has polled, so the daemon asks again after each poll. Entries a
    project file set that point outside the project are refused (`PROJECT_OUTSIDE`).
    """
    entries = list(compiled.sensor.ir.wake_on)
    refused: list[str] = []
    origin = compiled.sensor.origin("wake_on")
    if origin is not None and origin.layer == "project":
        home = ctx.env.get("HOME")
        refused = [p for p in entries if not inside_project(watch_target(p, ctx.project_dir, home=home), ctx.project_dir)]
        entries = [p for p in entries if p not in refused]
    if compiled.kind == "command":
        from attend.runtime.kinds.process import branch_wake_on

        entries += branch_wake_on(compiled.sensor.ir, ctx.project_dir)  # `{branch}` in argv: HEAD
    if compiled.kind == "crate":
        instance = ctx.crate_instances.get(ctx.state_key(compiled.name))
        declare = getattr(getattr(instance, "sensor", None), "wake_on", None)
        if callable(declare):
            from attend.sensors.base import focus_from_env

            try:
                entries += [str(p) for p in declare(focus_from_env(ctx.project_dir, ctx.env, session=ctx.session))]
            except Exception:  # noqa: BLE001 - a broken declaration leaves the sensor on its interval
                pass
    return entries, refused


class WakeHub(Watcher):
    """The daemon's wake watcher: sensors register their patterns; a change sets their `WakeSignal`.

    Args:
        project_dir: what relative patterns are relative to.
        env: the daemon's environment (`HOME` expands `~`).
        log: one line of the daemon's log.
        on_error: (sensor, why its wake_on is not watched) as it changes; "" once it is watched again.
    """

    def __init__(self, project_dir: Path, env: Mapping[str, str], log: Callable[[str], None],
                 on_error: Callable[[str, str], None] | None = None) -> None:
        super().__init__(log, on_error, label="wake_on")
        self.project_dir = Path(project_dir)
        self.home = env.get("HOME")
        self._patterns: dict[str, tuple[str, ...]] = {}

    def update(self, name: str, patterns: Iterable[str]) -> None:
        """Set what sensor `name` wakes on (no change, no re-plan)."""
        patterns = tuple(dict.fromkeys(patterns))
        if self._patterns.get(name, ()) == patterns:
            return
        self._patterns[name] = patterns
        self.watch(name, [watch_target(p, self.project_dir, home=self.home) for p in patterns])

    def declare(self, compiled: CompiledSensor, ctx: PollContext) -> None:
        """Watch what a running sensor declares (`declared_wake_on`); a refused entry is logged once."""
        entries, refused = declared_wake_on(compiled, ctx)
        for pattern in refused:
            self._log_once(f"sensor {compiled.name}: wake_on {pattern} not watched: {PROJECT_OUTSIDE}")
        self.update(compiled.name, entries)

    def forget(self, name: str) -> None:
        """Sensor `name` stopped: stop watching for it."""
        self.update(name, ())
        self._patterns.pop(name, None)
        self.signals.pop(name, None)
