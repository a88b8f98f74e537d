"""Hot reload: a change to a layer's sensor files or config file reloads them (DESIGN.md, Layers: files are
picked up within about a second).

Decisions:
- Watched through the one file watcher (watcher.py): each layer folder flat, for `*.yaml` in it, and
  each config file by name; a folder or file that does not exist yet is watched through its nearest
  existing ancestor, so a `sensors.d` made later is picked up too.
- The reload's watcher is its own (`Watcher`), not the sensors' `wake_on` one: re-planning the
  sensors' watches never leaves a gap in which an edit to a sensor file goes unseen. It looks every
  `EDIT_STEP_MS` (200 ms), not at the wake watcher's step: a person's edit is picked up within about a
  second either way, and a slower step costs less at rest.
- No edit is missed: `watch` reports `started` only once the folders are watched, so the caller's
  first load, made after that, sees every earlier edit and the watcher every later one.
- A folder that cannot be watched is logged once and tried again (watcher.py); the sensors keep
  running on the files last loaded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import trio

from attend.runtime.watching.targets import reload_targets
from attend.runtime.watching.watcher import EDIT_STEP_MS, Watcher

__all__ = ["watch"]

#: The name the reload's targets are watched under.
RELOAD = "reload"


async def watch(
    folders: Iterable[Path],
    files: Iterable[Path],
    on_change: Callable[[], Awaitable[None]],
    *,
    log: Callable[[str], None] = lambda _line: None,
    task_status: trio.TaskStatus[Watcher] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Call `on_change` after each burst of changes to the `*.yaml` in `folders` or to `files` (until cancelled).

    `task_status.started(watcher)` once they are watched: a load made after that misses no edit.
    """
    watcher = Watcher(log, label="hot reload", step_ms=EDIT_STEP_MS)
    watcher.watch(RELOAD, reload_targets(folders, files))
    signal = watcher.signal(RELOAD)
    async with trio.open_nursery() as nursery:
        await nursery.start(watcher.run)
        await watcher.watching()
        task_status.started(watcher)
        while True:
            await signal.wait()
            signal.clear()
            await on_change()
