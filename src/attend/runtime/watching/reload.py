"""Hot reload by polling the layer folders (DESIGN.md, Layers: files are picked up within about a second).

Decision: no inotify dependency. Every `WATCH_INTERVAL` seconds the watcher takes a snapshot of the
sensor folders and config files (path → (mtime_ns, size)) and calls back when it differs from the last
one. A stat of a few hundred files costs well under a millisecond per round, and a poll works the same
on every file system (including network mounts and editors that replace files by rename).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import trio

__all__ = ["WATCH_INTERVAL", "Snapshot", "snapshot", "watch"]

#: Seconds between two snapshots.
WATCH_INTERVAL = 0.5

#: path → (mtime in ns, size in bytes).
Snapshot = dict[str, tuple[int, int]]


def snapshot(folders: Iterable[Path], files: Iterable[Path] = ()) -> Snapshot:
    """The mtime and size of every `*.yaml` in `folders` (not recursive) and of each of `files`."""
    out: Snapshot = {}
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # a folder that does not exist (yet) has no files
        for entry in entries:
            if entry.name.endswith(".yaml"):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                out[entry.path] = (st.st_mtime_ns, st.st_size)
    for file in files:
        try:
            st = os.stat(file)
        except OSError:
            continue
        out[str(file)] = (st.st_mtime_ns, st.st_size)
    return out


async def watch(
    folders: Iterable[Path],
    files: Iterable[Path],
    on_change: Callable[[], Awaitable[None]],
    *,
    interval: float = WATCH_INTERVAL,
    since: Snapshot | None = None,
) -> None:
    """Call `on_change` whenever the snapshot of `folders` and `files` changes (runs until cancelled).

    `since` is the snapshot the caller's last load saw. Taken before that load, it makes a change
    made while the load ran (or before this task first ran) count, instead of becoming the baseline.
    """
    folders, files = list(folders), list(files)
    last = snapshot(folders, files) if since is None else since
    while True:
        await trio.sleep(interval)
        current = snapshot(folders, files)
        if current != last:
            last = current
            await on_change()
