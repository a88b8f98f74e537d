"""Atomic file writes for settings and sensor management (ADR-403 §5: a crash never half-writes a file).

A write goes to a temporary file in the destination's own folder (so the rename stays on one file
system), is flushed and fsynced, and then replaces the destination with `os.replace`, which is atomic
on POSIX: a reader (the daemon's file watcher included) sees the old file or the new one, never a part.
The temporary name starts with a dot and ends in `.tmp`, so no loader mistakes it for a sensor file.
The folder is fsynced after the rename so the new directory entry survives a power cut too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["WriteFailed", "remove_file", "write_atomically"]

#: New files get the permissions an editor would give them (subject to the umask).
FILE_MODE = 0o666


class WriteFailed(OSError):
    """A write, rename or removal that did not happen; the destination is as it was."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"could not write {path}: {reason}")
        self.path = path
        self.reason = reason


def _fsync_folder(folder: Path) -> None:
    # Best effort: some file systems refuse to open or fsync a directory, and the data is already safe.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _mode_for(path: Path) -> int:
    """The permission bits the file keeps (an existing file's), or the default for a new one."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return FILE_MODE & ~umask


def write_atomically(path: Path, text: str) -> None:
    """Replace (or create) `path` with `text`, all or nothing; create its folder if it is missing.

    Raises:
        WriteFailed: when any step fails; the destination then holds what it held before and no
            temporary file is left behind.
    """
    path = Path(path)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        mode = _mode_for(path)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    _fsync_folder(folder)


def remove_file(path: Path) -> None:
    """Remove `path` (a missing file is not an error).

    Raises:
        WriteFailed: when the file exists and cannot be removed.
    """
    try:
        Path(path).unlink(missing_ok=True)
    except OSError as exc:
        raise WriteFailed(Path(path), exc.strerror or str(exc)) from None
    _fsync_folder(Path(path).parent)
