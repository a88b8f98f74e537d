"""Which sessions of a project are live, which polls, and through which conduit each is served (DESIGN.md,
"Sessions"): a small query for `attend sensors`, `attend doctor`, the hooks and the poller's session-scoped
sensors.

`project_sessions(project_dir)` reads the run lock (who holds it) and the store's session rows, without
importing trio, so any command can call it cheaply.

Decisions implemented here:

- A session is live while its Claude Code process (its host: pid and start time, peers/identity.py
  `host_runs`) runs, whichever conduit it has; a session whose host is not known (`--session`, a harness
  without Claude Code's session record) is live while its `attend run` runs. A row whose process died
  without a word (SIGKILL) is not shown.
- One host has one session at a time: `/clear` gives it a new id, and the id recorded for it last
  (`claude_seen`) is its session. Its `attend run`, still serving the old id for up to a second (it
  starts again for the new one: sessions/upkeep.py), is that session's Monitor meanwhile, so a status
  written right after `/clear` names the new id, not the old one.
- Its conduit: `monitor` while an `attend run` of it prints (not with `attend.delivery.conduits: hooks`),
  else `doorbell` while its doorbell waits (runtime/sessions/doorbell.py: it holds the session's
  doorbell lock; an idle session is woken for a line worth a turn), else `hooks`. A session whose
  Monitor stream ran and stopped while its host lives has `stream_stopped` (when it stopped): Claude
  Code never starts a plugin monitor again, and the hooks say so once.
"""

from __future__ import annotations

import os

from attend.peers.identity import host_runs, process_runs
from attend.records import field, record, replace

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up reads this module)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path
    from typing import Any

    from attend.runtime.store import SessionRecord, Store
    from attend.vocab import Conduit, LiveRole

__all__ = ["DOORBELL", "HOOKS", "MONITOR", "UNRESOLVED_PREFIX", "LiveSession", "ProjectSessions", "live_sessions",
           "project_sessions", "session_facts", "session_foci", "stopped_stream"]

#: How an `attend run` that could not name its session is named (`pid-<pid>`, peers/identity.py).
UNRESOLVED_PREFIX = "pid-"
#: The conduits a live session is served through (`doorbell`: its hooks, and its doorbell armed).
MONITOR: Conduit = "monitor"
HOOKS: Conduit = "hooks"
DOORBELL: Conduit = "doorbell"


@record(frozen=True)
class LiveSession:
    """A live session of the project.

    Attributes:
        session: its id.
        pid: its `attend run`, or None when its hooks alone serve it.
        role: `polling` (its `attend run` holds the run lock), `attached`, or `hooks` (no `attend run`).
        since: when it took this role (a hooks-only session: when it was last registered).
        started: when its row was made.
        conduit: `monitor`, `doorbell` or `hooks` (see the module docstring).
        claude_pid: its Claude Code process, when known (`claude_start`: that process's start time).
        transcript: its transcript, as its hooks were told (None: not told).
        stream_stopped: when its Monitor stream stopped while it lives, or None.
        stopped_pid: the `attend run` whose stream stopped then.
    """

    session: str
    pid: int | None
    role: LiveRole
    since: float | None
    started: float | None
    conduit: Conduit = MONITOR
    claude_pid: int | None = None
    transcript: str | None = None
    stream_stopped: float | None = None
    stopped_pid: int | None = None
    claude_start: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The session as a JSON-ready mapping."""
        return {"session": self.session, "pid": self.pid, "role": self.role, "since": self.since,
                "started": self.started, "conduit": self.conduit, "claude_pid": self.claude_pid,
                "stream_stopped": self.stream_stopped}

    def named(self) -> str:
        """`s1 (pid 5)`, `s2 (hooks; Claude Code pid 9)`, with a stopped stream said."""
        if self.pid is not None:
            return f"{self.session} (pid {self.pid}{'' if self.conduit == MONITOR else '; ' + self.conduit})"
        host = f"; Claude Code pid {self.claude_pid}" if self.claude_pid is not None else ""
        stopped = ""
        if self.stream_stopped is not None:
            import time

            stopped = f"; its attend stream stopped at {time.strftime('%H:%M:%S', time.localtime(self.stream_stopped))}"
        return f"{self.session} ({self.conduit}{host}{stopped})"


@record(frozen=True)
class ProjectSessions:
    """The project's live sessions.

    Attributes:
        poller: the session that holds the run lock, or None when nothing polls.
        attached: the other live sessions with an `attend run` (they print the journal, and take over
            when the poller exits).
        lock_pid: the pid in the run lock (set even when the holder has no session row).
        hooks: the live sessions no `attend run` serves: their hooks carry their lines.
    """

    poller: LiveSession | None
    attached: list[LiveSession] = field(default_factory=list)
    lock_pid: int | None = None
    hooks: list[LiveSession] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The sessions as a JSON-ready mapping."""
        return {
            "polling": self.poller.to_json() if self.poller else None,
            "attached": [s.to_json() for s in self.attached],
            "lock_pid": self.lock_pid,
            "hooks": [s.to_json() for s in self.hooks],
        }

    def every(self) -> list[LiveSession]:
        """Every live session: the poller, the attached ones, the hooks-only ones."""
        return [*([self.poller] if self.poller else []), *self.attached, *self.hooks]

    def describe(self) -> str:
        """One line for people: who polls since when, who is attached, who only has hooks."""
        import time

        if self.poller is None and self.lock_pid is None:
            head = "no session polls this project"
        elif self.poller is None:
            head = f"pid {self.lock_pid} polls this project"
        else:
            since = time.strftime("%H:%M:%S", time.localtime(self.poller.since)) if self.poller.since else "?"
            head = f"session {self.poller.named()} polls since {since}"
        return head + self.others()

    def others(self, *, say_none: bool = True) -> str:
        """The part of `describe` after who polls: `; attached: ...` (or, with `say_none`, that none is),
        `; hooks only: ...`."""
        tail = f"; attached: {', '.join(s.named() for s in self.attached)}" if self.attached else \
            "; no other session attached" if say_none else ""
        if self.hooks:
            tail += f"; hooks only: {', '.join(s.named() for s in self.hooks)}"
        return tail


def _alive(pid: int | None) -> bool:
    return pid is not None and pid > 0 and process_runs(pid)


def _ended_at(row: SessionRecord) -> float | None:
    """When the `attend run` of `row` (which no longer runs) stopped: its stop, else its last beat."""
    return row.role_since if row.role == "stopped" else row.heartbeat


def stopped_stream(rows: Iterable[SessionRecord]) -> tuple[float | None, int] | None:
    """When the Monitor stream of one session (its rows: its own, and its host's earlier ids) stopped,
    and the `attend run` whose stream it was; None while one runs, or when none ever ran."""
    ran = [r for r in rows if r.pid is not None]
    if not ran or any(r.role != "stopped" and _alive(r.pid) for r in ran):
        return None
    last = max(ran, key=lambda r: _ended_at(r) or 0.0)
    assert last.pid is not None  # `ran` holds only rows with one
    return _ended_at(last), last.pid


def live_sessions(records: Iterable[SessionRecord], *, lock_pid: int | None = None, conduits: str = "auto",
                  hosts: dict[tuple[int, str], bool] | None = None) -> list[LiveSession]:
    """The live sessions among the session rows `records` (store/session_rows.py), the earliest started first.

    Args:
        records: the project's session rows.
        lock_pid: the run lock's holder (its session is `polling`).
        conduits: `attend.delivery.conduits` (with `hooks`, no session's conduit is its Monitor).
        hosts: whether each host runs, when the caller already asked (filled in as asked).
    """
    hosts = {} if hosts is None else hosts

    def host_of(row: SessionRecord) -> tuple[int, str] | None:
        if row.claude_pid is None or row.claude_start is None:
            return None
        key = (int(row.claude_pid), str(row.claude_start))
        if key not in hosts:
            hosts[key] = host_runs(*key)
        return key if hosts[key] else None

    groups: dict[tuple[int, str] | tuple[str, str], list[SessionRecord]] = {}
    for row in records:
        key = host_of(row)
        groups.setdefault(key if key is not None else ("row", row.session), []).append(row)
    out = []
    for group, rows in groups.items():
        serving = [r for r in rows if r.role != "stopped" and _alive(r.pid)]
        if group[0] == "row":  # no live host known: live while its `attend run` runs
            current = rows[0]
            if not serving:
                continue
        else:  # the id its host was given last is its session
            current = max(rows, key=lambda r: (r.claude_seen or 0.0, r.heartbeat or 0.0))
        run = next((r for r in serving if r.session == current.session), serving[0] if serving else None)
        if run is not None:
            assert run.pid is not None  # a serving row's process is alive: it has one
            role: LiveRole = "polling" if lock_pid is not None and run.pid == lock_pid else "attached"
            out.append(LiveSession(current.session, run.pid, role, run.role_since, current.started,
                                   HOOKS if conduits == HOOKS else MONITOR, current.claude_pid, current.transcript,
                                   claude_start=current.claude_start))
            continue
        stopped = stopped_stream(rows) if conduits != HOOKS else None  # no stream carried its lines
        when, pid = stopped or (None, None)
        out.append(LiveSession(current.session, None, "hooks", current.claude_seen, current.started, HOOKS,
                               current.claude_pid, current.transcript, when, pid, current.claude_start))
    return sorted(out, key=lambda s: (s.started or 0.0, s.session))


def session_foci(store: Store) -> list[LiveSession]:
    """The named live sessions of the store's project, the earliest started first: the sessions a
    `scope: session` sensor is polled for (each with its transcript, when its hooks were told it). A
    session that could not be named (`pid-<pid>`) has no transcript to focus on and is left out."""
    return [s for s in live_sessions(store.sessions()) if not s.session.startswith(UNRESOLVED_PREFIX)]


def session_facts(store: Store, session: str, *, conduits: str = "auto") -> LiveSession | None:
    """`session` as `live_sessions` sees it (None when it is not live), reading only its own rows: its
    row, and the rows of its host (`/clear`'s earlier ids)."""
    row = store.session(session)
    if row is None:
        return None
    rows = [row]
    if row.claude_pid is not None and row.claude_start is not None:
        rows += [r for r in store.host_sessions(row.claude_pid, row.claude_start) if r.session != session]
    return next((s for s in live_sessions(rows, conduits=conduits) if s.session == session), None)


def project_sessions(project_dir: Path | str, env: Mapping[str, str] | None = None, *, store: Store | None = None,
                     conduits: str = "auto") -> ProjectSessions:
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
            records, project_hash = own.sessions(), own.project_hash()
    else:
        records, project_hash = store.sessions(), store.project_hash()
    poller = None
    attached = []
    hooks = []
    for live in live_sessions(records, lock_pid=lock_pid, conduits=conduits):
        if live.conduit == HOOKS and _doorbell_armed(env, project_hash, live.session):
            live = replace(live, conduit=DOORBELL)
        if live.role == "polling":
            poller = live
        elif live.role == "attached":
            attached.append(live)
        else:
            hooks.append(live)
    return ProjectSessions(poller, attached, lock_pid if lock_pid and lock_pid > 0 else None, hooks)


def _doorbell_armed(env: Mapping[str, str], project_hash: str, session: str) -> bool:
    """Whether a doorbell of `session` waits: it holds the session's doorbell lock."""
    from attend.files import doorbell_lock_path, run_lock_holder, state_folder

    return run_lock_holder(doorbell_lock_path(state_folder(env), project_hash, session)) is not None
