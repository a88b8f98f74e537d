"""The observation pipeline after a poll: evaluate, store, accumulate, govern, disclose (DESIGN.md, Runtime).

Two stages, shared by the daemon and the one-shot commands (`sensors poll`, `sensors fire`):

1. `record_poll` — a poll outcome through the sensor's compiled triggers (the one step function), then
   ONE store transaction holding the new trigger states, the fires as pending observations, the
   sensor's status and cadence, and a crate sensor's exported state. A failed poll stores only its status: trigger state stays untouched
   and no observation is added, so a broken sensor never reads as "every item removed".
2. `Discloser.run_once` — for each sensor holding pending observations (a `scope: session` sensor's
   per session: each session's lines are an accumulator of their own): engagement (threshold and
   refractory, skipped on the message lane), then the lane's governor; a ready, allowed accumulator
   moves to the journal in one transaction and is printed (stdout/stderr by priority) after the
   commit. A held accumulator stays pending and `run_once` says when to look again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import trio

from attend import ir
from attend.runtime.cadence import Cadence, CadenceParams, next_cadence
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.delivery import (
    PROGRESS_META,
    SESSION_META,
    collapse_identical,
    highest,
    newest_per_key,
    priorities,
)
from attend.runtime.engagement import EngagementParams, readiness, record_fire
from attend.runtime.faults import crash_point
from attend.runtime.governor import DEFAULT_GOVERNORS, Governor, GovernorParams
from attend.runtime.kinds import PollOutcome, session_state_key
from attend.runtime.noise.history import poll_trace
from attend.runtime.noise.shelving import split_shelved
from attend.runtime.observations import observations_from
from attend.runtime.sessions.printer import Printer, SessionPrinter
from attend.runtime.store import Observation, Store
from attend.runtime.store.pending import UNCHANGED
from attend.runtime.store.sensor_status import POLL_STATE

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor, Fire, SensorStep
    from attend.compiler.digest import Digest
    from attend.runtime.store.poll_history import PollTrace
    from attend.vocab import Priority, SensorState

__all__ = ["DEFAULT_THRESHOLD", "Discloser", "PollRecord", "SensorTerms", "record_poll"]

#: The emission threshold of a sensor whose document has none (the spec's default).
DEFAULT_THRESHOLD = 2.0

#: The longest the discloser sleeps: how soon it sees what another process (`sensors poll`, a
#: `sensors fire` test line) put into the store.
EXTERNAL_CHECK = 0.5

#: The shortest sleep between two rounds, so a retry time that floating point puts a hair in the past
#: cannot spin the loop.
MIN_SLEEP = 0.01

#: How many line errors of a `lines` output the status keeps.
LINE_ERRORS_KEPT = 20


def _no_trace() -> PollTrace:
    """The trace of a record no poll has filled yet: empty."""
    return {}


@dataclass(slots=True)
class PollRecord:
    """What recording one poll did: the step (None after a failed poll), the observations, the cadence."""

    outcome: PollOutcome
    step: SensorStep | None = None
    observations: list[Observation] = field(default_factory=list)
    cadence: Cadence | None = None
    state: SensorState = "ok"
    message: str = ""
    #: The fires a shelf held (evaluated and recorded in the history, never delivered).
    shelved: list[Fire] = field(default_factory=list)
    #: The fires another fire of the poll stands for (superseded, or the same line), each with why.
    replaced: list[tuple[Fire, dict[str, Any]]] = field(default_factory=list)
    #: The poll's history record (`runtime.noise.history.poll_trace`).
    trace: PollTrace = field(default_factory=_no_trace)

    lane: str = "event"

    @property
    def priorities(self) -> list[Priority]:
        """Each observation's own priority (`delivery.priorities`)."""
        return priorities([o.magnitude for o in self.observations])

    @property
    def priority(self) -> Priority:
        """This poll's priority as one word: the highest of `priorities` (`low` for none)."""
        return highest(self.priorities) or "low"


def record_poll(
    store: Store | None,
    compiled: CompiledSensor,
    outcome: PollOutcome,
    *,
    now: float,
    cadence_params: CadenceParams | None = None,
    cadence: Cadence | None = None,
    test: bool = False,
    dry_run: bool = False,
    shown: bool = False,
    session: str | None = None,
    woken: float | None = None,
    took: float | None = None,
) -> PollRecord:
    """Evaluate one poll outcome against the stored state and (unless a dry run) commit it in one transaction.

    Args:
        store: the store, or None to evaluate from no stored state without storing anything.
        compiled: the `CompiledSensor`.
        outcome: what the kind's poll returned.
        now: the poll's time (wall clock seconds).
        cadence_params: the sensor's cadence; with `cadence`, the next poll is scheduled and stored.
        cadence: the cadence before this poll.
        test: evaluate as a test fire.
        dry_run: evaluate against the stored state (what the next real poll would do) and write nothing.
        shown: the fires were shown to the person who ran a one-shot poll: they go to the journal as
            delivered, not to the pending accumulation, so no daemon prints them again.
        session: the session a `scope: session` sensor was polled for: its trigger states are that
            session's (`session_state_key`), and its observations carry `meta.session`, so only that
            session is shown their lines.
        woken: when the change that woke this poll was seen (wall clock seconds; None: not woken by a
            change); the history keeps it, so a late line shows where its time went.
        took: the seconds the poll itself ran (the kind's work: a command's spawn and output, a call).

    Returns:
        The `PollRecord`.
    """
    record = PollRecord(outcome=outcome, state=outcome.state, message=outcome.message,
                        lane=getattr(compiled, "lane", "event"))
    states = None
    state_key = session_state_key(compiled.name, session)
    if outcome.ok:
        stored = store.trigger_states(state_key) if store is not None else {}
        try:
            record.step = compiled.step(stored, outcome.result, test=test, now=now, digest=False, session=session)
        except Exception as exc:  # noqa: BLE001 - an evaluator failure is the sensor's state, not a crash
            record.state = "malformed"
            record.message = f"the result could not be evaluated: {type(exc).__name__}: {exc}"
        else:
            states = record.step.states
            shelves = store.shelves(compiled.name, now=now) if store is not None else []
            # One line per finding: a superseded fire is dropped whether or not its superseder is
            # shelved (it fired); identical lines fold after shelving, the digest counts what is left.
            delivered, record.replaced = compiled.supersede(record.step.fires)
            delivered, record.shelved = split_shelved(delivered, shelves, now)
            delivered, folded = compiled.fold(delivered)
            record.replaced.extend(folded)
            digest: Digest | None = getattr(compiled, "digest", None)
            if digest is not None:
                delivered = digest.apply(delivered)  # after shelving: a shelved fire is not counted
            record.observations = observations_from(delivered, outcome, now, session=session)
            notes = []
            if outcome.line_errors:
                notes.append(f"{len(outcome.line_errors)} output line(s) did not parse")
            skipped = outcome.skipped
            if skipped:
                notes.append(f"skipped {len(skipped)} unreadable: " + "; ".join(skipped[:3]))
            notes.extend(record.step.warnings[:3])
            notes.extend(outcome.notes)
            record.message = "; ".join(notes)
    failed = record.state != "ok"
    status: dict[str, Any] = {
        "state": record.state,
        "message": record.message,
        "state_source": POLL_STATE,
        "last_poll": now,
        "lane": getattr(compiled, "lane", None),
        "lane_note": getattr(compiled, "lane_note", "") or "",
    }
    if outcome.ok or outcome.line_errors:  # a lines output where nothing parsed shows its lines too
        status["line_errors"] = [str(e) for e in outcome.line_errors[:LINE_ERRORS_KEPT]]
    if cadence_params is not None and cadence is not None:
        record.cadence = next_cadence(cadence_params, cadence, observed=bool(record.observations), failed=failed)
        status.update(
            interval=record.cadence.interval,
            next_poll=now + record.cadence.interval,
            quiet_polls=record.cadence.quiet_polls,
            failures=record.cadence.failures,
        )
    record.trace = poll_trace(outcome, record.step if states is not None else None, record.shelved,
                              now=now, state=record.state, message=record.message, replaced=record.replaced)
    if session is not None:
        record.trace["session"] = session
    if woken is not None:
        record.trace["woken"] = woken
    if took is not None:
        record.trace["took"] = took
    if store is not None and not dry_run:
        crate_state = outcome.crate_state if states is not None else UNCHANGED
        if shown:
            store.commit_shown_poll(compiled.name, states=states, observations=record.observations, status=status,
                                    lane=getattr(compiled, "lane", "event"), priority=record.priorities,
                                    trace=record.trace, state_sensor=state_key, crate_state=crate_state)
        else:
            store.commit_poll(compiled.name, states=states, observations=record.observations, status=status,
                              trace=record.trace, state_sensor=state_key, crate_state=crate_state)
        crash_point("poll-committed")
    return record


@dataclass(frozen=True, slots=True)
class SensorTerms:
    """What the discloser needs to know about a sensor: its lane and its emission threshold."""

    lane: str = "event"
    threshold: float = DEFAULT_THRESHOLD

    @classmethod
    def of(cls, lane: str, fields: ir.Sensor) -> SensorTerms:
        """The terms of a sensor (`MergedSensor.ir`) on `lane`: its `threshold`."""
        return cls(lane, fields.threshold)


class Discloser:
    """Turns pending accumulations into journal entries and printed lines, under engagement and governor.

    Args:
        store: the store.
        terms: maps a sensor name to its `SensorTerms`, or None for a sensor that is not loaded (its
            pending observations wait for it to come back).
        printer: the session's printer (sessions.py), asked to print right after each disclosure.
        stdout: without `printer`: the Monitor stream (high and medium) of a printer made here.
        stderr: without `printer`: where its low-priority lines go.
        engagement: the engagement parameters.
        governors: each lane's governor limits.
        clock: wall-clock seconds.
    """

    def __init__(
        self,
        store: Store,
        terms: Callable[[str], SensorTerms | None],
        *,
        printer: Printer | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        engagement: EngagementParams | None = None,
        governors: dict[str, GovernorParams] | None = None,
        clock: Clock = WALL_CLOCK,
    ) -> None:
        self.store = store
        self.terms = terms
        self.engagement = engagement or EngagementParams()
        self.clock = clock
        if printer is None:
            if stdout is None or stderr is None:
                raise TypeError("Discloser needs a printer, or stdout and stderr")
            printer = SessionPrinter(store, None, stdout=stdout, stderr=stderr, clock=clock)
        self.printer = printer
        self.stderr = printer.stderr
        self.governors: dict[str, Governor] = {}
        self._wake = trio.Event()
        self.configure(engagement=self.engagement, governors=governors or DEFAULT_GOVERNORS)

    def configure(self, *, engagement: EngagementParams, governors: dict[str, GovernorParams]) -> None:
        """Apply (new) parameters; each lane's window is rebuilt from the journal's disclosures."""
        self.engagement = engagement
        now = self.clock()
        for lane, params in governors.items():
            governor = self.governors[lane] = Governor(params)
            for at, high, session in self.store.woken(lane, now - max(params.window, params.cooldown)):
                governor.record(at, high=high, sessions=None if session is None else [session])

    def wake(self) -> None:
        """Ask the running loop for a round now (new observations were stored)."""
        self._wake.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The disclosure loop: print what is new in the journal, disclose what is ready, sleep until due."""
        task_status.started()
        skipped = ""
        while True:
            try:
                self.printer.print_new()
                due = self.run_once()
                skipped = ""
            except sqlite3.OperationalError as exc:
                # Locked past busy_timeout: every step is its own transaction, so retry next round.
                # Said once per reason, not at every round while it lasts.
                if str(exc) != skipped:
                    self.stderr.write(f"attend: disclosure round skipped: {exc}\n")
                skipped = str(exc)
                due = None
            delay = EXTERNAL_CHECK if due is None else min(max(due - self.clock(), MIN_SLEEP), EXTERNAL_CHECK)
            with trio.move_on_after(delay):
                await self._wake.wait()
            self._wake = trio.Event()

    def run_once(self) -> float | None:
        """Disclose every ready, allowed accumulation now; return when a held one may be ready (or None)."""
        next_wake: float | None = None
        for name in self.store.pending_sensors():
            terms = self.terms(name)
            if terms is None:
                continue
            now = self.clock()
            pending = self.store.pending(name)
            if not pending:
                continue  # only damaged rows wait (store/rows.py): nothing to disclose, no governor slot spent
            # Each session's lines are its own accumulator: priced, held and released apart (a held line
            # for session a never carries b's along); a project-wide sensor has the one.
            for session, group in _per_session(pending).items():
                next_wake = _earliest(next_wake, self._disclose(name, terms, group, session, now))
        return next_wake

    def _disclose(self, name: str, terms: SensorTerms, pending: list[Observation], session: str | None,
                  now: float) -> float | None:
        """Disclose `pending` (one accumulator of `name`: the lines for `session`, or with None the
        project-wide ones) when it is ready and allowed; return when it may be ready if it is held (or None)."""
        # Whose refractory and whose budget: a `scope: session` sensor's lines are their session's own, so
        # only the fires shown to that session hold them; a project-wide line's are the sensor's.
        sessions = None if session is None else [session]
        fires = self._fires(name, sessions, now)
        total = sum(o.magnitude for o in pending)
        ready = readiness(
            total=total,
            count=len(pending),
            threshold=terms.threshold,
            fires=fires,
            now=now,
            params=self.engagement,
            lane=terms.lane,
            progress=any((o.meta or {}).get(PROGRESS_META) is True for o in pending),
        )
        if not ready.ready:
            self.store.settle_history(name, fired=False, reason=ready.reason, now=now, session=session)
            return ready.retry_at
        # A key held with several values goes out as its newest one, saying how many it stands for.
        rows = collapse_identical(newest_per_key(pending))
        prios = priorities([o.magnitude for o in rows])
        top = highest(prios) or "low"
        # Only what wakes the agent spends its budget: a low disclosure (stderr only) passes the
        # governor and is not counted; a high one waits for the cooldown after a high one, never the
        # rate window. Whose agent: a `scope: session` line's own session only.
        governor = self.governors.get(terms.lane) or self.governors["event"]
        if top != "low":
            slot = governor.next_slot(now, urgent=top == "high", sessions=sessions)
            if slot > now:
                self.store.settle_history(name, fired=False, reason="governor", now=now, session=session)
                return slot
        # A session line's fire is its journal row (`_fires`); a project line's goes to the status row.
        new_fires = record_fire(fires, now, self.engagement) if terms.lane == "event" and sessions is None else None
        self.store.disclose(
            name, pending, lane=terms.lane, priority=prios, fires=new_fires, time_=now, journal_as=rows,
        )
        crash_point("disclosed")
        if top != "low":
            governor.record(now, high=top == "high", sessions=sessions)
        self.store.settle_history(name, fired=True, now=now, session=session)
        # Printed after the commit: the journal holds it exactly once, the stream at least once.
        self.printer.print_new()
        return None

    def _fires(self, name: str, sessions: list[str] | None, now: float) -> list[float]:
        """The engagement fire times that hold `name`'s line for `sessions` (None: a project-wide line):
        a project-wide line's are the sensor's (its status row); a `scope: session` line's are those of
        the lines shown to its sessions (the journal's), so session a's fire never holds b's line."""
        if sessions is None:
            status = self.store.status(name)
            return status.fires if status is not None else []
        return self.store.fire_times(name, sessions, now - self.engagement.live_window)


def _per_session(pending: list[Observation]) -> dict[str | None, list[Observation]]:
    """`pending` split by the session each line is for (`meta.session`; None: the project-wide lines), in
    the order each group's first line came."""
    groups: dict[str | None, list[Observation]] = {}
    for obs in pending:
        session = (obs.meta or {}).get(SESSION_META)
        groups.setdefault(session if isinstance(session, str) else None, []).append(obs)
    return groups


def _earliest(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
