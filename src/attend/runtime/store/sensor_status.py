"""Sensor status rows: what `attend sensors` shows for each sensor (state, polls, failures, fires)."""

from __future__ import annotations

import json

from attend.records import field, record
from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.rows import (
    BadRow,
    decoded,
    integer,
    json_column,
    number,
    optional_number,
    text,
)

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from attend.runtime.store.rows import StoredRow

    T = TypeVar("T")

__all__ = ["LOAD_STATE", "POLL_STATE", "SensorStatus", "SensorStatusRows"]

#: `SensorStatus.state_source` of a state a poll recorded.
POLL_STATE = "poll"
#: `SensorStatus.state_source` of a state the daemon recorded from the files and config it loaded.
LOAD_STATE = "load"


@record
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
        try:
            return status_from_row(row) if row is not None else None
        except BadRow:
            return None  # a row without a sensor name: doctor lists it

    def statuses(self) -> dict[str, SensorStatus]:
        """Every status row, keyed by sensor name."""
        rows = self._db.execute("SELECT * FROM sensor_status WHERE scope = ?", (self.scope,))
        return {status.sensor: status for status in decoded(rows, status_from_row)}

    def forget_sensor(self, sensor: str) -> None:
        """Drop a removed sensor's status row and its per-session trigger and crate states (`sensor@session`);
        its project trigger states and its journal stay."""
        with self._write():
            self._db.execute("DELETE FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor))
            for table in ("trigger_state", "crate_state"):
                self._db.execute(f"DELETE FROM {table} WHERE scope = ? AND substr(sensor, 1, ?) = ?",
                                 (self.scope, len(sensor) + 1, f"{sensor}@"))


def status_from_row(row: StoredRow, *, strict: bool = False) -> SensorStatus:
    """A status row. A column that does not hold what attend wrote reads as its default (the next poll
    writes it again), or, `strict`, raises `BadRow` (what `attend doctor` lists)."""
    def read(column: str, decode: Callable[[object, str], T], default: T) -> T:
        try:
            return decode(row[column], column)
        except BadRow:
            if strict:
                raise
            return default

    return SensorStatus(
        sensor=text(row["sensor"], "sensor"),
        state=read("state", text, "ok"),
        message=read("message", text, ""),
        since=read("since", optional_number, None),
        last_poll=read("last_poll", optional_number, None),
        next_poll=read("next_poll", optional_number, None),
        interval=read("interval", optional_number, None),
        quiet_polls=read("quiet_polls", integer, 0),
        failures=read("failures", integer, 0),
        line_errors=read("line_errors", _texts, []),
        lane=read("lane", _optional_text, None),
        lane_note=read("lane_note", text, ""),
        fires=read("fires", _times, []),
        file_error=read("file_error", text, ""),
        state_source=read("state_source", text, POLL_STATE),
        wake_error=read("wake_error", text, ""),
    )


def _json(value: object, column: str) -> list[object]:
    items = json_column({column: value}, column, shape=list)
    assert isinstance(items, list)  # shape=list
    return items


def _texts(value: object, column: str) -> list[str]:
    items = _json(value, column)
    texts = [e for e in items if isinstance(e, str)]
    if len(texts) != len(items):
        raise BadRow(f"{column} is not a list of texts")
    return texts


def _times(value: object, column: str) -> list[float]:
    return [number(t, f"a time in {column}") for t in _json(value, column)]


def _optional_text(value: object, column: str) -> str | None:
    return text(value, column, optional=True)
