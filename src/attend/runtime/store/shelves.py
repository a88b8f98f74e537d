"""Shelf rows (DESIGN.md, Noise controls and traces): the `shelves` table.

One row per shelved sensor (`trigger` '') or trigger, with its expiry and reason. An expired shelf
covers nothing (`runtime.noise.shelving`) and is deleted the next time a shelf is written, so the table
never grows past the shelves people set.
"""

from __future__ import annotations

from attend.records import record
from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.rows import decoded, number, text

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any, TypedDict

    from attend.runtime.store.rows import StoredRow

    class ShelfJSON(TypedDict):
        """A shelf's `--json` form (times as seconds since the epoch)."""

        sensor: str
        trigger: str | None
        until: float
        reason: str
        since: float

__all__ = ["Shelf", "ShelfRows"]


@record(frozen=True)
class Shelf:
    """One shelf: a sensor, or one of its triggers, held until `until`, with why and since when."""

    sensor: str
    trigger: str | None
    until: float
    reason: str
    since: float

    @property
    def target(self) -> str:
        """`NAME` or `NAME/TRIGGER`, as the CLI writes it."""
        return self.sensor if self.trigger is None else f"{self.sensor}/{self.trigger}"

    def to_json(self) -> ShelfJSON:
        """The `--json` form (times as seconds since the epoch)."""
        return {"sensor": self.sensor, "trigger": self.trigger, "until": self.until, "reason": self.reason,
                "since": self.since}


class ShelfRows(StoreConnection):
    """The `shelves` table of one scope."""

    def put_shelf(self, sensor: str, trigger: str | None, *, until: float, reason: str = "") -> Shelf:
        """Shelve `sensor` (or one trigger) until `until`, replacing a shelf on the same target."""
        now = self._clock()
        with self._write():
            self._db.execute("DELETE FROM shelves WHERE scope = ? AND until <= ?", (self.scope, now))
            self._db.execute(
                "INSERT OR REPLACE INTO shelves (scope, sensor, trigger, until, reason, since) VALUES (?, ?, ?, ?, ?, ?)",
                (self.scope, sensor, trigger or "", float(until), reason, now),
            )
        return Shelf(sensor, trigger, float(until), reason, now)

    def remove_shelf(self, sensor: str, trigger: str | None) -> bool:
        """Take a shelf down; False when there was no live one on that target."""
        now = self._clock()
        with self._write():
            cur = self._db.execute(
                "DELETE FROM shelves WHERE scope = ? AND sensor = ? AND trigger = ? AND until > ?",
                (self.scope, sensor, trigger or "", now),
            )
            self._db.execute("DELETE FROM shelves WHERE scope = ? AND until <= ?", (self.scope, now))
        return cur.rowcount > 0

    def shelves(self, sensor: str | None = None, *, now: float | None = None) -> list[Shelf]:
        """The live shelves (of one sensor, or all), the sensor's own before its triggers'."""
        now = self._clock() if now is None else now
        sql = "SELECT * FROM shelves WHERE scope = ? AND until > ?"
        params: list[Any] = [self.scope, now]
        if sensor is not None:
            sql += " AND sensor = ?"
            params.append(sensor)
        rows = self._db.execute(sql + " ORDER BY sensor, trigger", params)
        return list(decoded(rows, shelf_from_row))


def shelf_from_row(row: StoredRow) -> Shelf:
    """A `shelves` row; `BadRow` when a column does not hold what attend wrote."""
    return Shelf(text(row["sensor"], "sensor"), text(row["trigger"], "trigger") or None,
                 number(row["until"], "until"), text(row["reason"], "reason"), number(row["since"], "since"))
