"""What sensors remember outside their trigger states: MCP probe records and crate sensors' exported state.

Probe records describe a server and tool, not a project, so they are the one unscoped table.
"""

from __future__ import annotations

import json

from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.rows import BadRow, json_column

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.vocab import JSON

__all__ = ["CrateStateRows", "ProbeRecords"]


class ProbeRecords(StoreConnection):
    """The `probes` table: one MCP probe record per sensor (all projects share it)."""

    def get_probe(self, sensor: str) -> dict[str, Any] | None:
        """`sensor`'s MCP probe record, or None when it has none."""
        row = self._db.execute("SELECT record FROM probes WHERE sensor = ?", (sensor,)).fetchone()
        try:
            return json_column(row, "record", shape=dict) if row is not None else None
        except BadRow:
            return None  # a damaged record is no record: the sensor probes again (doctor lists it)

    def put_probe(self, sensor: str, record: dict[str, Any]) -> None:
        """Store (replace) `sensor`'s MCP probe record."""
        with self._write():
            self._db.execute(
                "INSERT OR REPLACE INTO probes (sensor, record, updated) VALUES (?, ?, ?)",
                (sensor, json.dumps(record, sort_keys=True, default=str), self._clock()),
            )

    def delete_probe(self, sensor: str) -> None:
        """Drop `sensor`'s probe record (a voided probe)."""
        with self._write():
            self._db.execute("DELETE FROM probes WHERE sensor = ?", (sensor,))


class CrateStateRows(StoreConnection):
    """The `crate_state` table of one scope: the state each crate sensor exported last."""

    def get_crate_state(self, sensor: str) -> JSON:
        """The state a crate sensor exported last (JSON-like), or None."""
        row = self._db.execute(
            "SELECT state FROM crate_state WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        try:
            return json_column(row, "state") if row is not None else None
        except BadRow:
            return None  # a damaged export reads as none: the crate sensor starts over (doctor lists it)

    def put_crate_state(self, sensor: str, state: JSON) -> None:
        """Store a crate sensor's exported state (must be JSON-serialisable)."""
        with self._write():
            self._put_crate_state(sensor, state, self._clock())

    def _put_crate_state(self, sensor: str, state: JSON, now: float) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO crate_state (scope, sensor, state, updated) VALUES (?, ?, ?, ?)",
            (self.scope, sensor, json.dumps(state, sort_keys=True), now),
        )
