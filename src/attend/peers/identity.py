"""Session identity: which agent session an attend process serves (DESIGN.md, "Sessions").

Resolution order, first match wins:

1. ``--session ID`` (passed in as ``explicit``);
2. ``$ATTEND_SESSION``;
3. Claude Code's own record of the session: ``~/.claude/sessions/<pid>.json`` holds
   ``{"pid", "sessionId", "cwd", "startedAt"}``; the record whose ``pid`` is this process or one of
   its ancestors (at most `MAX_HOPS` hops up) names the session;
4. ``pid-<pid>``: unresolved. Such a session delivers, but keeps no delivery position.

A session's Claude Code process (its *host*) is named by its pid and its start time (`process_start`:
the kernel's clock ticks after boot, as ``/proc/<pid>/stat`` says), so a pid the system gave to another
process since is not taken for it (`host_runs`). A session is live while its host runs, whichever
conduit it has (runtime/sessions/status.py).

Process facts (parent, running or zombie, start time) come from ``/proc/<pid>/stat`` (psutil where there
is no ``/proc``). A session record is read as a regular
file of at most `MAX_RECORD_BYTES` (a FIFO, a symlink to ``/dev/zero`` or a huge file is no record),
and JSON nested too deep for the parser is no record either: a hostile record never stops a command.

A session id is also used as a file name (heartbeats, positions), so only ids of `SESSION_ID_RE` are
accepted; anything else is refused by `SessionError` with the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from attend import lazyre
from attend.errors import EXIT_USAGE, Refusal
from attend.files import read_regular_file
from attend.records import record

__all__ = [
    "MAX_HOPS",
    "MAX_RECORDS",
    "MAX_RECORD_BYTES",
    "PRESENCE_SENSOR",
    "SESSION_ID_RE",
    "ClaudeRecord",
    "SESSION_META",
    "Session",
    "SessionError",
    "ancestors",
    "claude_record",
    "claude_records",
    "claude_sessions_dir",
    "find_host",
    "host_runs",
    "parent_pid",
    "process_runs",
    "process_start",
    "resolve_session",
    "validate_session_id",
]

#: How many parent hops are searched for a Claude Code process that recorded a session.
MAX_HOPS = 15
#: The largest session record read (Claude Code's are about 200 bytes).
MAX_RECORD_BYTES = 64 * 1024
#: The most records `claude_records` reads (one per live Claude Code process; a folder holding more is
#: not Claude Code's doing).
MAX_RECORDS = 1000
#: A `startedAt` (milliseconds) past this (the year 5138) is no time a process wrote.
MAX_STARTED_AT = 10**14
#: The sensor whose lines are about sessions, keyed by session id (peers/presence.py; a session is not
#: shown its own: runtime/sessions/handover.py).
PRESENCE_SENSOR = "peers"
#: The journal meta field naming the one session a `scope: session` sensor's line is for (DESIGN.md,
#: "Delivery": Scope); every conduit of another session passes the line over.
SESSION_META = "session"
#: What a session id may look like: it names files, so no separators, no leading dot, bounded length.
#: Matched against the whole id (`fullmatch`; `\Z`, since `$` also matches before a final newline).
SESSION_ID_RE = lazyre.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}\Z")


class SessionError(Refusal, ValueError):
    """A session id that cannot be used (empty, too long, or holding a path separator): usage, exit 2."""

    default_code = EXIT_USAGE


@record(frozen=True)
class Session:
    """The session an attend process serves.

    Attributes:
        id: the session id (``pid-<pid>`` when unresolved).
        resolved: False for the ``pid-<pid>`` fallback: such a session keeps no delivery position.
        source: where the id came from: ``flag``, ``env``, ``claude`` or ``pid``.
        owner_pid: the Claude Code process that owns the session (``claude`` source), else None.
        owner_start: that process's start time (`process_start`), else None.
    """

    id: str
    resolved: bool
    source: str
    owner_pid: int | None = None
    owner_start: str | None = None


def validate_session_id(value: str) -> str:
    """The id itself when it can name files; otherwise `SessionError` saying why."""
    if not value:
        raise SessionError("a session id is empty")
    if not SESSION_ID_RE.fullmatch(value):
        raise SessionError(
            f"session id {value[:40]!r} is not usable: letters, digits and . _ : @ - only, "
            "not starting with a dot, at most 128 characters"
        )
    return value


#: What `_proc_stat` answers when this system has no ``/proc`` to read (psutil is asked instead).
_NO_PROC = None


def _proc_stat(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first, then the parent, ...), [] when
    the process is gone (or is no pid), `_NO_PROC` on a system without ``/proc``.

    Read directly, not through psutil: a hook asks this of a session's processes, and importing psutil
    costs more than the rest of a hook's start-up.
    """
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return []
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return [] if os.path.exists("/proc/self/stat") else _NO_PROC
    return fields if len(fields) > 19 else []


def process_runs(pid: int) -> bool:
    """False when process `pid` is gone or a zombie (it exited and waits to be collected); True otherwise.

    A pid this process may not inspect (another user's, where psutil is asked) counts as running: only
    its absence is a fact.
    """
    fields = _proc_stat(pid)
    if fields is not None:
        return bool(fields) and fields[0] not in (b"Z", b"X", b"x")
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # ZombieProcess is a NoSuchProcess: collected or not, it has exited
        return False
    except (psutil.AccessDenied, OSError):
        return True


def process_start(pid: int) -> str | None:
    """When process `pid` started, as a text that tells it apart from a later process given the same pid;
    None once it is gone (or is no pid).

    On Linux: the kernel's clock ticks after boot (``/proc/<pid>/stat`` field 22; Claude Code's session
    record says the same as ``procStart``), which never moves with the wall clock. Elsewhere psutil's
    creation time, to the hundredth of a second.
    """
    fields = _proc_stat(pid)
    if fields is not None:
        return fields[19].decode("ascii", "replace") if fields else None
    import psutil

    try:
        return f"{psutil.Process(pid).create_time():.2f}"
    except (psutil.Error, OSError):
        return None


def host_runs(pid: int | None, start: str | None) -> bool:
    """Whether the process `pid` that started at `start` (`process_start`) still runs (a zombie does not)."""
    return pid is not None and start is not None and process_runs(pid) and process_start(pid) == start


def parent_pid(pid: int) -> int | None:
    """The parent of `pid`, or None when it is gone or cannot be read."""
    fields = _proc_stat(pid)
    if fields is not None:
        try:
            ppid = int(fields[1]) if fields else 0
        except ValueError:
            return None
        return ppid if ppid > 0 else None
    import psutil

    try:
        ppid = psutil.Process(pid).ppid()
    except (psutil.Error, OSError, ValueError):
        return None
    return ppid if ppid > 0 else None


def ancestors(pid: int, hops: int = MAX_HOPS) -> list[int]:
    """`pid` and its ancestors, nearest first, at most `hops` parents up (pid 1 ends the walk)."""
    chain = [pid]
    current = pid
    for _ in range(hops):
        parent = parent_pid(current)
        if parent is None or parent in chain:
            break
        chain.append(parent)
        if parent == 1:
            break
        current = parent
    return chain


def claude_sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's folder of live-session records: ``$CLAUDE_CONFIG_DIR/sessions`` or ``~/.claude/sessions``."""
    from attend.files import claude_folder

    return claude_folder(os.environ if env is None else env) / "sessions"


@record(frozen=True)
class ClaudeRecord:
    """One of Claude Code's live-session records (``<sessions folder>/<pid>.json``).

    Attributes:
        pid: the Claude Code process (the file's name and its ``pid`` field agree).
        session: the session id it names now.
        started: when the process wrote it (``startedAt``, in seconds), or None when it gives none.
    """

    pid: int
    session: str
    started: float | None = None


def _read_claude_record(pid: int, folder: Path) -> ClaudeRecord | None:
    """Claude Code's record for `pid`, or None (no record, unreadable, or not matching)."""
    try:
        data = json.loads(read_regular_file(folder / f"{pid}.json", MAX_RECORD_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    if not isinstance(data, dict) or data.get("pid") != pid:
        return None
    session = data.get("sessionId")
    if not isinstance(session, str) or not SESSION_ID_RE.fullmatch(session):
        return None
    started = data.get("startedAt")  # milliseconds since the epoch (JavaScript's Date.now())
    if isinstance(started, bool) or not isinstance(started, int | float) or not 0 < started < MAX_STARTED_AT:
        return ClaudeRecord(pid, session, None)
    return ClaudeRecord(pid, session, started / 1000)


def _claude_record(pid: int, folder: Path) -> str | None:
    """The session id Claude Code recorded for `pid`, or None (no record, unreadable, or not matching)."""
    found = _read_claude_record(pid, folder)
    return None if found is None else found.session


def claude_records(env: Mapping[str, str] | None = None, limit: int = MAX_RECORDS) -> list[ClaudeRecord]:
    """Every readable record in Claude Code's sessions folder (at most `limit`, the lowest pids first),
    whether or not its process still runs: the caller checks that against what it knows of processes."""
    folder = claude_sessions_dir(env)
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return []
    pids = sorted(int(name[:-5]) for name in names
                  if name.endswith(".json") and name[:-5].isascii() and name[:-5].isdigit() and len(name) < 20)
    out = []
    for pid in pids[:limit]:
        found = _read_claude_record(pid, folder)
        if found is not None:
            out.append(found)
    return out


def claude_record(pid: int, env: Mapping[str, str] | None = None) -> str | None:
    """The session id Claude Code's record for process `pid` names now (it changes on `/clear`), or None."""
    return _claude_record(pid, claude_sessions_dir(env))


def resolve_session(
    explicit: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    pid: int | None = None,
) -> Session:
    """The session this process serves, by the order in the module docstring.

    Args:
        explicit: the ``--session`` value, if given (an empty string is refused, never ignored).
        env: the environment (default `os.environ`).
        pid: the process to start the ancestor walk from (default this process).

    Raises:
        SessionError: `explicit` or ``$ATTEND_SESSION`` is set but not a usable id.
    """
    env = os.environ if env is None else env
    if explicit is not None:
        return Session(validate_session_id(explicit), True, "flag")
    from_env = env.get("ATTEND_SESSION")
    if from_env:
        return Session(validate_session_id(from_env), True, "env")
    pid = os.getpid() if pid is None else pid
    folder = claude_sessions_dir(env)
    if folder.is_dir():
        for candidate in ancestors(pid):
            session = _claude_record(candidate, folder)
            if session is not None:
                return Session(session, True, "claude", owner_pid=candidate, owner_start=process_start(candidate))
    return Session(f"pid-{pid}", False, "pid")


def find_host(env: Mapping[str, str] | None = None, pid: int | None = None) -> tuple[int, str] | None:
    """The Claude Code process this process runs under (the nearest ancestor with a session record in
    `claude_sessions_dir`), as (pid, `process_start`); None when there is none.

    A hook's own session id comes from its JSON, so only the process is looked for here: whatever id its
    record names (it changes on `/clear`), that process runs the session.
    """
    env = os.environ if env is None else env
    folder = claude_sessions_dir(env)
    if not folder.is_dir():
        return None
    for candidate in ancestors(os.getpid() if pid is None else pid):
        if _claude_record(candidate, folder) is not None:
            start = process_start(candidate)
            return None if start is None else (candidate, start)
    return None
