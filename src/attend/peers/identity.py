"""Session identity: which agent session an attend process serves (DESIGN.md, "Sessions").

Resolution order, first match wins:

1. ``--session ID`` (passed in as ``explicit``);
2. ``$ATTEND_SESSION``;
3. Claude Code's own record of the session: ``~/.claude/sessions/<pid>.json`` holds
   ``{"pid", "sessionId", "cwd", "startedAt"}``; the record whose ``pid`` is this process or one of
   its ancestors (at most `MAX_HOPS` hops up) names the session;
4. ``pid-<pid>``: unresolved. Such a session delivers, but keeps no delivery position.

A session id is also used as a file name (heartbeats, positions), so only ids of `SESSION_ID_RE` are
accepted; anything else is refused by `SessionError` with the reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_HOPS",
    "SESSION_ID_RE",
    "Session",
    "SessionError",
    "ancestors",
    "claude_sessions_dir",
    "parent_pid",
    "proc_stat_fields",
    "process_runs",
    "resolve_session",
    "validate_session_id",
]

#: How many parent hops are searched for a Claude Code process that recorded a session.
MAX_HOPS = 15
#: What a session id may look like: it names files, so no separators, no leading dot, bounded length.
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


class SessionError(ValueError):
    """A session id that cannot be used (empty, too long, or holding a path separator)."""


@dataclass(frozen=True, slots=True)
class Session:
    """The session an attend process serves.

    Attributes:
        id: the session id (``pid-<pid>`` when unresolved).
        resolved: False for the ``pid-<pid>`` fallback: such a session keeps no delivery position.
        source: where the id came from: ``flag``, ``env``, ``claude`` or ``pid``.
        owner_pid: the Claude Code process that owns the session (``claude`` source), else None.
    """

    id: str
    resolved: bool
    source: str
    owner_pid: int | None = None


def validate_session_id(value: str) -> str:
    """The id itself when it can name files; otherwise `SessionError` saying why."""
    if not value:
        raise SessionError("a session id is empty")
    if not SESSION_ID_RE.match(value):
        raise SessionError(
            f"session id {value[:40]!r} is not usable: letters, digits and . _ : @ - only, "
            "not starting with a dot, at most 128 characters"
        )
    return value


def proc_stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first, then the parent), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields after it start after the
    # last ')'.
    return stat[stat.rfind(b")") + 2 :].split()


def process_runs(pid: int) -> bool:
    """False when process `pid` is gone or a zombie (it exited and waits to be collected); True otherwise.

    A pid this process may not signal (another user's) counts as running: only its absence is a fact.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False  # not a pid at all
    fields = proc_stat_fields(pid)  # None without /proc to ask: the signal said it exists
    return not fields or fields[0] != b"Z"


def parent_pid(pid: int) -> int | None:
    """The parent of `pid` from ``/proc/<pid>/stat``, or None when it cannot be read."""
    tail = proc_stat_fields(pid)
    if tail is None:
        return None
    try:
        ppid = int(tail[1])
    except (IndexError, ValueError):
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
    return chain


def claude_sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's folder of live-session records: ``$CLAUDE_CONFIG_DIR/sessions`` or ``~/.claude/sessions``."""
    env = os.environ if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR")
    if base:
        return Path(base) / "sessions"
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude" / "sessions"


def _claude_record(pid: int, folder: Path) -> str | None:
    """The session id Claude Code recorded for `pid`, or None (no record, unreadable, or not matching)."""
    try:
        data = json.loads((folder / f"{pid}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("pid") != pid:
        return None
    session = data.get("sessionId")
    if isinstance(session, str) and SESSION_ID_RE.match(session):
        return session
    return None


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
                return Session(session, True, "claude", owner_pid=candidate)
    return Session(f"pid-{pid}", False, "pid")
