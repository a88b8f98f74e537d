"""One daemon per project: the run lock (DESIGN.md, Runtime; docs/runtime.md).

Decision: `attend run` holds an exclusive flock on `$XDG_STATE_HOME/attend/run-<hash>.lock` (the hash
of the project's resolved path) and writes its pid into the file. The kernel drops the lock when the
process dies, however it dies, so a killed daemon never blocks the next one. `attend sensors` asks the
same lock whether a daemon runs, so it shows no next poll when none will happen.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from attend.runtime.store import StoreUnavailable, make_state_folder, scope_for

__all__ = ["acquire", "lock_path", "running_pid"]


def lock_path(project_dir: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """The run lock of `project_dir`."""
    from attend.spec import layer_paths

    paths = layer_paths(project_dir, env if env is not None else os.environ)
    digest = hashlib.sha256(scope_for(project_dir).encode()).hexdigest()[:16]
    return paths.state_dir / f"run-{digest}.lock"


def acquire(path: Path) -> tuple[IO[str] | None, str]:
    """Take the lock at `path`: (the open lock file to keep, "") or (None, the running daemon's pid)."""
    make_state_folder(path.parent)
    try:
        lock = open(path, "a+")  # noqa: SIM115 - held open for the daemon's whole life
    except OSError as exc:
        raise StoreUnavailable(path.parent, f"{path.name}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        lock.close()
        return None, holder
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    return lock, ""


def running_pid(path: Path) -> int | None:
    """The pid of the daemon holding the lock at `path`, or None when no daemon runs."""
    if not path.exists():
        return None
    with open(path) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            text = lock.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(lock, fcntl.LOCK_UN)
        return None
