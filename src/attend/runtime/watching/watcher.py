"""The one file watcher (DESIGN.md, Layout: one file watcher, watchfiles): hot reload, `wake_on` and the
sensors tab all watch through `Watcher`.

Decisions:
- `watchfiles` (the Rust `notify` crate: inotify on Linux) does the watching; where inotify is
  unavailable (no instances or watches left, a kernel without it) the same folders are watched by
  watchfiles' polling (`force_polling`), every `POLL_DELAY_MS`, and the log says so once (the names
  still wake, about `POLL_DELAY_MS` later). `Watcher(backend=...)` hands `open_watch` another backend
  than watchfiles' `RustNotify` (a test fails inotify there).
- Callers name what they watch (a sensor, the reload) and give `WatchTarget`s (targets.py decides
  which folder, how deep, and the glob a change must match). One `Watcher` watches every name's
  folders in at most two watchfiles watchers, one flat and one recursive: 200 sensors and 50 watched
  paths cost two idle threads, not 250 (see benchmarks/bench_wake.py). watchfiles' default filter is
  off, since it drops everything under `.git`.
- A change sets the `WakeSignal` of every name whose glob it matches. A folder made or removed
  between two plans sends no event: an idle watcher checks every `RECHECK_MS` that the planned
  folders still are as planned, and plans again when not; the names a newly made folder concerns are
  woken again once the new plan watches, so a file written in the gap is not missed.
- Watching is an accelerator and never stops its caller: a watcher that cannot start or stops
  working (a permission error deep in `/proc`, a folder replaced while it is walked, no watches
  left) is split into one watcher per folder, so one bad folder costs only the names that need it.
  Those names get an error (`errors`, reported through `on_error`: the daemon stores it in the
  sensor's status and `attend sensors` shows it); the sensor keeps its `interval`. The failed
  folders are tried again after `RETRY_DELAY`, doubled after each failure in a row up to `RETRY_LIMIT`
  (`cadence.backoff`, the runtime's one exponential backoff).
- The watchfiles primitives (`open_watch`, `WatchFailed`, the timings) and `BackgroundWatcher`, the same
  watching for callers without trio (the sensors tab), are in notify.py, which imports no trio.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import trio

from attend.errors import reason
from attend.runtime.cadence import backoff
from attend.runtime.watching.notify import (
    EDIT_STEP_MS,
    POLL_DELAY_MS,
    RECHECK_MS,
    RETRY_DELAY,
    RETRY_LIMIT,
    WATCH_DEBOUNCE_MS,
    WATCH_STEP_MS,
    BackgroundWatcher,
    WatchFailed,
    open_watch,
)
from attend.runtime.watching.targets import WatchPlan, WatchTarget, plan_watches

__all__ = [
    "EDIT_STEP_MS",
    "POLL_DELAY_MS",
    "RECHECK_MS",
    "WATCH_DEBOUNCE_MS",
    "WATCH_STEP_MS",
    "BackgroundWatcher",
    "WakeSignal",
    "WatchFailed",
    "Watcher",
    "open_watch",
]

async def _watch_folders(
    folders: list[Path], recursive: bool, on_changes: Callable[[set[str] | None], None],
    started: Callable[[str], None], backend: Any = None, step_ms: int = WATCH_STEP_MS,
) -> None:
    """Watch `folders` until cancelled: `on_changes(paths)` for each burst, `on_changes(None)` when idle
    for `RECHECK_MS`. `started(why_it_polls)` once watching ("" with inotify).

    Raises:
        WatchFailed: the watcher could not start or stopped working.
    """
    stop = threading.Event()
    try:
        # Starting walks the folders (a recursive watch adds one inotify watch per folder): a thread.
        notify, polls = await trio.to_thread.run_sync(
            partial(open_watch, folders, recursive=recursive, backend=backend), abandon_on_cancel=True)
        started(polls)
        while True:
            # The thread waits at most one step after `stop` is set, so a cancellation abandons it
            # and it ends on its own (the watcher is closed when it is collected).
            try:
                result = await trio.to_thread.run_sync(
                    notify.watch, WATCH_DEBOUNCE_MS, step_ms, RECHECK_MS, stop, abandon_on_cancel=True)
            except Exception as exc:  # noqa: BLE001 - watchfiles' errors while watching: "not watching"
                raise WatchFailed(reason(exc)) from None
            if isinstance(result, set):
                on_changes({path for _, path in result})
            else:
                on_changes(None)
    finally:
        stop.set()


class WakeSignal:
    """A name's "something it watches changed" flag, set by the watcher and read by its waiter.

    `woken_at` is when the changes the last `clear` took in were first seen (trio's clock), None when it
    took in none: a poll's history says how long after a change it ran (daemon.py).
    """

    def __init__(self) -> None:
        self._event = trio.Event()
        self._since: float | None = None
        self.woken_at: float | None = None

    def set(self, *, seen: bool = True) -> None:
        """Mark a change; `seen=False` asks for a poll without one having been seen (a watch that just started
        may have missed one), which `woken_at` does not count."""
        if seen and self._since is None:
            self._since = trio.current_time()
        self._event.set()

    def clear(self) -> None:
        """Forget the changes seen so far (called as a poll or reload starts: it sees them)."""
        self.woken_at = self._since
        self._since = None
        if self._event.is_set():
            self._event = trio.Event()

    def is_set(self) -> bool:
        """True when a change came after the last `clear`."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once a change came after the last `clear` (at once if one already did)."""
        await self._event.wait()


class Watcher:
    """Watches the targets of every name; a change sets the names' `WakeSignal`s (see the module docstring).

    Args:
        log: one line of the caller's log (each distinct failure is logged once).
        on_error: called with (name, error) when a name's watch fails, and (name, "") when it works again.
        label: what the log lines start with (`wake_on`, `hot reload`).
        backend: watchfiles' `RustNotify` (None), or a class with its signature (`open_watch`).
        step_ms: how often watchfiles looks (`WATCH_STEP_MS`; the hot reload's is `EDIT_STEP_MS`).
    """

    def __init__(self, log: Callable[[str], None], on_error: Callable[[str, str], None] | None = None,
                 *, label: str = "watch", backend: Any = None, step_ms: int = WATCH_STEP_MS) -> None:
        self.log = log
        self.backend = backend
        self.step_ms = step_ms
        self.label = label
        self.on_error = on_error
        self.signals: dict[str, WakeSignal] = {}
        #: name → why its watch does not work (absent: it works, or it watches nothing)
        self.errors: dict[str, str] = {}
        #: Bursts of changes handled so far (a test waits for it to prove a change woke nobody).
        self.bursts = 0
        self.plan = WatchPlan()
        self._targets: dict[str, tuple[WatchTarget, ...]] = {}
        self._changed = trio.Event()
        self._ready = trio.Event()
        self._ready.set()  # no plan yet: nothing to wait for
        self._logged: set[str] = set()
        self._failures: dict[tuple[tuple[Path, ...], bool], int] = {}
        #: names woken once a plan that watches them is ready: a folder of theirs appeared or was replaced, or
        #: they polled before their watch started (`wake_when_watched`)
        self._rewake: set[str] = set()

    def signal(self, name: str) -> WakeSignal:
        """The signal of `name` (made on first use)."""
        return self.signals.setdefault(name, WakeSignal())

    def watch(self, name: str, targets: Iterable[WatchTarget]) -> None:
        """Set what `name` watches (no change, no re-plan); no targets stops watching for it."""
        targets = tuple(dict.fromkeys(targets))
        if self._targets.get(name, ()) == targets:
            return
        if targets:
            self._targets[name] = targets
        else:
            self._targets.pop(name, None)
            self._set_error(name, "")
        self._changed.set()

    def wake_when_watched(self, name: str) -> None:
        """Wake `name` once a plan that watches its targets has started (not when the running plan already
        does): what changed before its watch began (while its first poll ran) is then seen by the poll that
        follows."""
        targets = self._targets.get(name)
        if not targets:
            return
        if self._ready.is_set() and not self._changed.is_set() and self.plan.targets.get(name) == targets:
            return  # watched already
        self._rewake.add(name)

    async def watching(self) -> None:
        """Return once every watcher of the current plan has started (or failed)."""
        while True:
            ready = self._ready
            await ready.wait()
            if ready is self._ready and not self._changed.is_set():
                return
            await trio.sleep(0.01)  # a re-plan is on its way: wait for its watchers

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Watch until cancelled, planning again whenever the targets or the folders change; started once the
        first plan is made (what exists then is what it watches)."""
        starting = True
        while True:
            self._changed = trio.Event()
            done, self._ready = self._ready, trio.Event()
            done.set()  # a `watching()` of an earlier plan looks at this one
            # planning walks every recursive base (links are not followed: targets.py): off the event loop
            self.plan = plan = await trio.to_thread.run_sync(plan_watches, dict(self._targets), abandon_on_cancel=True)
            if starting:
                starting = False
                task_status.started()
            groups = [(sorted(folders), recursive) for folders, recursive in ((plan.flat, False), (plan.recursive, True))
                      if folders]
            status: dict[tuple[Path, bool], str | None] = {}
            pending = [len(groups)]
            async with trio.open_nursery() as nursery:
                for folders, recursive in groups:
                    nursery.start_soon(self._run_group, nursery, plan, folders, recursive, status, pending)
                if not groups:
                    self._plan_ready(plan, status)
                await self._changed.wait()
                nursery.cancel_scope.cancel()

    async def _run_group(
        self, nursery: trio.Nursery, plan: WatchPlan, folders: list[Path], recursive: bool,
        status: dict[tuple[Path, bool], str | None], pending: list[int],
    ) -> None:
        """Watch one group of folders; a group that fails is split into one watcher per folder."""

        key = (tuple(folders), recursive)
        counted = False

        def settle() -> None:
            nonlocal counted
            if not counted:
                counted = True
                pending[0] -= 1
            self._update_errors(plan, status)
            if pending[0] <= 0:
                self._plan_ready(plan, status)

        def started(polls: str) -> None:
            if polls:
                self._log_once(f"{self.label}: inotify is unavailable ({polls}); polling "
                               f"{', '.join(map(str, folders))} every {POLL_DELAY_MS} ms instead")
            self._failures.pop(key, None)
            for folder in folders:
                status[(folder, recursive)] = None
            settle()

        def on_changes(changed: set[str] | None) -> None:
            if changed is None:
                self._recheck(plan)
            else:
                self.bursts += 1
                self._dispatch(plan, changed)

        try:
            await _watch_folders(folders, recursive, on_changes, started, self.backend, self.step_ms)
        except WatchFailed as exc:
            bases = plan.bases(folders)
            if len(bases) > 1 and all((f, recursive) not in status for f in folders):
                # this group's place is taken by one watcher per base (the folders a base's tree was split into
                # stay together: a tree that cannot be watched is one watcher, one error)
                pending[0] += len(bases) - 1
                for base in bases:
                    part = [f for f in folders if plan.origin.get(f, f) == base]
                    nursery.start_soon(self._run_group, nursery, plan, part, recursive, status, pending)
                return
            named = ", ".join(map(str, bases))
            for folder in folders:
                status[(folder, recursive)] = f"cannot watch {named}: {exc}"
            self._log_once(f"{self.label}: cannot watch {named}: {exc}; trying again later")
            settle()
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        await trio.sleep(backoff(RETRY_DELAY, failures - 1, factor=2, limit=RETRY_LIMIT))
        self._changed.set()  # plan again: the folders that failed may be watchable (or gone) now

    def _log_once(self, message: str) -> None:
        """One line of the caller's log, once for each distinct message."""
        if message not in self._logged:
            self._logged.add(message)
            self.log(message)

    def _plan_ready(self, plan: WatchPlan, status: dict[tuple[Path, bool], str | None]) -> None:
        self._update_errors(plan, status)
        woken = self._rewake & plan.targets.keys()
        for name in woken:
            self.signal(name).set(seen=False)  # what was seen, if anything, set the signal already
        # a name this plan does not watch yet waits for the next one; a name no longer watched is dropped
        self._rewake = (self._rewake - woken) & self._targets.keys()
        self._ready.set()

    def _update_errors(self, plan: WatchPlan, status: dict[tuple[Path, bool], str | None]) -> None:
        for name, targets in plan.targets.items():
            errors = []
            for target in targets:
                folder = plan.missing.get(target.base, target.base)
                for (watched, recursive), error in status.items():
                    # the folder itself, a tree holding it, or (a tree target) a part of its own tree
                    if error and (folder == watched or (recursive and folder.is_relative_to(watched))
                                  or (target.recursive and watched.is_relative_to(folder))):
                        errors.append(f"{target.pattern}: {error}")
            if errors:
                self._set_error(name, "; ".join(dict.fromkeys(errors)) + "; polling on interval, retrying")
            elif all(any(folder == w or (r and folder.is_relative_to(w)) for (w, r) in status)
                     for folder in (plan.missing.get(t.base, t.base) for t in targets)):
                self._set_error(name, "")

    def _set_error(self, name: str, error: str) -> None:
        if self.errors.get(name, "") == error:
            return
        if error:
            self.errors[name] = error
        else:
            self.errors.pop(name, None)
        if self.on_error is not None:
            self.on_error(name, error)

    def _recheck(self, plan: WatchPlan) -> None:
        """Plan again when the folders no longer are what the plan found: a missing base that exists
        now (its names are woken now and once the new plan watches), or a watched folder that is gone."""
        appeared = [base for base in plan.missing if base.is_dir()]
        gone = [folder for folder in plan.flat | plan.recursive if not folder.is_dir()]
        if not appeared and not gone:
            return
        for name, targets in plan.targets.items():
            if any(t.base in appeared for t in targets):
                self.signal(name).set()
                self._rewake.add(name)
        self._changed.set()

    def _dispatch(self, plan: WatchPlan, changed: set[str]) -> None:
        woken, replan = plan.woken(changed)
        for name in woken:
            signal = self.signals.get(name)
            if signal is not None:
                signal.set()
        if replan:
            self._rewake |= woken
        # A watched folder itself changed (deleted, replaced by a rename): inotify has dropped its
        # watch, so plan again, which watches the new folder or the nearest one still there.
        watched = {str(folder) for folder in plan.flat | plan.recursive}
        if replan or not watched.isdisjoint(os.path.normpath(p) for p in changed):
            self._changed.set()
