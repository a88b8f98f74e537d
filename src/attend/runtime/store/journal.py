"""The journal: every notification exactly once, and how far each conduit has delivered it (DESIGN.md, Runtime: Store).

Decisions implemented here:

- `disclose` moves observations from `pending` to the `journal` (and records the disclosure time for
  the engagement model) in ONE transaction;
- printing happens after the commit and is recorded with `mark_printed`. On restart the daemon prints
  every journal row still marked unprinted. So the journal holds every notification exactly once, and
  stdout/stderr are at-least-once (a crash between the print and `mark_printed` prints a line again).
- `attend drain` hands the message lane over and records it with `mark_drained`; `prune_journal` drops
  only rows every conduit is done with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

from attend.records import record
from attend.runtime.store.pending import UNCHANGED, Observation, PendingRows, Unchanged
from attend.runtime.store.poll_history import settle_outcomes
from attend.runtime.store.rows import decoded, integer, json_column, number, text

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.runtime.store.poll_history import PollTrace
    from attend.runtime.store.rows import StoredRow
    from attend.vocab import JSON

__all__ = ["JournalEntry", "JournalRows", "entry_from_row", "for_other_session"]


@record(frozen=True)
class JournalEntry:
    """One notification as the journal holds it."""

    id: int
    time: float
    sensor: str
    trigger: str
    key: str | None
    lane: str
    priority: str
    magnitude: float
    description: str
    disclosure: int | None
    test: bool
    printed: bool
    drained: bool
    meta: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON-ready mapping."""
        return {
            "id": self.id,
            "time": self.time,
            "sensor": self.sensor,
            "trigger": self.trigger,
            "key": self.key,
            "lane": self.lane,
            "priority": self.priority,
            "magnitude": self.magnitude,
            "description": self.description,
            "test": self.test,
            "printed": self.printed,
            "drained": self.drained,
            "meta": self.meta,
        }


def for_other_session(entry: JournalEntry, session: str | None) -> bool:
    """Whether `entry` is a session-scoped line for another session than `session` (never shown to it).

    A reader with no session (an in-process daemon keeping no position) is shown every line.
    """
    from attend.peers.identity import SESSION_META  # late: the hooks' start-up never asks

    target = (entry.meta or {}).get(SESSION_META)
    return session is not None and target is not None and target != session


class JournalRows(PendingRows):
    """The `journal` table of one scope (beside the pending accumulation it is disclosed from)."""

    def commit_shown_poll(
        self,
        sensor: str,
        *,
        states: dict[str, Any] | None,
        observations: Sequence[Observation],
        status: dict[str, Any] | None,
        lane: str,
        priority: str | Sequence[str],
        crate_state: JSON | Unchanged = UNCHANGED,
        trace: PollTrace | None = None,
        state_sensor: str | None = None,
    ) -> list[JournalEntry]:
        """Commit a one-shot poll whose fires were shown to the person who ran it, in ONE transaction.

        The trigger states and status as `commit_poll` writes them (the states under `state_sensor`, a
        session-scoped poll's `name@session`, when given); the fires go straight to the journal as one
        disclosure already delivered (printed and drained, `meta.shown`), never to `pending`, so no
        session's `attend run` and no Stop hook replays them later as if they were current; so the trace
        records them `fired` (no discloser will settle them: they would read `queued` for ever).
        """
        if trace is not None:
            settle_outcomes(trace, fired=True, reason="")
        with self._write():
            self._poll_rows(sensor, states=states, observations=(), status=status, replace_states=True,
                            crate_state=crate_state, trace=trace, state_sensor=state_sensor)
            return self._journal_rows(sensor, observations, lane=lane, priority=priority, now=self._clock(),
                                      test=False, delivered=True)

    def disclose(
        self,
        sensor: str,
        observations: Sequence[Observation],
        *,
        lane: str,
        priority: str | Sequence[str],
        fires: list[float] | None = None,
        time_: float | None = None,
        journal_as: Sequence[Observation] | None = None,
    ) -> list[JournalEntry]:
        """Move `observations` from pending to the journal as one disclosure, in ONE transaction.

        Args:
            sensor: the sensor's name.
            observations: pending observations (with ids) to disclose.
            lane: the lane they ride (`event` or `message`).
            priority: the disclosure's priority (`high`, `medium`, `low`), or one per journaled row
                (`delivery.priorities`: the message lane's are each row's own).
            fires: the sensor's new engagement fire times, stored in the same transaction.
            time_: the disclosure time (default: now).
            journal_as: the rows to journal for them (default: the observations themselves; the
                discloser passes identical ones collapsed into one with a count). Every observation
                leaves pending either way.

        Returns:
            The new journal entries, unprinted.
        """
        now = self._clock() if time_ is None else time_
        with self._write():
            rows = observations if journal_as is None else journal_as
            entries = self._journal_rows(sensor, rows, lane=lane, priority=priority, now=now, test=False)
            self._db.executemany("DELETE FROM pending WHERE id = ?", [(o.id,) for o in observations])
            if fires is not None:
                self._update_status(sensor, {"fires": fires}, now)
        return entries

    def journal_test(
        self, sensor: str, observations: Sequence[Observation], *, lane: str, priority: str | Sequence[str]
    ) -> list[JournalEntry]:
        """Write test notifications (`sensors fire`) straight to the journal, unprinted."""
        with self._write():
            return self._journal_rows(
                sensor, observations, lane=lane, priority=priority, now=self._clock(), test=True
            )

    def _journal_rows(
        self,
        sensor: str,
        observations: Sequence[Observation],
        *,
        lane: str,
        priority: str | Sequence[str],
        now: float,
        test: bool,
        delivered: bool = False,
    ) -> list[JournalEntry]:
        entries: list[JournalEntry] = []
        disclosure: int | None = None
        if observations and not delivered:
            self._ring_after_commit = True  # the sessions print them: their bells ring at the commit
        prios = [priority] * len(observations) if isinstance(priority, str) else list(priority)
        for obs, prio in zip(observations, prios, strict=True):
            cur = self._db.execute(
                "INSERT INTO journal (scope, time, sensor, trigger, key, lane, priority, magnitude, description,"
                " disclosure, test, meta, printed, drained) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.scope,
                    now,
                    sensor,
                    obs.trigger,
                    obs.key,
                    lane,
                    prio,
                    float(obs.magnitude),
                    obs.description,
                    disclosure,
                    int(test),
                    json.dumps({**obs.meta, "shown": True} if delivered else obs.meta, sort_keys=True, default=str),
                    int(delivered),
                    int(delivered),
                ),
            )
            assert cur.lastrowid is not None  # an INSERT sets it
            row_id = cur.lastrowid
            if disclosure is None:
                # A disclosure is named after its first journal row, so the governor can count them.
                disclosure = row_id
                self._db.execute("UPDATE journal SET disclosure = ? WHERE id = ?", (row_id, row_id))
            entries.append(
                JournalEntry(
                    id=row_id,
                    time=now,
                    sensor=sensor,
                    trigger=obs.trigger,
                    key=obs.key,
                    lane=lane,
                    priority=prio,
                    magnitude=float(obs.magnitude),
                    description=obs.description,
                    disclosure=disclosure,
                    test=test,
                    printed=delivered,
                    drained=delivered,
                    meta={**obs.meta, "shown": True} if delivered else dict(obs.meta),
                )
            )
        return entries

    # -- the journal -------------------------------------------------------------------------------

    def journal(self, *, sensor: str | None = None, test: bool | None = None) -> list[JournalEntry]:
        """Journal entries, oldest first, optionally only one sensor's or only (non-)test ones."""
        clauses = ["scope = ?"]
        params: list[object] = [self.scope]
        if sensor is not None:
            clauses.append("sensor = ?")
            params.append(sensor)
        if test is not None:
            clauses.append("test = ?")
            params.append(int(test))
        where = f"WHERE {' AND '.join(clauses)}"
        rows = self._db.execute(f"SELECT * FROM journal {where} ORDER BY id", params)  # noqa: S608
        return list(decoded(rows, entry_from_row))

    def unprinted(self, *, test: bool | None = None) -> list[JournalEntry]:
        """Journal entries not yet printed (after a crash, or test fires from another process)."""
        sql = "SELECT * FROM journal WHERE scope = ? AND printed = 0"
        params: list[Any] = [self.scope]
        if test is not None:
            sql += " AND test = ?"
            params.append(int(test))
        return list(decoded(self._db.execute(sql + " ORDER BY id", params), entry_from_row))

    def mark_printed(self, ids: Iterable[int]) -> None:
        """Record that these entries reached their stream."""
        with self._write():
            self._db.executemany("UPDATE journal SET printed = 1 WHERE id = ?", [(i,) for i in ids])

    def undrained(self, lane: str = "message", *, limit: int | None = None) -> list[JournalEntry]:
        """Entries of `lane` that no conduit has delivered yet, oldest first.

        Delivered means drained by `attend drain`, or printed on stdout (the Monitor stream, high and
        medium priority): a line the Monitor already woke the agent with is not handed over a second
        time by the Stop hook. Low-priority lines went to stderr only, so they stay undelivered until
        drained, and so does a disclosure a crash left unprinted. Test lines (`sensors fire`) belong to
        whoever ran the test and never reach the drain. With `limit`, the oldest `limit` of them.
        """
        rows = self._db.execute(
            "SELECT * FROM journal WHERE scope = ? AND drained = 0 AND lane = ? AND test = 0"
            " AND NOT (printed = 1 AND priority IN ('high', 'medium')) ORDER BY id LIMIT ?",
            (self.scope, lane, -1 if limit is None else limit),
        )
        return list(decoded(rows, entry_from_row))

    def mark_drained(self, ids: Iterable[int]) -> None:
        """Record that `attend drain` delivered these entries."""
        with self._write():
            self._db.executemany("UPDATE journal SET drained = 1 WHERE id = ?", [(i,) for i in ids])

    def prune_journal(self, before: float) -> int:
        """Delete journal rows older than `before` that every conduit is done with; return how many.

        A row is done when it was printed and, on the message lane, delivered (drained, or printed on
        stdout). Undelivered rows stay whatever their age.
        """
        with self._write():
            cur = self._db.execute(
                "DELETE FROM journal WHERE time < ? AND printed = 1"
                " AND (lane != 'message' OR drained = 1 OR priority IN ('high', 'medium'))",
                (before,),
            )
        return int(cur.rowcount)

    def fire_times(self, sensor: str, sessions: Iterable[str], since: float) -> list[float]:
        """The engagement fire times of `scope: session` sensor `sensor` for `sessions` since `since`, oldest
        first: the times of its real event-lane disclosures shown to any of them (`meta.session`).

        A session-scoped sensor's refractory is its session's own (session a's fire never holds b's line),
        so its fire times are read from the journal, per session, as the governor's window is; a one-shot
        poll's lines shown to the person who ran it (`meta.shown`) are no fire, as they are none for a
        project sensor (whose fire times are its status row's `fires`).
        """
        from attend.peers.identity import SESSION_META  # late: the hooks' start-up never asks

        wanted = sorted(set(sessions))
        marks = ", ".join("?" for _ in wanted)
        rows = self._db.execute(
            "SELECT DISTINCT time FROM journal WHERE scope = ? AND sensor = ? AND lane = 'event' AND test = 0"
            f" AND time >= ? AND json_valid(meta) AND json_extract(meta, '$.{SESSION_META}') IN ({marks})"
            " AND json_extract(meta, '$.shown') IS NULL ORDER BY time",
            (self.scope, sensor, since, *wanted),
        )
        return [float(r["time"]) for r in rows if isinstance(r["time"], float | int) and math.isfinite(r["time"])]

    def woken(self, lane: str, since: float) -> list[tuple[float, bool, str | None]]:
        """The real (non-test) disclosures on `lane` since `since` that woke an agent (a high or medium row:
        low ones went to stderr only and spent no budget), oldest first, as `(time, high, session)`.

        The governor rebuilds its window from these after a restart. `high`: the disclosure had a high row
        (a high disclosure waits only for their cooldown). `session`: the session a `scope: session`
        line was shown to (None: a project-wide line, which woke every session); a disclosure is listed
        once per session it woke.
        """
        from attend.peers.identity import SESSION_META  # late: the hooks' start-up never asks

        session = f"CASE WHEN json_valid(meta) THEN json_extract(meta, '$.{SESSION_META}') END"
        rows = self._db.execute(
            f"SELECT disclosure, time, MAX(priority = 'high') AS high, {session} AS session FROM journal"
            " WHERE scope = ? AND lane = ? AND test = 0 AND time >= ? AND priority IN ('high', 'medium')"
            " GROUP BY disclosure, time, session ORDER BY time, disclosure",
            (self.scope, lane, since),
        )
        return [(float(r["time"]), bool(r["high"]), r["session"] if isinstance(r["session"], str) else None)
                for r in rows if isinstance(r["time"], float | int) and math.isfinite(r["time"])]


def entry_from_row(row: StoredRow) -> JournalEntry:
    """A journal row as an entry; `BadRow` when a column does not hold what attend wrote."""
    return JournalEntry(
        id=integer(row["id"], "id"),  # a rowid: always an integer
        time=number(row["time"], "time"),
        sensor=text(row["sensor"], "sensor"),
        trigger=text(row["trigger"], "trigger"),
        key=text(row["key"], "key", optional=True),
        lane=text(row["lane"], "lane"),
        priority=text(row["priority"], "priority"),
        magnitude=number(row["magnitude"], "magnitude"),
        description=text(row["description"], "description"),
        disclosure=integer(row["disclosure"], "disclosure", optional=True),
        test=bool(integer(row["test"], "test")),
        printed=bool(integer(row["printed"], "printed")),
        drained=bool(integer(row["drained"], "drained")),
        meta=json_column(row, "meta", shape=dict),
    )
