"""Printing the project's journal on one session's streams (DESIGN.md, "Sessions").

- Every session, the poller included, prints through one `SessionPrinter`: the journal rows after its
  stored position (store/session_rows.py), written first and recorded after (`advance_session`), so no
  row is skipped; only a crash between the write and the record can show a row again, and only in
  the session that crashed. A restarted session (same id) resumes; a new one starts at the journal's
  end; an unresolved one (`pid-<pid>`) keeps no position.
- What a session is shown (not the peers lines about itself, nor its own messages, each item once,
  priced for it alone) is `handover.shown_to`, shared with its hooks; a resolved session's first
  rounds also do its cold start (cold_start.py) once the messages sensor has its baseline.

- When it looks: as soon as it is told, and otherwise rarely. The process's own disclosures wake it
  (`wake`); rows another process commits ring its bell (store/bell.py: the committing connection rings
  each live session's), and it looks every `JOURNAL_FALLBACK` seconds besides, so a bell that never
  rings delays a line and never loses it. Without a bell of its own (it cannot bind one, another
  process holds the session's row, or no session row) it looks every `JOURNAL_CHECK` seconds, as do
  the rounds right after a skipped one and those of a pending cold start.

The daemon and the discloser print through it; `runtime/serve.py` (`attend run`) makes one per session.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TextIO

import trio

from attend.peers.identity import PRESENCE_SENSOR, Session
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.delivery import is_stdout_priority, joined, write_entries
from attend.runtime.faults import crash_point
from attend.runtime.sessions.cold_start import (
    COLD_START_WAIT,
    cold_start,
    message_sensors,
)
from attend.runtime.sessions.handover import shown_to
from attend.runtime.sessions.news import digest_rules, news, stale_after
from attend.runtime.sessions.seen import items_of
from attend.runtime.store import Store
from attend.runtime.store.bell import bell_address, bind_bell

__all__ = ["JOURNAL_CHECK", "JOURNAL_FALLBACK", "STALE_TEST_FIRE", "Printer", "SessionPrinter", "StreamClosed"]

#: How often a session without a bell looks for journal rows written by another process (seconds).
JOURNAL_CHECK = 0.2
#: How often a session with a bell looks all the same (seconds): a bell that never rang delays a line this long.
JOURNAL_FALLBACK = 2.0
#: Test lines older than this (seconds) are printed by a session only when they came after its start:
#: none made before it is (`sensors fire` showed them where it ran, and a test belongs to the session
#: that ran it).
STALE_TEST_FIRE = 0.0


class StreamClosed(Exception):
    """The session's stdout (or stderr) reader went away."""


class Printer(Protocol):
    """What the daemon and the discloser ask of the printer they print through: a session's `SessionPrinter`,
    or a headless poller's `headless.MutePrinter`, which prints nothing."""

    #: Where the low-priority lines and the daemon's own log go.
    stderr: TextIO

    def wake(self) -> None:
        """Something may be new in the journal: look soon."""

    def print_new(self) -> int:
        """Print what is new now; how many lines were printed."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Print until cancelled (started once ready)."""


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
        open_bell: binds the session's bell at an address (`bind_bell`; a test hands one that fails or
            never rings, to show the fallback timer delivering).
        fallback: seconds between two looks with a bell (`JOURNAL_FALLBACK`).
    """

    def __init__(
        self,
        store: Store,
        session: Session | None,
        *,
        stdout: TextIO,
        stderr: TextIO,
        clock: Clock = WALL_CLOCK,
        project_dir: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        claim: bool = True,
        open_bell: Callable[[bytes], socket.socket] = bind_bell,
        fallback: float = JOURNAL_FALLBACK,
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
        self._open_bell = open_bell
        self._fallback = fallback
        #: Whether this process holds the session's row, so writers ring its bell (store/bell.py).
        self._rung_here = session is not None and claim
        #: Whether it prints nothing for now (`attend.delivery.conduits: hooks`: the hooks carry the lines).
        self.muted = False

    def mute(self, muted: bool) -> None:
        """Print nothing from now on (`muted`), or print again: from where the session's hooks left off,
        what is still news first (as a stream that starts)."""
        if muted == self.muted:
            return
        self.muted = muted
        self._digests = None  # the sensor files may have changed meanwhile
        if not muted and self.session_id is not None:
            row = self.store.session(self.session_id)
            if row is not None:
                self.position = max(self.position, row.printed_upto)
            self._restarting = True
        self.wake()

    def wake(self) -> None:
        """Ask for a round now (this process just journaled something)."""
        self._wake.set()

    def print_new(self) -> int:
        """Print the rows this session has not shown yet and record them; return how many were written.

        Raises:
            StreamClosed: a stream's reader went away; nothing of this round was recorded.
        """
        if self.muted:
            return 0
        entries, drained_upto = self.store.session_backlog(
            self.session_id, self.position, stale_test_before=self.clock() - STALE_TEST_FIRE
        )
        written = 0
        if entries:
            # A message its Stop hook already handed over is not shown to the same session again, nor a
            # peers line about the session itself (its own start is not news to it).
            seen = self.store.seen_items(self.session_id) if self.session_id is not None else set()
            shown, items = shown_to(self.session_id, entries, drained_upto, seen, position=self.position)
            if self._restarting:  # what the stream finds as it (re)starts: only what is still news
                shown = news(shown, now=self.clock(), started=self._started, stale_after=self._stale_after(),
                             digest_of=self._digest_of)
            # A low-priority message-lane line goes to stderr, which the agent never reads: it stays unseen,
            # so the session's Stop-hook drain hands it over once (store/session_rows.py `drain_backlog`).
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
        """`attend.delivery.stale_after` of the project's config, in seconds (news.py `stale_after`)."""
        return stale_after(self.project_dir, self.env)

    def _digest_of(self, sensor: str) -> Any:
        """`sensor`'s compiled digest rule (None without one, or without a project to load it from)."""
        if self.project_dir is None:
            return None
        if self._digests is None:
            self._digests = {}
            try:
                self._digests = digest_rules(self.project_dir, self.env)
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
                stream.write(line.text() + "\n")
                stream.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise StreamClosed(str(exc)) from None
        self.store.record_cold_start(session, handed.seen)  # after printing: a crash shows them again, once
        self.cold_pending = False
        return len(handed.lines)

    def _bell(self) -> socket.socket | None:
        """This session's bound bell, or None (no session row of this process's, or it cannot bind)."""
        if not self._rung_here or self.session_id is None:
            return None
        try:
            return self._open_bell(bell_address(self.store.scope, self.session_id, os.getpid()))
        except OSError:
            return None

    async def _listen(self, bell: socket.socket) -> None:
        """Wake a round each time the bell rings (the rings waiting are one round); end if it breaks."""
        while True:
            await trio.lowlevel.wait_readable(bell)
            try:
                while True:
                    bell.recv(64)
            except BlockingIOError:
                pass
            except OSError:
                return  # a broken bell: the fallback timer looks from now on
            self._wake.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Print new rows as they come: woken by this process or the bell, else every `JOURNAL_FALLBACK`
        seconds (`JOURNAL_CHECK` without a bell)."""
        bell = self._bell()
        try:
            async with trio.open_nursery() as nursery:
                if bell is not None:
                    nursery.start_soon(self._listen, bell)
                task_status.started()
                await self._rounds(bell is not None)
        finally:
            if bell is not None:
                bell.close()

    async def _rounds(self, rung: bool) -> None:
        skipped = ""
        while True:
            self._wake = trio.Event()  # a ring during the round below wakes the next one
            try:
                self.print_new()
                skipped = ""
            except sqlite3.OperationalError as exc:
                # Locked past busy_timeout: nothing was recorded, so the next round prints the same rows.
                # Said once per reason, not at every round while it lasts.
                if str(exc) != skipped:
                    self.stderr.write(f"attend: printing round skipped: {exc}\n")
                skipped = str(exc)
            slow = rung and not skipped and not self.cold_pending
            with trio.move_on_after(self._fallback if slow else JOURNAL_CHECK):
                await self._wake.wait()
