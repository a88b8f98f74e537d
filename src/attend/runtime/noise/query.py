"""What the CLI and the sensors tab read about a sensor's noise controls: one query, plain data.

`sensor_noise(store, name)` returns the sensor's live shelves, the keys flapping as of its last poll and
its last poll traces (newest first). `attend sensors`, `attend sensors history` and the TUI's sensors
tab all read it, so they show the same thing.
"""

from __future__ import annotations

import time
from typing import Any

from attend.spec.schema import HISTORY_KEPT

__all__ = ["sensor_noise"]


def sensor_noise(
    store: Any, name: str, *, now: float | None = None, limit: int = HISTORY_KEPT, trigger: str | None = None
) -> dict[str, Any]:
    """A sensor's shelves, flapping keys and poll history, as JSON-ready data.

    Args:
        store: an open `runtime.store.Store`.
        name: the sensor.
        now: the time shelves are judged at (default the wall clock): expired shelves are left out.
        limit: how many poll traces to return (newest first; the store keeps `HISTORY_KEPT`).
        trigger: keep only this trigger's part of each trace.

    Returns:
        ``{"sensor", "shelves": [{sensor, trigger, until, reason, since}], "flapping": [{trigger, key,
        since, held, last}], "history": [{time, state, message, triggers: [{trigger, baseline, selected,
        transition, outcomes: [{key, outcome, reason?, until?, description?, note?}], flapping}]}]}``.
    """
    now = time.time() if now is None else now
    shelves = [s.to_json() for s in store.shelves(name, now=now)]
    history = store.history(name, limit=max(limit, 1))
    flapping: list[dict[str, Any]] = []
    last_evaluated = next((t for t in history if t.get("triggers")), None)
    for part in (last_evaluated or {}).get("triggers", []):
        for key, entry in (part.get("flapping") or {}).items():
            flapping.append({"trigger": part["trigger"], "key": key or None, **entry})
    if trigger is not None:
        history = [{**t, "triggers": [p for p in t.get("triggers", []) if p.get("trigger") == trigger]} for t in history]
    return {"sensor": name, "shelves": shelves, "flapping": flapping, "history": history[:limit]}
