"""Poll history rows (DESIGN.md, Noise controls and traces): the `poll_history` table.

One trace per poll (`runtime.noise.history.poll_trace`), written by `commit_poll` in the poll's own
transaction, which also prunes the sensor's traces past `HISTORY_KEPT`: the table is bounded by
sensors × 50 rows. `open` marks a trace with fires the discloser has not settled yet; `settle_history`
writes the discloser's verdict (disclosed, or held by threshold, refractory or the governor) into them.
"""

from __future__ import annotations

import json

from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.rows import BadRow, decoded, json_column

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any, TypedDict

    from attend.runtime.store.rows import StoredRow
    from attend.vocab import JSON, FireOutcome

    class TraceOutcome(TypedDict, total=False):
        """What became of one fire (or one transition pending `for:`) in a trigger's part of a poll trace:
        its key, its outcome and why; `more` alone stands for the outcomes past the listed ones."""

        key: JSON
        outcome: FireOutcome
        description: str
        #: Why it was held (`flapping`, `for`, `shelved`, `superseded`, `same line`, or the discloser's reason).
        reason: str
        #: `discloser`: held by the discloser, which settles it (`settle_outcomes`).
        by: str
        #: The trigger that superseded it.
        instead: str
        #: When a transition pending `for:` will have held long enough.
        until: float | None
        #: A fire the discloser held before it went out: how long, and the last reason.
        held_for: float
        held_by: str
        #: Flap detection's own notification (`flapping` or `settled`).
        note: str
        more: int

    class TriggerTrace(TypedDict, total=False):
        """One trigger's part of a poll trace."""

        trigger: str
        baseline: bool
        selected: int
        transition: str
        outcomes: list[TraceOutcome]
        #: The keys flapping as of this poll: key text -> {since, held, last, ...}.
        flapping: dict[str, dict[str, Any]]

    class PollTrace(TypedDict, total=False):
        """One poll's trace, as `noise.history.poll_trace` writes it and `poll_history` stores it (a stored one
        is the JSON object attend wrote: `trace_from_row` refuses any other)."""

        time: float
        state: str
        message: str
        triggers: list[TriggerTrace]
        #: The session a `scope: session` poll was for.
        session: str
        #: A poll a change woke: how long after the change was seen it ran, and how long it took.
        woken: float
        took: float

__all__ = ["QUEUED", "PollHistoryRows", "settle_outcomes"]

#: The outcome of a fire that became an observation, before the discloser has decided.
QUEUED: FireOutcome = "queued"


def settle_outcomes(trace: PollTrace, *, fired: bool, reason: str, now: float | None = None) -> bool:
    """Rewrite the discloser's verdict into a stored trace: its queued (or discloser-held) outcomes become
    `fired`, or `held` by `reason`. Returns whether anything is still open (waiting on the discloser).

    A fire the discloser held before it went out keeps how long it was held (`held_for`, from the
    poll's time to `now`) and the last reason (`held_by`): `fired after 4m32s held: relative refractory`.
    """
    open_ = False
    for trigger in trace.get("triggers", []):
        for entry in trigger.get("outcomes", []):
            waiting = entry.get("outcome") == QUEUED or (entry.get("outcome") == "held" and entry.get("by") == "discloser")
            if not waiting:
                continue
            if fired:
                if entry.get("outcome") == "held" and now is not None and isinstance(trace.get("time"), int | float):
                    entry["held_for"] = max(0.0, now - float(trace["time"]))
                    entry["held_by"] = entry.get("reason", "")
                entry.pop("by", None)
                entry.pop("reason", None)
                entry["outcome"] = "fired"
            else:
                entry.update({"outcome": "held", "reason": reason, "by": "discloser"})
                open_ = True
    return open_


class PollHistoryRows(StoreConnection):
    """The `poll_history` table of one scope."""

    def _record_history(self, sensor: str, trace: PollTrace, now: float) -> None:
        """Store one poll's trace and prune the sensor's oldest past `HISTORY_KEPT` (inside a write)."""
        open_ = any(o.get("outcome") == QUEUED for t in trace.get("triggers", ()) for o in t.get("outcomes", ()))
        self._db.execute(
            "INSERT INTO poll_history (scope, sensor, time, trace, open) VALUES (?, ?, ?, ?, ?)",
            (self.scope, sensor, trace.get("time", now), json.dumps(trace, sort_keys=True, default=str), int(open_)),
        )
        self._db.execute(
            "DELETE FROM poll_history WHERE scope = ? AND sensor = ? AND id NOT IN"
            " (SELECT id FROM poll_history WHERE scope = ? AND sensor = ? ORDER BY id DESC LIMIT ?)",
            (self.scope, sensor, self.scope, sensor, _history_kept()),
        )

    def history(self, sensor: str, *, limit: int | None = None) -> list[PollTrace]:
        """The sensor's last `limit` poll traces (default `HISTORY_KEPT`), newest first."""
        limit = _history_kept() if limit is None else limit
        rows = self._db.execute(
            "SELECT trace FROM poll_history WHERE scope = ? AND sensor = ? ORDER BY id DESC LIMIT ?",
            (self.scope, sensor, min(max(0, int(limit)), _history_kept())),  # no more are kept; 10**30 fits no SQLite int
        )
        return list(decoded(rows, trace_from_row))

    def settle_history(self, sensor: str, *, fired: bool, reason: str = "", now: float | None = None,
                       session: str | None = None) -> None:
        """Write the discloser's verdict on the sensor's waiting fires into their traces: `fired` when it
        disclosed them (with how long and why they were held, measured to `now`), else `held` by
        `reason`. Writes nothing when nothing changes.

        `session`: the verdict is on the lines of the polls for that session (a `scope: session` sensor's
        lines are disclosed per session); None: on the polls for no session (a project-wide sensor's all).
        """
        rows = self._db.execute(
            "SELECT id, trace FROM poll_history WHERE scope = ? AND sensor = ? AND open = 1", (self.scope, sensor)
        ).fetchall()
        updates = []
        for row in rows:
            try:
                trace = trace_from_row(row)
            except BadRow:
                updates.append((row["trace"], 0, row["id"]))  # closed, left as it is: doctor lists it
                continue
            if (trace["session"] if isinstance(trace.get("session"), str) else None) != session:
                continue  # another session's lines: their own verdict
            before = json.dumps(trace, sort_keys=True, default=str)
            still_open = settle_outcomes(trace, fired=fired, reason=reason, now=now)
            after = json.dumps(trace, sort_keys=True, default=str)
            if after != before or not still_open:
                updates.append((after, int(still_open), row["id"]))
        if updates:
            with self._write():
                self._db.executemany("UPDATE poll_history SET trace = ?, open = ? WHERE id = ?", updates)


def trace_from_row(row: StoredRow) -> PollTrace:
    """A `poll_history` row's trace; `BadRow` when it is not the JSON object attend wrote."""
    from typing import cast  # late: no hook reads a trace (typing stays unimported on the hooks' start-up)

    return cast("PollTrace", json_column(row, "trace", shape=dict))  # the object attend wrote


def _history_kept() -> int:
    """`HISTORY_KEPT` (spec/schema.py), imported when a trace is written or read: a store opened by a hook
    never loads the spec."""
    from attend.spec.schema import HISTORY_KEPT

    return HISTORY_KEPT
