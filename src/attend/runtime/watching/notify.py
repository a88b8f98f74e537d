"""watchfiles, without trio: the primitives `Watcher` (watcher.py) is built on, and `BackgroundWatcher`.

- `open_watch` starts a watchfiles watcher over some folders: inotify, or watchfiles' polling
  (`force_polling`, every `POLL_DELAY_MS`) where inotify is unavailable (and says why it polls);
  `WatchFailed` says why neither works. Its `backend` is watchfiles' `RustNotify` unless a caller hands
  another with the same signature (the seam the fallback's test fails inotify at).
- `BackgroundWatcher` watches one set of targets in a thread with watchfiles' blocking API, for the
  sensors tab, which runs no trio (and must not import it: its start-up stays light). It plans its
  folders as the daemon's watcher does (targets.py `plan_watches`), plans again when a watched folder
  is replaced or a missing one appears, and while the watch does not work it reports a change every
  time it is asked (the tab then reads everything on its own refresh tick) and tries again every
  `RETRY_DELAY` seconds. It watches several names at once (`changed(name)` says which changed), calls
  `on_change` from its thread when one did (the tab refreshes then, not on a timer), and looks every
  `step_ms` (watchfiles' loop wakes that often even while nothing changes: the cost at rest, see
  `EDIT_STEP_MS`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from attend.errors import reason
from attend.runtime.watching.targets import WatchPlan, WatchTarget, plan_watches

__all__ = [
    "EDIT_STEP_MS",
    "POLL_DELAY_MS",
    "RECHECK_MS",
    "RETRY_DELAY",
    "RETRY_LIMIT",
    "WATCH_DEBOUNCE_MS",
    "WATCH_STEP_MS",
    "BackgroundWatcher",
    "WatchFailed",
    "open_watch",
]

#: How often (ms) the daemon's `wake_on` watcher looks for changes. watchfiles hands a burst over at the first
#: step that finds nothing new, so a change reaches its sensors one to two steps late (a checkout's index, ref
#: and HEAD, written within a few ms, arrive together), and its thread wakes this often at rest: about 38 µs a
#: step on the 2-core machine, 0.2 % of a core at 20 ms (0.08 % at 50 ms, 0.39 % at 10 ms) per watching thread.
WATCH_STEP_MS = 20
#: How often (ms) a watcher of files a person edits looks: the sensors tab's, and the daemon's hot reload (a
#: sensor file saved shows within about two of them); 0.02 % of a core at rest.
EDIT_STEP_MS = 200
#: How often (ms) an idle watcher checks that its folders are still the ones it watches.
RECHECK_MS = 2_000
#: The longest (ms) a burst of changes is gathered before the names hear of it.
WATCH_DEBOUNCE_MS = 200
#: How often (ms) watchfiles' polling looks at the folders where inotify is unavailable.
POLL_DELAY_MS = 300
#: Seconds before a folder that could not be watched is tried again; doubled after each failure in a
#: row, up to `RETRY_LIMIT`.
RETRY_DELAY = 2.0
RETRY_LIMIT = 300.0


class WatchFailed(Exception):
    """A watcher that could not start or stopped working; the message says why (one line)."""


def open_watch(folders: Iterable[Path], *, recursive: bool, backend: Any = None) -> tuple[Any, str]:
    """A started watchfiles watcher over `folders`: inotify, or polling where inotify is unavailable.

    Args:
        folders: what to watch.
        recursive: each folder's whole tree, or only its own entries.
        backend: watchfiles' `RustNotify`, or a class with its signature (None: RustNotify).

    Returns:
        The watcher, and why it polls instead of using inotify ("" when it uses inotify).

    Raises:
        WatchFailed: a folder is missing or unreadable, or neither way can watch it.
    """
    if backend is None:
        from watchfiles._rust_notify import RustNotify

        backend = RustNotify

    paths = [str(f) for f in folders]
    try:
        try:
            return backend(paths, False, False, POLL_DELAY_MS, recursive, False), ""
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            raise
        except (OSError, RuntimeError) as unavailable:  # inotify itself is unavailable: the same folders, polled
            return backend(paths, False, True, POLL_DELAY_MS, recursive, False), reason(unavailable)
    except Exception as exc:  # noqa: BLE001 - watchfiles raises OSError or its RuntimeError; any is "not watching"
        raise WatchFailed(reason(exc)) from None


class BackgroundWatcher:
    """Targets watched in a thread of its own, without trio (for the sensors tab).

    `changed(name)` says whether anything of `name` changed since it was last asked; while the watch
    does not work it says True every time (the caller falls back to reading everything on its own
    interval: `working` says so).

    Args:
        targets: what to watch: targets (under `NAME`), or a mapping of name → targets.
        ready_timeout: the longest the constructor waits for the watch to start.
        on_change: called from the watcher's thread with the names that changed (never holding a lock).
        step_ms: how often watchfiles looks (`WATCH_STEP_MS`; the tab's is `EDIT_STEP_MS`).
    """

    #: The name the targets are planned under when no names are given.
    NAME = "files"

    def __init__(self, targets: Iterable[WatchTarget] | Mapping[str, Iterable[WatchTarget]], *,
                 ready_timeout: float = 10.0, on_change: Callable[[set[str]], None] | None = None,
                 step_ms: int = WATCH_STEP_MS) -> None:
        named = targets if isinstance(targets, Mapping) else {self.NAME: targets}
        self._targets = {name: tuple(found) for name, found in named.items()}
        self._on_change = on_change
        self._step_ms = step_ms
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._failed = False
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="attend-watcher", daemon=True)
        self._thread.start()
        self._ready.wait(ready_timeout)  # changes made after this returns are seen

    def _main(self) -> None:
        try:
            while not self._stop.is_set():
                plan = plan_watches(self._targets)
                groups = [(sorted(folders), recursive)
                          for folders, recursive in ((plan.flat, False), (plan.recursive, True)) if folders]
                try:
                    notifies = [open_watch(folders, recursive=recursive)[0] for folders, recursive in groups]
                except WatchFailed:
                    self._mark(failed=True)
                    self._ready.set()
                    self._stop.wait(RETRY_DELAY)
                    continue
                self._mark(failed=False)
                self._ready.set()
                self._follow(plan, notifies)
        except Exception:  # noqa: BLE001 - a watcher that died: the caller reads everything every time
            self._mark(failed=True)
        finally:
            self._ready.set()

    def _follow(self, plan: WatchPlan, notifies: list[Any]) -> None:
        """Mark changes until the plan must be made again (or the watcher is closed)."""
        watched = {str(folder) for folder in plan.flat | plan.recursive}
        timeout = max(self._step_ms, RECHECK_MS // max(1, len(notifies)))
        while not self._stop.is_set():
            for notify in notifies or [None]:
                if notify is None:  # nothing to watch yet: only look again for folders made since
                    self._stop.wait(RECHECK_MS / 1000)
                    result: Any = "timeout"
                else:
                    try:
                        result = notify.watch(WATCH_DEBOUNCE_MS, self._step_ms, timeout, self._stop)
                    except Exception:  # noqa: BLE001 - watchfiles stopped working: plan again after a pause
                        self._mark(failed=True)
                        self._stop.wait(RETRY_DELAY)
                        return
                if isinstance(result, set):
                    changed = {os.path.normpath(path) for _, path in result}
                    woken, replan = plan.woken(changed)
                    if woken:
                        self._mark(dirty=set(woken))
                    if replan or not watched.isdisjoint(changed):
                        return
                elif any(base.is_dir() for base in plan.missing) or any(
                        not folder.is_dir() for folder in plan.flat | plan.recursive):
                    self._mark(dirty=set(self._targets))  # a folder made or removed between two events
                    return

    def _mark(self, *, dirty: set[str] | None = None, failed: bool | None = None) -> None:
        with self._lock:
            if dirty:
                self._dirty |= dirty
            if failed is not None:
                self._failed = failed
        if (dirty or failed) and self._on_change is not None:
            try:
                self._on_change(set(dirty or self._targets))
            except Exception:  # noqa: BLE001 - the caller's trouble: the watch goes on
                pass

    @property
    def working(self) -> bool:
        """Whether the watch works (else `changed` says True every time, and no `on_change` comes)."""
        with self._lock:
            return not self._failed and self._thread.is_alive()

    def changed(self, name: str = NAME) -> bool:
        """True when a watched file of `name` changed since the last call (or the watch does not work)."""
        with self._lock:
            dirty = name in self._dirty
            self._dirty.discard(name)
            return dirty or self._failed or not self._thread.is_alive()

    def close(self) -> None:
        """Stop watching (the thread ends within a step)."""
        self._stop.set()
        self._thread.join(timeout=5)
