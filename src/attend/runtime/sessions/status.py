"""Which session polls a project and which are attached: a small query for `attend sensors` and `attend doctor`.

`project_sessions(project_dir)` reads the run lock (who holds it) and the store's session rows (who
runs), without importing trio, so any command can call it cheaply. A row counts as live while its
process runs; a row whose process died without a word (SIGKILL) is not shown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attend.peers.identity import process_runs

__all__ = ["UNRESOLVED_PREFIX", "LiveSession", "ProjectSessions", "live_session_ids", "project_sessions"]

#: How an `attend run` that could not name its session is named (`pid-<pid>`, peers/identity.py).
UNRESOLVED_PREFIX = "pid-"


@dataclass(frozen=True, slots=True)
class LiveSession:
    """A running `attend run` of the project."""

    session: str
    pid: int
    role: str  # "polling" or "attached"
    since: float | None  # when it took this role
    started: float | None

    def to_json(self) -> dict[str, Any]:
        """The session as a JSON-ready mapping."""
        return {"session": self.session, "pid": self.pid, "role": self.role, "since": self.since, "started": self.started}


@dataclass(frozen=True, slots=True)
class ProjectSessions:
    """The project's live sessions.

    Attributes:
        poller: the session that holds the run lock, or None when nothing polls.
        attached: the other live sessions (they print the journal, and take over when the poller exits).
        lock_pid: the pid in the run lock (set even when the holder has no session row).
    """

    poller: LiveSession | None
    attached: list[LiveSession] = field(default_factory=list)
    lock_pid: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The sessions as a JSON-ready mapping."""
        return {
            "polling": self.poller.to_json() if self.poller else None,
            "attached": [s.to_json() for s in self.attached],
            "lock_pid": self.lock_pid,
        }

    def describe(self) -> str:
        """One line for people: who polls since when, who is attached."""
        import time

        if self.poller is None and self.lock_pid is None:
            head = "no session polls this project"
        elif self.poller is None:
            head = f"pid {self.lock_pid} polls this project"
        else:
            since = time.strftime("%H:%M:%S", time.localtime(self.poller.since)) if self.poller.since else "?"
            head = f"session {self.poller.session} (pid {self.poller.pid}) polls since {since}"
        if not self.attached:
            return f"{head}; no other session attached"
        others = ", ".join(f"{s.session} (pid {s.pid})" for s in self.attached)
        return f"{head}; attached: {others}"


def _alive(pid: int | None) -> bool:
    return pid is not None and pid > 0 and process_runs(pid)


def live_session_ids(store: Any) -> list[str]:
    """The named sessions of the store's project whose `attend run` runs now, the earliest started first:
    the sessions a `scope: session` sensor is polled for. A session that could not be named
    (`pid-<pid>`) has no transcript to focus on and is left out."""
    return [r.session for r in store.sessions()
            if r.role != "stopped" and not r.session.startswith(UNRESOLVED_PREFIX) and _alive(r.pid)]


def project_sessions(project_dir: Path | str, env: Mapping[str, str] | None = None, *, store: Any = None) -> ProjectSessions:
    """The live sessions of `project_dir` (see `ProjectSessions`); `store` may be an open project store.

    Raises:
        StoreUnavailable: the state folder or database cannot be used.
    """
    from attend.files import run_lock_holder, run_lock_path
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    env = os.environ if env is None else env
    lock_pid = run_lock_holder(run_lock_path(project_dir, env))
    if store is None:
        with open_project_store(layer_paths(project_dir, env)) as own:
            records = own.sessions()
    else:
        records = store.sessions()
    poller = None
    attached = []
    for record in records:
        if record.role == "stopped" or record.pid is None or not _alive(record.pid):
            continue
        role = "polling" if record.pid == lock_pid else "attached"
        live = LiveSession(record.session, int(record.pid), role, record.role_since, record.started)
        if role == "polling":
            poller = live
        else:
            attached.append(live)
    return ProjectSessions(poller, attached, lock_pid if lock_pid and lock_pid > 0 else None)
