"""Pending observations and the poll commit (DESIGN.md, Runtime: Store).

Decision implemented here: `commit_poll` writes a poll's new trigger states, its observations (into
`pending`, a sensor's accumulator), its status and a crate sensor's export in ONE transaction, so a
crash never keeps a state change without the fires it caused, nor the fires without the state.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence

from attend.records import field, record
from attend.runtime.store.poll_history import PollHistoryRows
from attend.runtime.store.rows import decoded, integer, json_column, number, text
from attend.runtime.store.sensor_memory import CrateStateRows
from attend.runtime.store.sensor_status import SensorStatusRows
from attend.runtime.store.shelves import ShelfRows
from attend.runtime.store.trigger_states import TriggerStateRows

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.runtime.store.poll_history import PollTrace
    from attend.runtime.store.rows import StoredRow
    from attend.vocab import JSON

__all__ = ["UNCHANGED", "Observation", "PendingRows", "Unchanged"]


class Unchanged(enum.Enum):
    """The type of `UNCHANGED` (a one-member enum: a sentinel type checkers tell apart from a JSON value)."""

    UNCHANGED = "unchanged"


#: "Leave the crate state as it is": `commit_poll`'s default, and a poll's that exported none (None is a state
#: a sensor may export).
UNCHANGED = Unchanged.UNCHANGED


@record(frozen=True)
class Observation:
    """One fire waiting in a sensor's accumulator (a `pending` row), or about to be stored as one."""

    trigger: str
    magnitude: float
    description: str
    key: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    time: float = 0.0


class PendingRows(TriggerStateRows, SensorStatusRows, CrateStateRows, ShelfRows, PollHistoryRows):
    """The `pending` table of one scope, and the one transaction a poll commits."""

    def commit_poll(
        self,
        sensor: str,
        *,
        states: dict[str, Any] | None,
        observations: Sequence[Observation] = (),
        status: dict[str, Any] | None = None,
        replace_states: bool = True,
        crate_state: JSON | Unchanged = UNCHANGED,
        trace: PollTrace | None = None,
        state_sensor: str | None = None,
    ) -> list[int]:
        """Commit one poll in ONE transaction: the new trigger states, the observations, the status.

        Args:
            sensor: the sensor's name.
            states: the trigger states the step returned (None: leave them untouched, as after a
                failed poll). With `replace_states` the sensor's other stored states (of triggers
                that were edited or removed) are dropped.
            observations: the fires, appended to the sensor's pending accumulation.
            status: fields of the sensor's status row to update (see `SensorStatus`).
            replace_states: drop stored states whose hash is not in `states`.
            crate_state: the state a crate sensor exported after this poll (left as it was when
                not given), so the sensor's own memory and its trigger states move together.
            trace: the poll's history record (`runtime.noise.history.poll_trace`), stored with the poll
                and the sensor's oldest traces past the bound pruned, in the same transaction.
            state_sensor: where the trigger states and crate state are kept (default `sensor`): a
                session-scoped sensor keeps them per session (`session_state_key`).

        Returns:
            The pending ids of the stored observations.
        """
        with self._write():
            return self._poll_rows(sensor, states=states, observations=observations, status=status,
                                   replace_states=replace_states, crate_state=crate_state, trace=trace,
                                   state_sensor=state_sensor)

    def _poll_rows(
        self,
        sensor: str,
        *,
        states: dict[str, Any] | None,
        observations: Sequence[Observation],
        status: dict[str, Any] | None,
        replace_states: bool,
        crate_state: Any,
        trace: PollTrace | None = None,
        state_sensor: str | None = None,
    ) -> list[int]:
        """`commit_poll`'s writes, inside the caller's transaction."""
        now = self._clock()
        if states is not None:
            self._put_states(state_sensor or sensor, states, replace=replace_states, now=now)
        ids = []
        for obs in observations:
            cur = self._db.execute(
                "INSERT INTO pending (scope, sensor, time, trigger, key, magnitude, description, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.scope,
                    sensor,
                    obs.time or now,
                    obs.trigger,
                    obs.key,
                    float(obs.magnitude),
                    obs.description,
                    json.dumps(obs.meta, sort_keys=True, default=str),
                ),
            )
            assert cur.lastrowid is not None  # an INSERT sets it
            ids.append(cur.lastrowid)
        if status:
            self._update_status(sensor, status, now)
        if crate_state is not UNCHANGED:
            self._put_crate_state(state_sensor or sensor, crate_state, now)
        if trace is not None:
            self._record_history(sensor, trace, now)
        return ids

    def pending(self, sensor: str) -> list[Observation]:
        """The observations `sensor` has accumulated and not yet disclosed, oldest first."""
        rows = self._db.execute(
            "SELECT * FROM pending WHERE scope = ? AND sensor = ? ORDER BY id", (self.scope, sensor)
        )
        return list(decoded(rows, observation_from_row))

    def pending_sensors(self) -> list[str]:
        """The names of the sensors that hold pending observations, the longest-waiting first."""
        # Oldest first, so a sensor that has waited longest meets the governor first.
        rows = self._db.execute(
            "SELECT sensor FROM pending WHERE scope = ? GROUP BY sensor ORDER BY MIN(id)", (self.scope,)
        )
        return [r[0] for r in rows]


def observation_from_row(row: StoredRow) -> Observation:
    """A pending row as an observation; `BadRow` when a column does not hold what attend wrote."""
    return Observation(
        trigger=text(row["trigger"], "trigger"),
        magnitude=number(row["magnitude"], "magnitude"),
        description=text(row["description"], "description"),
        key=text(row["key"], "key", optional=True),
        meta=json_column(row, "meta", shape=dict),
        id=integer(row["id"], "id"),  # a rowid: always an integer
        time=number(row["time"], "time"),
    )
