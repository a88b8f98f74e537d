"""What the CLI and the sensors tab read about a sensor's noise controls: one query, plain data.

`sensor_noise(store, name)` returns the sensor's live shelves, the keys flapping as of its last poll and
its last poll traces (newest first). `attend sensors`, `attend sensors history` and the TUI's sensors
tab all read it, so they show the same thing.

Decision (issue 33): by default the history is the polls where something happened: a transition fired,
was queued or was held (for any reason), or the poll failed; in each such poll, only the triggers that
had an outcome. A sensor with six triggers polled every minute otherwise buries its one hold under
pages of `selected 3; no change`. `everything=True` (`history --all`) returns every poll and every trigger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from attend.spec.schema import HISTORY_KEPT

if TYPE_CHECKING:
    from attend.runtime.store import Store
    from attend.runtime.store.poll_history import PollTrace
    from attend.runtime.store.shelves import ShelfJSON


class SensorNoise(TypedDict):
    """`sensor_noise`'s data (see it)."""

    sensor: str
    shelves: list[ShelfJSON]
    #: Each flapping key of the last evaluated poll: {trigger, key, since, held, last, ...}.
    flapping: list[dict[str, Any]]
    history: list[PollTrace]
    all: bool
    left_out: int

__all__ = ["SensorNoise", "eventful", "sensor_noise"]


def sensor_noise(
    store: Store, name: str, *, now: float | None = None, limit: int = HISTORY_KEPT, trigger: str | None = None,
    everything: bool = False,
) -> SensorNoise:
    """A sensor's shelves, flapping keys and poll history, as JSON-ready data.

    Args:
        store: an open `runtime.store.Store`.
        name: the sensor.
        now: the time shelves are judged at (default the store's clock): expired shelves are left out.
        limit: how many poll traces to return (newest first; the store keeps `HISTORY_KEPT`).
        trigger: keep only this trigger's part of each trace.
        everything: every poll and every trigger; by default only the polls that fired, queued or held
            something or failed, each with only the triggers that had an outcome (`eventful`).

    Returns:
        ``{"sensor", "shelves": [{sensor, trigger, until, reason, since}], "flapping": [{trigger, key,
        since, held, last}], "history": [{time, state, message, triggers: [{trigger, baseline, selected,
        transition, outcomes: [{key, outcome, reason?, until?, description?, note?}], flapping}]}],
        "all", "left_out"}``: `all` is `everything`; `left_out` counts the quiet polls passed over
        among the newest ones while the history shown was collected (0 with `everything`).
    """
    now = store.now() if now is None else now
    shelves = [s.to_json() for s in store.shelves(name, now=now)]
    history = store.history(name, limit=max(limit, 1) if everything else None)  # None: every kept trace
    flapping: list[dict[str, Any]] = []
    last_evaluated = next((t for t in history if t.get("triggers")), None)
    for part in (last_evaluated or {}).get("triggers", []):
        for key, entry in (part.get("flapping") or {}).items():
            flapping.append({"trigger": part["trigger"], "key": key or None, **entry})
    if trigger is not None:
        history = [{**t, "triggers": [p for p in t.get("triggers", []) if p.get("trigger") == trigger]} for t in history]
    left_out = 0
    if not everything:
        shown: list[PollTrace] = []
        for trace in history:
            if len(shown) == limit:
                break
            kept = eventful(trace)
            if kept is None:
                left_out += 1
            else:
                shown.append(kept)
        history = shown
    return {"sensor": name, "shelves": shelves, "flapping": flapping, "history": history[:limit],
            "all": everything, "left_out": left_out}


def eventful(trace: PollTrace) -> PollTrace | None:
    """`trace` with only the triggers that had an outcome (fired, queued, held), or None when none had one
    and the poll did not fail: a quiet poll, which the history leaves out unless asked for every poll."""
    parts = [p for p in trace.get("triggers", []) if p.get("outcomes")]
    if not parts and trace.get("state", "ok") == "ok":
        return None
    return {**trace, "triggers": parts}
