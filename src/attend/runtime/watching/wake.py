"""`wake_on`: a change to a watched path polls the sensor at once (DESIGN.md, Spec v1: `wake_on`).

Decisions:
- One watcher for the whole daemon, not one per sensor: every sensor's patterns are resolved to
  directories and watched with `watchfiles` (inotify on Linux) in at most two watchers, one flat (the
  folder of a named file, or of a `*.json` glob) and one recursive (the base of a `**` glob, or a named
  folder). 200 sensors and 50 watched paths cost two idle threads, not 250 (see benchmarks/bench_wake.py).
- What to watch for which pattern is decided in wake_targets.py (no trio: `explain` shows it).
  watchfiles' default filter is off, since it drops everything under `.git`.
- Debounce: a wake never polls sooner than `min_interval` after the sensor's last poll, and a burst
  of changes inside that gap is one poll (`WakeSignal`, read by `cadence.poll_on_cadence`). A change
  during a poll polls once more afterwards, since the poll may have read the state before it.
- Crate sensors declare their own paths with an optional ``wake_on(focus)`` method (git: HEAD, index,
  refs and packed-refs of the repository, worktrees resolved); they are asked again after every poll,
  so a repository created after the daemon started is watched from its first poll on.
- A folder made or removed between two plans sends no event to either: an idle watcher checks every
  `RECHECK_MS` that the planned folders still are as planned, and plans again when not.
- Watching is an accelerator: if a watcher cannot start (no inotify watches left, a path vanished),
  the sensor keeps its `interval` and the daemon logs why once; nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import trio

from attend.errors import reason
from attend.runtime.watching.targets import (
    PROJECT_OUTSIDE,
    WatchPlan,
    inside_project,
    plan_watches,
    watch_target,
)

__all__ = ["WATCH_STEP_MS", "WakeHub", "WakeSignal", "declared_wake_on"]

#: How often (ms) the watcher thread looks for changes; a change wakes its sensor about this late.
WATCH_STEP_MS = 50
#: How often (ms) an idle watcher checks that its folders are still the ones it watches (a folder
#: made or removed between two plans sends no event to either).
RECHECK_MS = 2_000
#: The longest (ms) a burst of changes is gathered before the sensors hear of it.
WATCH_DEBOUNCE_MS = 200
#: Seconds before a watcher that failed to start is tried again (a folder being replaced); doubled
#: after each failure in a row, up to `RETRY_LIMIT`.
RETRY_DELAY = 2.0
RETRY_LIMIT = 300.0

def declared_wake_on(compiled: Any, ctx: Any) -> tuple[list[str], list[str]]:
    """Every `wake_on` entry of a running sensor, and those refused: its file's, then its crate object's.

    A crate sensor declares paths with an optional ``wake_on(focus)`` method on its object; the
    object exists once the sensor has polled, so the daemon asks again after each poll. Entries a
    project file set that point outside the project are refused (`PROJECT_OUTSIDE`).
    """
    entries = [str(p) for p in compiled.sensor.data.get("wake_on") or []]
    refused: list[str] = []
    origin = compiled.sensor.origin("wake_on")
    if origin is not None and origin.layer == "project":
        home = ctx.env.get("HOME")
        refused = [p for p in entries if not inside_project(watch_target(p, ctx.project_dir, home=home), ctx.project_dir)]
        entries = [p for p in entries if p not in refused]
    if compiled.kind == "crate":
        instance = ctx.crate_instances.get(compiled.name)
        declare = getattr(getattr(instance, "sensor", None), "wake_on", None)
        if callable(declare):
            from attend.sensors.base import focus_from_env

            try:
                entries += [str(p) for p in declare(focus_from_env(ctx.project_dir, ctx.env))]
            except Exception:  # noqa: BLE001 - a broken declaration leaves the sensor on its interval
                pass
    return entries, refused


class WakeSignal:
    """A sensor's "something it watches changed" flag, set by the watcher and read by its poll loop."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def set(self) -> None:
        """Mark a change (the sensor's loop polls as soon as its `min_interval` allows)."""
        self._event.set()

    def clear(self) -> None:
        """Forget the changes seen so far (called as a poll starts: that poll sees them)."""
        if self._event.is_set():
            self._event = trio.Event()

    def is_set(self) -> bool:
        """True when a change came after the last `clear`."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once a change came after the last `clear` (at once if one already did)."""
        await self._event.wait()


class WakeHub:
    """The daemon's watcher: sensors register their patterns; a change sets their `WakeSignal`.

    Args:
        project_dir: what relative patterns are relative to.
        env: the daemon's environment (`HOME` expands `~`).
        log: one line of the daemon's log.
    """

    def __init__(self, project_dir: Path, env: Mapping[str, str], log: Callable[[str], None]) -> None:
        self.project_dir = Path(project_dir)
        self.home = env.get("HOME")
        self.log = log
        self.signals: dict[str, WakeSignal] = {}
        self._patterns: dict[str, tuple[str, ...]] = {}
        self._changed = trio.Event()
        self._logged: set[str] = set()
        self._failures = 0
        self.plan = WatchPlan()

    def signal(self, name: str) -> WakeSignal:
        """The signal of sensor `name` (made on first use)."""
        return self.signals.setdefault(name, WakeSignal())

    def update(self, name: str, patterns: Iterable[str]) -> None:
        """Set what sensor `name` wakes on (no change, no re-plan)."""
        patterns = tuple(dict.fromkeys(patterns))
        if self._patterns.get(name, ()) == patterns:
            return
        if patterns:
            self._patterns[name] = patterns
        else:
            self._patterns.pop(name, None)
        self._changed.set()

    def declare(self, compiled: Any, ctx: Any) -> None:
        """Watch what a running sensor declares (`declared_wake_on`); a refused entry is logged once."""
        entries, refused = declared_wake_on(compiled, ctx)
        for pattern in refused:
            message = f"sensor {compiled.name}: wake_on {pattern} not watched: {PROJECT_OUTSIDE}"
            if message not in self._logged:
                self._logged.add(message)
                self.log(message)
        self.update(compiled.name, entries)

    def forget(self, name: str) -> None:
        """Sensor `name` stopped: stop watching for it."""
        self.update(name, ())
        self.signals.pop(name, None)

    def _plan(self) -> WatchPlan:
        targets = {
            name: [watch_target(p, self.project_dir, home=self.home) for p in patterns]
            for name, patterns in self._patterns.items()
        }
        return plan_watches(targets)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Watch until cancelled, re-planning whenever a sensor's patterns change."""
        task_status.started()
        while True:
            self._changed = trio.Event()
            self.plan = plan = self._plan()
            async with trio.open_nursery() as nursery:
                for folders, recursive in ((plan.flat, False), (plan.recursive, True)):
                    if folders:
                        nursery.start_soon(self._watch, plan, sorted(folders), recursive)
                await self._changed.wait()
                nursery.cancel_scope.cancel()

    async def _watch(self, plan: WatchPlan, folders: list[Path], recursive: bool) -> None:
        import anyio
        from watchfiles import awatch

        while True:
            stop = anyio.Event()
            try:
                async with trio.open_nursery() as nursery:
                    # awatch waits in a worker thread that a cancellation cannot interrupt; setting its
                    # stop event makes the thread return within one step, so a re-plan or a shutdown
                    # never waits for the watcher's 5 s timeout.
                    nursery.start_soon(_set_when_cancelled, stop)
                    async for changes in awatch(
                        *folders, watch_filter=None, debounce=WATCH_DEBOUNCE_MS, step=WATCH_STEP_MS,
                        stop_event=stop, recursive=recursive, yield_on_timeout=True, rust_timeout=RECHECK_MS,
                    ):
                        self._failures = 0  # started: the next failure waits RETRY_DELAY again
                        if changes:
                            self._dispatch(plan, {path for _, path in changes})
                        else:
                            self._recheck(plan)
                    nursery.cancel_scope.cancel()
            except (OSError, RuntimeError) as exc:
                message = f"wake_on: cannot watch {', '.join(map(str, folders))}: {reason(exc)}; polling on interval"
                if message not in self._logged:
                    self._logged.add(message)
                    self.log(message)
            self._failures += 1
            await trio.sleep(min(RETRY_DELAY * 2 ** (self._failures - 1), RETRY_LIMIT))
            self._changed.set()  # plan again: the folders that failed may exist (or be gone) now

    def _recheck(self, plan: WatchPlan) -> None:
        """Plan again when the folders no longer are what the plan found (a change in the gap between
        two plans has no event): a missing base that exists now (its sensors are woken too), or a
        watched folder that is gone."""
        appeared = [base for base in plan.missing if base.is_dir()]
        gone = [folder for folder in plan.flat | plan.recursive if not folder.is_dir()]
        if not appeared and not gone:
            return
        for name, targets in plan.targets.items():
            if any(t.base in appeared for t in targets):
                self.signal(name).set()
        self._changed.set()

    def _dispatch(self, plan: WatchPlan, changed: set[str]) -> None:
        woken, replan = plan.woken(changed)
        for name in woken:
            signal = self.signals.get(name)
            if signal is not None:
                signal.set()
        # A watched folder itself changed (deleted, replaced by a rename): inotify has dropped its
        # watch, so plan again, which watches the new folder or the nearest one still there.
        watched = {str(folder) for folder in plan.flat | plan.recursive}
        if replan or not watched.isdisjoint(os.path.normpath(p) for p in changed):
            self._changed.set()


async def _set_when_cancelled(stop: Any) -> None:
    try:
        await trio.sleep_forever()
    finally:
        stop.set()
