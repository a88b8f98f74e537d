"""Trigger state rows: each trigger's transition state, keyed by sensor and trigger definition hash.

States are written as JSON in document order (a `{previous}` rendered from a stored state reads as the
item did); a row that is not JSON reads as absent, so its trigger re-baselines instead of failing.
"""

from __future__ import annotations

import json

from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.rows import BadRow, json_column

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["TriggerStateRows"]


class TriggerStateRows(StoreConnection):
    """The `trigger_state` table of one scope."""

    def trigger_states(self, sensor: str) -> dict[str, Any]:
        """Every stored trigger state of `sensor`, keyed by trigger definition hash."""
        rows = self._db.execute(
            "SELECT hash, state FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        )
        states: dict[str, Any] = {}
        for row in rows:
            try:
                states[row["hash"]] = json_column(row, "state")
            except BadRow:
                continue  # a corrupt row is a state that is not there: that trigger re-baselines
        return states

    def _put_states(self, sensor: str, states: dict[str, Any], *, replace: bool, now: float) -> None:
        if replace:
            self._db.execute("DELETE FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor))
        self._db.executemany(
            "INSERT OR REPLACE INTO trigger_state (scope, sensor, hash, state, updated) VALUES (?, ?, ?, ?, ?)",
            [(self.scope, sensor, h, json.dumps(s), now) for h, s in states.items()],
        )

    def put_trigger_states(self, sensor: str, states: dict[str, Any], *, replace: bool = False) -> None:
        """Store trigger states alone (e.g. `sensors fire --commit`); `replace` drops the others."""
        with self._write():
            self._put_states(sensor, states, replace=replace, now=self._clock())
