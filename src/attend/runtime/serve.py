"""`attend run` as one session among several: one polls, the others attach (DESIGN.md, "Sessions").

Decisions implemented here:

- Every `attend run` serves one session (`peers.identity.resolve_session`) and stays up. The one that
  holds the project's run lock (runlock.py) polls: it runs the `Daemon`. Every other one is attached:
  it prints the project's journal on its own stdout and waits for the lock in a thread (`wait_lock`,
  a blocking flock: no timer, no CPU at rest), so when the poller exits (SIGTERM, SIGKILL, a crash:
  the kernel drops the flock) one of them takes over at once plus the daemon's start. Where the
  lock cannot be waited for, it is tried again every `TAKEOVER_CHECK` seconds.
- Every session, the poller included, prints through one `SessionPrinter` (sessions/printer.py), muted
  while `attend.delivery.conduits` is `hooks`: it stays up, polls and beats, and its hooks carry its
  lines. The setting is read again whenever its file changes (upkeep.py, within a second).
- Every session's presence for peers (peers/mailbox.py, `heartbeat/<session>`) is rewritten every
  `HEARTBEAT` seconds and removed on a clean exit. Presence and the store row are the process's that
  holds them: a second `attend run` with a session id already live warns at start-up, prints the same
  stream, and neither rewrites nor removes what the first one holds; it takes them over at its next
  beat once the first is gone (`_claim_if_orphaned`, `Mailbox.beat`). The peers sensor's lines about a session (keyed by
  its id) are not printed on that session's own stream: the journal is the project's, so the sensor
  reports every session and each session leaves out its own start, exit and status. A line left out
  for a session changes nothing about the lines of the same disclosure that the session is shown: each
  line has its own priority (runtime/delivery.py).
- A closed stdout (the Monitor gone, `attend run | head -1`) ends the session quietly with exit 0; the
  rows it could not write stay unrecorded, so the session's next run prints them.
- Authored rows (peer messages) go through `seen.for_session` (sessions/seen.py): never the session's
  own, each item once; a resolved session's first rounds also do its cold start
  (sessions/cold_start.py) once the messages sensor has its baseline.

It sits above the daemon (it runs one while it holds the lock), so it is not in `sessions/`, which the
daemon and the discloser import.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import trio

from attend.files import run_lock_path
from attend.peers.identity import Session, host_runs, process_runs
from attend.peers.mailbox import Mailbox, Unavailable
from attend.peers.transport import open_mailbox
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.daemon import Daemon
from attend.runtime.faults import crash_point
from attend.runtime.sessions.handover import conduits
from attend.runtime.sessions.printer import JOURNAL_CHECK, STALE_TEST_FIRE, SessionPrinter, StreamClosed
from attend.runtime.sessions.register import beat_for_hooks_sessions
from attend.runtime.sessions.runlock import holder_pid, open_lock, try_lock, wait_lock
from attend.runtime.sessions.upkeep import Reexec, Upkeep, found, keep_polling
from attend.runtime.store import Store, StoreUnavailable, open_project_store
from attend.text import printable, printable_path

if TYPE_CHECKING:
    from attend.vocab import SessionRole

__all__ = ["HEARTBEAT", "JOURNAL_CHECK", "STALE_TEST_FIRE", "TAKEOVER_CHECK", "SessionPrinter", "StreamClosed", "serve_session"]

#: How often an attached session tries to take the run lock where it cannot wait for it (seconds).
TAKEOVER_CHECK = 0.25
#: How often a session records that it is alive (seconds).
HEARTBEAT = 5.0
#: How often a session looks for spooled peer messages to publish (seconds; peers/natsbox.py).
SPOOL_CHECK = 1.0


def _log(stderr: TextIO, message: str) -> None:
    stderr.write(f"attend: {printable(message, one_line=True)}\n")  # redacted and escaped: the run log repeats it
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


def _claim_if_orphaned(store: Store, session: str, role: SessionRole) -> None:
    """Take `session`'s row over when the process that held it is gone (stopped, or died): the row
    names a running process serving the session again."""
    record = store.session(session)
    me = os.getpid()
    if record is not None and record.pid != me and (record.role == "stopped" or record.pid is None
                                                      or not process_runs(record.pid)):
        store.set_session_role(session, role, pid=me)


async def _heartbeat(store: Store, session: str, presence: Callable[[], object], role: Callable[[], SessionRole],
                     others: Callable[[], object] = lambda: None) -> None:
    """Record every `HEARTBEAT` seconds that the session lives: its store row, and its peers presence; while
    this process polls, `others` too (the presence of the sessions its hooks alone serve: register.py).

    Both are this process's only while it holds them: a second process with the same session id
    writes neither while the first runs, and takes them over at its next beat once the first is gone.
    """
    while True:
        try:
            presence()
            if role() == "polling":
                others()
        except (OSError, sqlite3.OperationalError):
            pass  # an unwritable cache folder: peers do not see this session, the session still runs
        await trio.sleep(HEARTBEAT)
        try:
            _claim_if_orphaned(store, session, role())
            store.session_heartbeat(session, pid=os.getpid())
        except sqlite3.OperationalError:
            pass  # a busy store: the next beat records it


async def _flush_spool(mailbox: Mailbox) -> None:
    """Publish the peer messages spooled while the server was away, in order, once it is back (transport nats)."""
    while True:
        await trio.sleep(SPOOL_CHECK)
        if mailbox.waiting():
            try:
                await trio.to_thread.run_sync(mailbox.flush, abandon_on_cancel=True)
            except (Unavailable, OSError):
                pass  # still away: the next check tries again


def _activity(project_dir: Path, env: Mapping[str, str]) -> Callable[[str, str], float | None]:
    """A session's transcript's last write, sent with its heartbeat across machines (peers/presence.py)."""
    from attend.peers.presence import last_activity
    from attend.sensors.peers import presence_settings

    settings = presence_settings(project_dir, env)
    return partial(last_activity, settings)


async def serve_session(
    project_dir: Path | str,
    session: Session,
    *,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    clock: Clock = WALL_CLOCK,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `session` for `project_dir` until cancelled: print the journal, and poll while holding the lock.

    `task_status.started()` is called once the session prints (attached or polling).

    Raises:
        StreamClosed: the session's stdout reader went away.
    """
    from attend.spec import layer_paths

    env = dict(os.environ if env is None else env)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    project_dir = Path(project_dir)
    lock = open_lock(run_lock_path(project_dir, env))
    store = open_project_store(layer_paths(project_dir, env), clock=clock)
    mailbox = open_mailbox(env, clock)
    if mailbox.transport == "nats":
        from attend.peers.natsbox import NatsMailbox  # loaded already: open_mailbox made one

        if isinstance(mailbox, NatsMailbox):
            mailbox.activity = _activity(project_dir, env)
    other = _other_process(store, mailbox, session.id, project_dir)
    if other is not None:
        _log(stderr, f"warning: session id {session.id} is already live {other[1]} (pid {other[0]}); this process "
                     f"prints the same stream but leaves pid {other[0]}'s presence and registration alone. "
                     "Give each session its own id (--session or ATTEND_SESSION)")
    printer = SessionPrinter(store, session, stdout=stdout, stderr=stderr, clock=clock, project_dir=project_dir,
                             env=env, claim=other is None)

    def follow_conduits(chosen: str) -> None:
        # With the hooks only (handover.py `conduits`) this process stays up, polls and beats, and prints
        # no line; the session's hooks hand its lines over and move its position. A change of the setting
        # takes effect here within `UPKEEP` (upkeep.py), in either direction.
        if printer.muted == (chosen == "hooks"):
            return
        printer.mute(chosen == "hooks")
        if chosen == "hooks":
            _log(stderr, f"attend.delivery.conduits is hooks: session {session.id}'s lines go through its hooks; "
                         "this attend run polls and prints none")
        else:
            _log(stderr, f"attend.delivery.conduits is {chosen}: this attend run prints session {session.id}'s "
                         "lines again, from where its hooks left off")

    follow_conduits(conduits(project_dir, env))
    role: dict[str, SessionRole] = {"now": "attached"}
    host = (session.owner_pid, session.owner_start) if session.owner_pid and session.owner_start else None
    moving = False  # a re-exec: the same process goes on serving (another id, or a new version)
    stores = [store]
    upkeep = Upkeep(project_dir, env, session, stores, lambda: role["now"] == "polling", partial(_log, stderr), lock,
                    on_conduits=follow_conduits)

    started = clock()

    def beat() -> object:
        # The presence says how the session's lines reach it now (the setting may change under it).
        return mailbox.beat(session.id, project_dir, pid=os.getpid(), started=started, host=host,
                            conduit="hooks" if printer.muted else "monitor")

    try:
        # Across machines (transport nats): this machine's consumer for the project is mirrored into the
        # peers folder while the session runs, each message acked once it is stored there; spooled sends go
        # out when the server is back. Started first: a backlog is drained on the mirror's own thread while the
        # session starts (its cold start and the messages sensor's baseline read what is there by then).
        mailbox.start_receiving(project_dir, before_ack=partial(crash_point, "peer-handed-over"))
        async with trio.open_nursery() as nursery:
            await nursery.start(printer.run)
            nursery.start_soon(_heartbeat, store, session.id, beat, lambda: role["now"],
                               partial(beat_for_hooks_sessions, store, mailbox, project_dir))
            if mailbox.transport != "files":
                nursery.start_soon(_flush_spool, mailbox)
            nursery.start_soon(upkeep.run)
            task_status.started()
            if not try_lock(lock):
                _log(stderr, f"session {session.id} attached to {printable_path(project_dir)}; pid {holder_pid(lock)} polls it")
                while not try_lock(lock):
                    try:
                        # A thread a cancellation leaves blocked holds the lock at most until the file is
                        # closed (the `finally` below): the kernel drops it with the file's last reference.
                        await trio.to_thread.run_sync(wait_lock, lock, abandon_on_cancel=True)
                    except OSError:
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
    except BaseException as exc:
        moving = found(exc, (Reexec,)) is not None
        raise
    finally:
        # Only what is this process's own: another process serving the same session id keeps its row
        # and its heartbeat (each check-and-remove is one step: a conditional UPDATE, the presence lock).
        # A stopped row keeps this pid: the session's stream ran and stopped, which its next hook says.
        # A process that starts again at once as itself (a re-exec keeps its pid) did not stop: its row
        # stays live through the exec (a hook meanwhile finds the session's Monitor live), and the new
        # start takes it over, or lets it go when it serves another id (`Store.release_moved`).
        try:
            if not moving:
                store.set_session_role(session.id, "stopped", pid=os.getpid(), only_pid=os.getpid())
        except sqlite3.Error:
            pass  # the row stays as it was; its dead pid tells it apart from a live one
        store.close()
        lock.close()  # releases the lock, if held
        upkeep.lock.close()  # the lock taken again after its file was removed, if any
        mailbox.stop_receiving(project_dir)
        try:
            # Peers see a clean exit at once (a crash: after LIVE_FOR). A session whose Claude Code process
            # lives on stays present: its hooks serve it now.
            mailbox.leave_presence(session.id, pid=os.getpid())
            if host is not None and not moving and host_runs(*host):
                mailbox.beat(session.id, project_dir, pid=None, started=clock(), host=host)
        except OSError:
            pass
