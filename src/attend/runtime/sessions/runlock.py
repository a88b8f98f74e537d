"""One poller per project: the run lock (DESIGN.md, Runtime and Sessions; docs/runtime.md).

Decision: the `attend run` that polls holds an exclusive flock on `$XDG_STATE_HOME/attend/run-<hash>.lock`
(the hash of the project's resolved path) and writes its pid into the file. The kernel drops the lock
when the process dies, however it dies, so a killed poller never blocks the next one: the other
sessions' `attend run` retry the lock (`try_lock`) and one of them takes over. `attend sensors` asks
the same lock whether a poller runs, so it shows no next poll when none will happen.

The lock's place and the lookup of its holder (`attend.files.run_lock_path`, `run_lock_holder`) are
file-system facts the processes sensor reads too, so they sit in the `files` leaf; this module is the
one that opens, takes and holds the lock.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
from typing import IO

from attend.runtime.store import StoreUnavailable, make_state_folder

__all__ = ["holder_pid", "open_lock", "try_lock", "wait_lock"]


def open_lock(path: Path) -> IO[str]:
    """Open (create) the lock file at `path`, unlocked; `StoreUnavailable` when the folder cannot be used."""
    make_state_folder(path.parent)
    try:
        # Never through a symlink planted at its name: taking the lock truncates the file and writes a pid.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        why = "a symbolic link, not followed" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise StoreUnavailable(path.parent, f"{path.name}: {why}") from None
    return os.fdopen(fd, "a+")


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


def wait_lock(lock: IO[str]) -> None:
    """Wait until the lock on the open file `lock` is this process's (the holder died or let go); `try_lock`
    then writes the pid. Blocks (the caller runs it in a thread): a waiting session uses no CPU.

    Raises:
        OSError: the lock cannot be waited for here (the caller retries on a timer).
    """
    fcntl.flock(lock, fcntl.LOCK_EX)


def holder_pid(lock: IO[str]) -> str:
    """The pid the lock's holder wrote into the open file `lock` ("?" when unreadable)."""
    lock.seek(0)
    return lock.read().strip() or "?"
