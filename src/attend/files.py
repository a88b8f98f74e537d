"""The file-system leaf: atomic writes and the XDG base folders.

Atomic writes (ADR-403 §5: a crash never half-writes a file). A write goes to a temporary file in the
destination's own folder (so the rename stays on one file system), is flushed and fsynced, and then
replaces the destination with `os.replace`, which is atomic on POSIX: a reader (the daemon's file
watcher included) sees the old file or the new one, never a part. The temporary name starts with a dot
and ends in `.tmp`, so no loader mistakes it for a sensor file. The folder is fsynced after the rename
so the new directory entry survives a power cut too. The temporary file is created with `O_EXCL |
O_NOFOLLOW` (never through a symlink planted at its name), and the rename replaces a symlink at the
destination rather than writing through it: attend never follows a link out of its folders to write.
A new file gets `0o666` less the umask, applied by the kernel at `open` (the process-wide umask is
never changed to learn it); an existing file keeps its permission bits.

XDG folders: `xdg_home(env, variable)` is the one reading of `XDG_CONFIG_HOME`, `XDG_DATA_HOME`,
`XDG_STATE_HOME` and `XDG_CACHE_HOME` (a relative value is ignored, as the XDG spec says), always from
the environment it is given. `state_folder(env)` is attend's state folder inside it.

Reading: `read_regular_file(path, limit)` is the one bounded reader of a file attend is handed (a poll
result for `sensors fire --input`, a test file's `result_file`, a Claude Code session record): it opens
without blocking (a FIFO never makes it wait for a writer), refuses anything but a regular file after
opening (`NotRegularFile`: a FIFO, a device such as ``/dev/zero``, a folder) and reads at most `limit`
bytes (`FileTooLarge` past them).

A project's files: `scope_for(project)` is a project's identity (its resolved path: the store's scope),
`project_hash(project)` the short hash of it that names a project's files (the run lock, the run log,
the peers tray). The run lock's place and holder (`run_lock_path`, `run_lock_holder`) are file-system
facts read by the processes sensor as well as the runtime, so they live here; taking and holding the
lock is `attend.runtime.sessions.runlock`'s.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["XDG_DEFAULTS", "FileTooLarge", "NotRegularFile", "WriteFailed", "claude_folder", "project_hash",
           "read_regular_file", "remove_file", "doorbell_lock_path", "run_lock_holder", "run_lock_path", "scope_for",
           "state_folder", "write_atomically",
           "home_folder", "xdg_home"]

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


def _kept_mode(path: Path) -> int | None:
    """The permission bits of the regular file at `path`, or None when there is none (or a symlink)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new, empty temporary file beside `name` in `folder`, opened for writing (mode 0o666 less the umask)."""
    for _ in range(100):
        tmp = folder / f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {folder}")


def write_atomically(path: Path, text: str | bytes, *, exclusive: bool = False, mode: int | None = None,
                     sync: bool = True) -> None:
    """Replace (or create) `path` with `text`, all or nothing; create its folder if it is missing.

    Args:
        path: the destination. A symlink there is replaced, never written through.
        text: the content (a str is written as UTF-8, line ends as given).
        exclusive: never replace an existing `path`: `FileExistsError` then (a name already taken),
            and nothing changes.
        mode: the permission bits to give the file; default: an existing file's own, else 0o666 less
            the umask.
        sync: fsync the file and its folder before returning (the default). False leaves that to the
            caller, who makes a batch of writes durable at once (`os.sync()`: the peers mirror).

    Raises:
        WriteFailed: when any step fails; the destination then holds what it held before and no
            temporary file is left behind.
        FileExistsError: with `exclusive`, when `path` exists.
    """
    path = Path(path)
    folder = path.parent
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        keep = mode if mode is not None else _kept_mode(path)
        fd, tmp = _temporary(folder, path.name)
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        if keep is not None:
            os.chmod(tmp, keep)
        if exclusive:
            _link_exclusively(tmp, path)
        else:
            os.replace(tmp, path)
    except FileExistsError:
        if exclusive:
            raise
        raise WriteFailed(path, "File exists") from None
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    if sync:
        _fsync_folder(folder)


def _link_exclusively(tmp: Path, path: Path) -> None:
    """Give `tmp`'s file the name `path` unless that name exists (`FileExistsError` then)."""
    try:
        os.link(tmp, path, follow_symlinks=False)  # atomic, and refuses an existing name
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: check, then rename (a narrow race, not a lost file)
        if os.path.lexists(path):
            raise FileExistsError(f"{path} exists") from None
        os.replace(tmp, path)


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


class NotRegularFile(OSError):
    """What was to be read is not a regular file (a FIFO, a device, a folder, a socket)."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EINVAL, "not a regular file", str(path))


class FileTooLarge(OSError):
    """The file holds more than the bytes its reader allows (`limit`); nothing past them was read."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes", str(path))
        self.limit = limit


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular_file(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (a symlink to one is read).

    Raises:
        NotRegularFile: `path` is a FIFO, a device, a folder or a socket (checked on the opened file,
            so nothing can swap it in between; a FIFO is opened without waiting for a writer).
        FileTooLarge: the file holds more than `limit` bytes.
        OSError: it cannot be opened or read (missing, no permission).
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise NotRegularFile(Path(path))
    with open(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(Path(path), limit)
    return data


#: Each XDG base-folder variable attend reads, and its default below `$HOME`.
XDG_DEFAULTS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}


def xdg_home(env: Mapping[str, str], variable: str) -> Path:
    """An XDG base folder read from `env`: the variable when set to an absolute path, else its default
    below `$HOME` (`~/.config`, `~/.local/share`, `~/.local/state`, `~/.cache`).

    The one resolver of these folders: the sensor layers, the state store, the peers folder and the
    grammar cache all call it with the environment they were given.
    """
    value = env.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return home_folder(env) / XDG_DEFAULTS[variable]


def home_folder(env: Mapping[str, str]) -> Path:
    """The home folder of `env`: its `$HOME`, else the user database's (what `~` means to the process)."""
    return Path(env.get("HOME") or os.path.expanduser("~"))


def claude_folder(env: Mapping[str, str]) -> Path:
    """Claude Code's configuration folder for `env`: `$CLAUDE_CONFIG_DIR` (as Claude Code reads it), else
    `~/.claude` (its settings.json, sessions/ and projects/ live there)."""
    named = env.get("CLAUDE_CONFIG_DIR")
    return Path(named) if named else home_folder(env) / ".claude"


def state_folder(env: Mapping[str, str]) -> Path:
    """attend's state folder, `$XDG_STATE_HOME/attend` (the store, the run locks and logs)."""
    return xdg_home(env, "XDG_STATE_HOME") / "attend"


def scope_for(project_dir: Path | str) -> str:
    """A project's identity: its resolved absolute path (the store's scope of its rows)."""
    return str(Path(project_dir).resolve())


def project_hash(project_dir: Path | str) -> str:
    """The short hash of a project's identity that names its files (16 hex digits)."""
    import hashlib  # here: OpenSSL's start-up (3.5 ms) only in a process that names a project's files

    return hashlib.sha256(scope_for(project_dir).encode()).hexdigest()[:16]


def run_lock_path(project_dir: Path | str, env: Mapping[str, str] | None = None, *, known_hash: str | None = None) -> Path:
    """The run lock of `project_dir`: `$XDG_STATE_HOME/attend/run-<hash>.lock` (`known_hash`: its
    `project_hash`, when the caller has it already)."""
    return state_folder(os.environ if env is None else env) / f"run-{known_hash or project_hash(project_dir)}.lock"


def doorbell_lock_path(state: Path, project_hash: str, session: str) -> Path:
    """The lock one doorbell per session holds (runtime/sessions/doorbell.py): `<state>/doorbell-<project
    hash>-<session>.lock`, beside the run lock; whether it is held is `run_lock_holder` too."""
    return state / f"doorbell-{project_hash}-{session}.lock"


def run_lock_holder(path: Path) -> int | None:
    """The pid of the `attend run` holding the run lock at `path` (-1 when it wrote none that reads as
    one), or None when nobody holds it. Opened without blocking: a FIFO there holds nobody."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd) as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = lock.read(64).strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(lock, fcntl.LOCK_UN)
        return None
