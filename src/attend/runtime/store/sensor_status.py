"""Sensor status rows: what `attend sensors` shows for each sensor (state, polls, failures, fires)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from attend.runtime.store.connection import StoreConnection

__all__ = ["LOAD_STATE", "POLL_STATE", "SensorStatus", "SensorStatusRows"]

#: `SensorStatus.state_source` of a state a poll recorded.
POLL_STATE = "poll"
#: `SensorStatus.state_source` of a state the daemon recorded from the files and config it loaded.
LOAD_STATE = "load"


@dataclass(slots=True)
class SensorStatus:
    """A sensor's live status row (what `attend sensors` shows)."""

    sensor: str
    state: str = "ok"
    message: str = ""
    since: float | None = None
    last_poll: float | None = None
    next_poll: float | None = None
    interval: float | None = None
    quiet_polls: int = 0
    failures: int = 0
    line_errors: list[str] = field(default_factory=list)
    lane: str | None = None
    lane_note: str = ""
    fires: list[float] = field(default_factory=list)
    #: The error of a file that stopped validating while its last good version keeps running.
    file_error: str = ""
    #: Who recorded `state`: `poll` (a poll's outcome), or `load` (the daemon, from the sensor's files
    #: and config when it loaded them: `invalid`, `refused`). A `load` state is only as current as
    #: that load: `attend sensors` reads the files again rather than trust it once no daemon runs.
    state_source: str = POLL_STATE
    #: Why the sensor's `wake_on` is not watched ("" when it is, or when it has none): it polls on its
    #: `interval` until the watch works again.
    wake_error: str = ""


_STATUS_COLUMNS = (
    "state",
    "message",
    "since",
    "last_poll",
    "next_poll",
    "interval",
    "quiet_polls",
    "failures",
    "line_errors",
    "lane",
    "lane_note",
    "fires",
    "file_error",
    "state_source",
    "wake_error",
)
_JSON_STATUS_COLUMNS = frozenset({"line_errors", "fires"})


class SensorStatusRows(StoreConnection):
    """The `sensor_status` table of one scope."""

    def _update_status(self, sensor: str, fields: dict[str, Any], now: float) -> None:
        unknown = set(fields) - set(_STATUS_COLUMNS)
        if unknown:
            raise ValueError(f"unknown status fields: {sorted(unknown)}")
        self._db.execute(
            "INSERT OR IGNORE INTO sensor_status (scope, sensor, since) VALUES (?, ?, ?)", (self.scope, sensor, now)
        )
        current = self._db.execute(
            "SELECT state FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        values = dict(fields)
        if "state" in values and current is not None and current["state"] != values["state"]:
            values["since"] = now  # `since`: when the sensor entered its current state
        for column in _JSON_STATUS_COLUMNS & set(values):
            values[column] = json.dumps(values[column])
        assignments = ", ".join(f"{column} = ?" for column in values)
        self._db.execute(
            f"UPDATE sensor_status SET {assignments}, updated = ? WHERE scope = ? AND sensor = ?",  # noqa: S608
            (*values.values(), now, self.scope, sensor),
        )

    def update_status(self, sensor: str, **fields: Any) -> None:
        """Update fields of `sensor`'s status row (creating it), in one transaction."""
        with self._write():
            self._update_status(sensor, fields, self._clock())

    def status(self, sensor: str) -> SensorStatus | None:
        """`sensor`'s status row, or None when it never had one."""
        row = self._db.execute(
            "SELECT * FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        return _status_from_row(row) if row is not None else None

    def statuses(self) -> dict[str, SensorStatus]:
        """Every status row, keyed by sensor name."""
        rows = self._db.execute("SELECT * FROM sensor_status WHERE scope = ?", (self.scope,))
        return {row["sensor"]: _status_from_row(row) for row in rows}

    def forget_sensor(self, sensor: str) -> None:
        """Drop a removed sensor's status row (its trigger states and journal stay)."""
        with self._write():
            self._db.execute("DELETE FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor))


def _status_from_row(row: sqlite3.Row) -> SensorStatus:
    return SensorStatus(
        sensor=row["sensor"],
        state=row["state"],
        message=row["message"],
        since=row["since"],
        last_poll=row["last_poll"],
        next_poll=row["next_poll"],
        interval=row["interval"],
        quiet_polls=row["quiet_polls"],
        failures=row["failures"],
        line_errors=json.loads(row["line_errors"]),
        lane=row["lane"],
        lane_note=row["lane_note"],
        fires=json.loads(row["fires"]),
        file_error=row["file_error"],
        state_source=row["state_source"],
        wake_error=row["wake_error"],
    )
