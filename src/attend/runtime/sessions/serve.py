"""`attend run` as one session among several: one polls, the others attach (DESIGN.md, "Sessions").

Decisions implemented here:

- Every `attend run` serves one session (`peers.identity.resolve_session`) and stays up. The one that
  holds the project's run lock (runlock.py) polls: it runs the `Daemon`. Every other one is attached:
  it prints the project's journal on its own stdout and retries the lock every `TAKEOVER_CHECK`
  seconds, so when the poller exits (SIGTERM, SIGKILL, a crash: the kernel drops the flock) one of
  them takes over within that delay plus the daemon's start.
- Every session, the poller included, prints through one `SessionPrinter`: the journal rows after its
  stored position (store/sessions.py), written first and recorded after (`advance_session`), so no
  row is skipped; only a crash between the write and the record can show a row again, and only in
  the session that crashed. A restarted session (same id) resumes; a new one starts at the journal's
  end; an unresolved one (`pid-<pid>`) keeps no position.
- Every session's presence for peers (peers/mailbox.py, `heartbeat/<session>`) is rewritten every
  `HEARTBEAT` seconds and removed on a clean exit. Presence and the store row are the process's that
  holds them: a second `attend run` with a session id already live warns at start-up, prints the same
  stream, and neither rewrites nor removes what the first one holds; it takes them over at its next
  beat once the first is gone (`_claim_if_orphaned`, `Mailbox.beat`). The peers sensor's lines about a session (keyed by
  its id) are not printed on that session's own stream: the journal is the project's, so the sensor
  reports every session and each session leaves out its own start, exit and status. A line left out
  for a session also leaves its magnitude out of the priority of the lines of the same disclosure that
  the session is shown (`delivery.priced_for_reader`).
- A closed stdout (the Monitor gone, `attend run | head -1`) ends the session quietly with exit 0; the
  rows it could not write stay unrecorded, so the session's next run prints them.
- Authored rows (peer messages) go through `seen.for_session`: never the session's own, each item
  once; a resolved session's first rounds also do its cold start (cold_start.py) once the messages
  sensor has its baseline.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import trio

from attend.files import run_lock_path
from attend.peers.identity import PRESENCE_SENSOR, Session, process_runs
from attend.peers.mailbox import Mailbox, peers_dir
from attend.runtime.delivery import (
    format_line,
    is_stdout_priority,
    joined,
    write_entries,
)
from attend.runtime.faults import crash_point
from attend.runtime.sessions.cold_start import (
    COLD_START_WAIT,
    cold_start,
    message_sensors,
)
from attend.runtime.sessions.handover import shown_to
from attend.runtime.sessions.news import news
from attend.runtime.sessions.runlock import holder_pid, open_lock, try_lock
from attend.runtime.sessions.seen import items_of
from attend.runtime.sessions.upkeep import Reexec, Upkeep, keep_polling
from attend.runtime.store import Store, StoreUnavailable
from attend.text import printable_path

__all__ = ["HEARTBEAT", "JOURNAL_CHECK", "STALE_TEST_FIRE", "TAKEOVER_CHECK", "SessionPrinter", "StreamClosed", "serve_session"]

#: How often an attached session tries to take the run lock (seconds): most of the failover delay.
TAKEOVER_CHECK = 0.25
#: How often a session looks for journal rows written by another process (seconds).
JOURNAL_CHECK = 0.2
#: How often a session records that it is alive (seconds).
HEARTBEAT = 5.0
#: Test lines older than this (seconds) are printed by a session only when they came after its start:
#: none made before it is (`sensors fire` showed them where it ran, and a test belongs to the session
#: that ran it).
STALE_TEST_FIRE = 0.0


class StreamClosed(Exception):
    """The session's stdout (or stderr) reader went away."""


class SessionPrinter:
    """Prints the project's journal on one session's streams, from the session's position on.

    Args:
        store: the project's store.
        session: the session, or None for an in-process daemon that keeps no session row.
        stdout: the Monitor stream (high and medium priority).
        stderr: low-priority lines.
        clock: wall-clock seconds.
        project_dir: the project; with it, a resolved session that never had its cold start gets it.
        env: the environment naming the layers and the peers folder (default `os.environ`).
        claim: False when another live process serves the same session here (its row stays its own).
    """

    def __init__(
        self,
        store: Store,
        session: Session | None,
        *,
        stdout: TextIO,
        stderr: TextIO,
        clock: Callable[[], float] = time.time,
        project_dir: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        claim: bool = True,
    ) -> None:
        self.store = store
        self.session_id = session.id if session is not None else None
        self.stdout = stdout
        self.stderr = stderr
        self.clock = clock
        self.project_dir = project_dir
        self.env = os.environ if env is None else env
        if session is not None:
            self.position = store.attach_session(session.id, pid=os.getpid(), resume=session.resolved, claim=claim)
        else:
            self.position = store.journal_end()
        #: Whether this session's cold start is still to do.
        self.cold_pending = (project_dir is not None and session is not None and session.resolved
                             and not store.cold_start_done(session.id))
        self._started = clock()
        #: Whether the next round is the stream's first: its backlog is handed over as news (news.py).
        self._restarting = True
        self._message_sensors: list[Any] | None = None
        self._digests: dict[str, Any] | None = None
        self._wake = trio.Event()

    def wake(self) -> None:
        """Ask for a round now (this process just journaled something)."""
        self._wake.set()

    def print_new(self) -> int:
        """Print the rows this session has not shown yet and record them; return how many were written.

        Raises:
            StreamClosed: a stream's reader went away; nothing of this round was recorded.
        """
        entries, drained_upto = self.store.session_backlog(
            self.session_id, self.position, stale_test_before=self.clock() - STALE_TEST_FIRE
        )
        written = 0
        if entries:
            # A message its Stop hook already handed over is not shown to the same session again, nor a
            # peers line about the session itself (its own start is not news to it); what is hidden from
            # this session adds nothing to the priority of what it is shown (handover.py).
            seen = self.store.seen_items(self.session_id) if self.session_id is not None else set()
            shown, items = shown_to(self.session_id, entries, drained_upto, seen, position=self.position)
            if self._restarting:  # what the stream finds as it (re)starts: only what is still news
                shown = news(shown, now=self.clock(), started=self._started, stale_after=self._stale_after(),
                             digest_of=self._digest_of)
            # A low-priority message-lane line goes to stderr, which the agent never reads: it stays unseen,
            # so the session's Stop-hook drain hands it over once (store/sessions.py `drain_backlog`).
            on_stdout = {n for e in shown if is_stdout_priority(e.priority) for n in items_of(e)}
            items = [n for n in items if n in on_stdout]
            try:
                # The presence lines of one poll are one line (what is left of them for this session).
                write_entries(joined(shown, PRESENCE_SENSOR), self.stdout, self.stderr)
            except (BrokenPipeError, ValueError) as exc:  # ValueError: a stream already closed in-process
                raise StreamClosed(str(exc)) from None
            crash_point("printed")
            upto = max(self.position, entries[-1].id)
            self.store.advance_session(self.session_id, upto, [e.id for e in entries], items)
            crash_point("recorded")
            self.position = upto
            written = len(shown)
        self._restarting = False
        if self.cold_pending:
            written += self._cold_start()
        return written

    def _stale_after(self) -> float:
        """`attend.delivery.stale_after` of the project's config, in seconds (the default without a project)."""
        from attend.spec import layer_paths, load_config
        from attend.spec.config import config_default
        from attend.spec.durations import parse_duration

        default = config_default(("delivery", "stale_after"))
        if self.project_dir is None:
            return parse_duration(default)
        try:
            return parse_duration(load_config(layer_paths(self.project_dir, self.env)).delivery.get("stale_after", default))
        except (OSError, ValueError):
            return parse_duration(default)

    def _digest_of(self, sensor: str) -> Any:
        """`sensor`'s compiled digest rule (None without one, or without a project to load it from)."""
        if self.project_dir is None:
            return None
        if self._digests is None:
            from attend.compiler.digest import compile_digest
            from attend.spec import load_set

            self._digests = {}
            try:
                for name, loaded in load_set(self.project_dir, self.env).sensors.items():
                    if loaded.status == "ok" and isinstance(loaded.data.get("digest"), dict):
                        self._digests[name] = compile_digest(loaded.data["digest"])
            except Exception as exc:  # noqa: BLE001 - no digest then: every message is its own line
                self.stderr.write(f"attend: digest rules not loaded: {exc}\n")
        return self._digests.get(sensor)

    def _cold_start(self) -> int:
        """Do this session's cold start once the messages sensors have their baseline; return the lines written."""
        session = self.session_id
        assert session is not None and self.project_dir is not None  # cold_pending says so
        if self.store.cold_start_done(session):  # its Stop hook did it meanwhile
            self.cold_pending = False
            return 0
        if self._message_sensors is None:
            try:
                self._message_sensors = message_sensors(self.project_dir, self.env)
            except Exception as exc:  # noqa: BLE001 - a cold start never stops the stream
                self.stderr.write(f"attend: no cold start for session {session}: {exc}\n")
                self.cold_pending = False
                return 0
        waiting = [c.name for c in self._message_sensors if not self.store.trigger_states(c.name)]
        if waiting and self.clock() - self._started < COLD_START_WAIT:
            return 0  # the baseline comes first: a message sent meanwhile then fires instead of being lost
        handed = cold_start(self._message_sensors, self.project_dir, session,
                            seen=self.store.seen_items(session), now=self.clock(), env=self.env)
        try:
            for line in handed.lines:
                stream = self.stdout if is_stdout_priority(line.priority) else self.stderr
                stream.write(format_line(line.sensor, line.priority, line.description) + "\n")
                stream.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise StreamClosed(str(exc)) from None
        self.store.record_cold_start(session, handed.seen)  # after printing: a crash shows them again, once
        self.cold_pending = False
        return len(handed.lines)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Print new rows as they come (woken by this process, or every `JOURNAL_CHECK` seconds)."""
        task_status.started()
        skipped = ""
        while True:
            try:
                self.print_new()
                skipped = ""
            except sqlite3.OperationalError as exc:
                # Locked past busy_timeout: nothing was recorded, so the next round prints the same rows.
                # Said once per reason, not at every round while it lasts.
                if str(exc) != skipped:
                    self.stderr.write(f"attend: printing round skipped: {exc}\n")
                skipped = str(exc)
            with trio.move_on_after(JOURNAL_CHECK):
                await self._wake.wait()
            self._wake = trio.Event()


def _log(stderr: TextIO, message: str) -> None:
    stderr.write(f"attend: {message}\n")
    stderr.flush()


def _other_process(store: Store, mailbox: Mailbox, session: str, project_dir: Path) -> tuple[int, str] | None:
    """Another running process serving `session`, and where: its row in this project's store, or its heartbeat."""
    me = os.getpid()
    record = store.session(session)
    if record is not None and record.role != "stopped" and record.pid not in (None, me) and process_runs(record.pid):
        return int(record.pid), "in this project"
    try:
        owner = mailbox.owner(session, me)
    except OSError:
        return None
    if owner is None or owner.pid is None:
        return None
    here = owner.project == str(project_dir.resolve())
    return owner.pid, "in this project" if here else f"in {printable_path(owner.project)}"


def _claim_if_orphaned(store: Store, session: str, role: str) -> None:
    """Take `session`'s row over when the process that held it is gone (stopped, or died): the row
    names a running process serving the session again."""
    record = store.session(session)
    me = os.getpid()
    if record is not None and record.pid != me and (record.role == "stopped" or record.pid is None
                                                      or not process_runs(record.pid)):
        store.set_session_role(session, role, pid=me)


async def _heartbeat(store: Store, session: str, presence: Callable[[], object], role: Callable[[], str]) -> None:
    """Record every `HEARTBEAT` seconds that the session lives: its store row, and its peers presence.

    Both are this process's only while it holds them: a second process with the same session id
    writes neither while the first runs, and takes them over at its next beat once the first is gone.
    """
    while True:
        try:
            presence()
        except OSError:
            pass  # an unwritable cache folder: peers do not see this session, the session still runs
        await trio.sleep(HEARTBEAT)
        try:
            _claim_if_orphaned(store, session, role())
            store.session_heartbeat(session, pid=os.getpid())
        except sqlite3.OperationalError:
            pass  # a busy store: the next beat records it


async def serve_session(
    project_dir: Path | str,
    session: Session,
    *,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    clock: Callable[[], float] = time.time,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `session` for `project_dir` until cancelled: print the journal, and poll while holding the lock.

    `task_status.started()` is called once the session prints (attached or polling).

    Raises:
        StreamClosed: the session's stdout reader went away.
    """
    from attend.runtime.daemon import Daemon
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    env = dict(os.environ if env is None else env)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    project_dir = Path(project_dir)
    lock = open_lock(run_lock_path(project_dir, env))
    store = open_project_store(layer_paths(project_dir, env), clock=clock)
    mailbox = Mailbox(peers_dir(env))
    other = _other_process(store, mailbox, session.id, project_dir)
    if other is not None:
        _log(stderr, f"warning: session id {session.id} is already live {other[1]} (pid {other[0]}); this process "
                     f"prints the same stream but leaves pid {other[0]}'s presence and registration alone. "
                     "Give each session its own id (--session or ATTEND_SESSION)")
    printer = SessionPrinter(store, session, stdout=stdout, stderr=stderr, clock=clock, project_dir=project_dir,
                             env=env, claim=other is None)
    role = {"now": "attached"}
    stores = [store]
    upkeep = Upkeep(project_dir, env, session, stores, lambda: role["now"] == "polling", partial(_log, stderr), lock)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(printer.run)
            nursery.start_soon(_heartbeat, store, session.id, partial(
                mailbox.beat, session.id, project_dir, pid=os.getpid(), started=clock()), lambda: role["now"])
            nursery.start_soon(upkeep.run)
            task_status.started()
            if not try_lock(lock):
                _log(stderr, f"session {session.id} attached to {printable_path(project_dir)}; pid {holder_pid(lock)} polls it")
                while not try_lock(lock):
                    await trio.sleep(TAKEOVER_CHECK)
                _log(stderr, f"session {session.id} polls {printable_path(project_dir)} now (the poller exited)")
            role["now"] = "polling"
            store.set_session_role(session.id, "polling", pid=os.getpid())

            async def poll() -> None:
                daemon = Daemon(project_dir, env=env, stdout=stdout, stderr=stderr, clock=clock, printer=printer)
                stores.append(daemon.store)
                try:
                    await daemon.run()
                finally:
                    stores.remove(daemon.store)

            # Staying up (upkeep.py): a failed loop is logged and starts again; a closed stream, a re-exec or an
            # unusable store ends it (commands/run.py says why in one line).
            await keep_polling(poll, partial(_log, stderr),
                               ends=(StreamClosed, BrokenPipeError, Reexec, StoreUnavailable, sqlite3.Error))
    finally:
        # Only what is this process's own: another process serving the same session id keeps its row
        # and its heartbeat (each check-and-remove is one step: a conditional UPDATE, the presence lock).
        try:
            store.set_session_role(session.id, "stopped", pid=None, only_pid=os.getpid())
        except sqlite3.Error:
            pass  # the row stays as it was; its dead pid tells it apart from a live one
        store.close()
        lock.close()  # releases the lock, if held
        upkeep.lock.close()  # the lock taken again after its file was removed, if any
        try:
            # Peers see a clean exit at once (a crash: after LIVE_FOR).
            mailbox.leave_presence(session.id, pid=os.getpid())
        except OSError:
            pass








