"""One poller per project: the run lock (DESIGN.md, Runtime and Sessions; docs/runtime.md).

Decision: the `attend run` that polls holds an exclusive flock on `$XDG_STATE_HOME/attend/run-<hash>.lock`
(the hash of the project's resolved path) and writes its pid into the file. The kernel drops the lock
when the process dies, however it dies, so a killed poller never blocks the next one: the other
sessions' `attend run` retry the lock (`try_lock`) and one of them takes over. `attend sensors` asks
the same lock whether a poller runs, so it shows no next poll when none will happen.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from attend.runtime.store import StoreUnavailable, make_state_folder, scope_for

__all__ = ["holder_pid", "lock_path", "open_lock", "running_pid", "try_lock"]


def lock_path(project_dir: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """The run lock of `project_dir`."""
    from attend.spec import layer_paths

    paths = layer_paths(project_dir, env if env is not None else os.environ)
    digest = hashlib.sha256(scope_for(project_dir).encode()).hexdigest()[:16]
    return paths.state_dir / f"run-{digest}.lock"


def open_lock(path: Path) -> IO[str]:
    """Open (create) the lock file at `path`, unlocked; `StoreUnavailable` when the folder cannot be used."""
    make_state_folder(path.parent)
    try:
        return open(path, "a+")  # noqa: SIM115 - held open for the session's whole life
    except OSError as exc:
        raise StoreUnavailable(path.parent, f"{path.name}: {exc.strerror or exc}") from None


def try_lock(lock: IO[str]) -> bool:
    """Take the lock on the open file `lock` without waiting; on success write this process's pid into it."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    return True


def holder_pid(lock: IO[str]) -> str:
    """The pid the lock's holder wrote into the open file `lock` ("?" when unreadable)."""
    lock.seek(0)
    return lock.read().strip() or "?"


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
