"""Trigger state rows: each trigger's transition state, keyed by sensor and trigger definition hash."""

from __future__ import annotations

import json
from typing import Any

from attend.runtime.store.connection import StoreConnection

__all__ = ["TriggerStateRows"]


class TriggerStateRows(StoreConnection):
    """The `trigger_state` table of one scope."""

    def trigger_states(self, sensor: str) -> dict[str, Any]:
        """Every stored trigger state of `sensor`, keyed by trigger definition hash."""
        rows = self._db.execute(
            "SELECT hash, state FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        )
        return {row["hash"]: json.loads(row["state"]) for row in rows}

    def _put_states(self, sensor: str, states: dict[str, Any], *, replace: bool, now: float) -> None:
        if replace:
            self._db.execute("DELETE FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor))
        self._db.executemany(
            "INSERT OR REPLACE INTO trigger_state (scope, sensor, hash, state, updated) VALUES (?, ?, ?, ?, ?)",
            [(self.scope, sensor, h, json.dumps(s, sort_keys=True), now) for h, s in states.items()],
        )

    def put_trigger_states(self, sensor: str, states: dict[str, Any], *, replace: bool = False) -> None:
        """Store trigger states alone (e.g. `sensors fire --commit`); `replace` drops the others."""
        with self._write():
            self._put_states(sensor, states, replace=replace, now=self._clock())
