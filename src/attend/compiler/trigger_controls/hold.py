"""`for: DURATION` (DESIGN.md, Noise controls): a transition fires only once what caused it has held.

A transition found by a poll does not fire: it goes into the state's `pending` map as
``{key: {"since": t, "value": item, "previous": value before}}``. Each later poll first asks, for each
pending key, whether the cause still holds (an added key still present and matching, a removed key
still absent, a changed value still the new one, an `enters` still inside, a `leaves` still outside):
if not, the transition was undone and is dropped without a fire; if it has held for DURATION since
`since`, it fires once (with the item as it is now) and leaves `pending`. Times are wall-clock
seconds passed in by the caller, so a restart resumes the wait where it was, and tests use any clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend.compiler import ops
from attend.compiler.trigger_controls.state import PendingEntry, stored_time

__all__ = ["Transition", "due", "settle"]

#: One transition found by a poll: (key, the item it concerns, the value before or ops.MISSING).
Transition = tuple[str, Any, Any]


def settle(
    pending: dict[str, PendingEntry],
    transitions: list[Transition],
    *,
    hold: float,
    now: float,
    still: Callable[[str, PendingEntry], bool],
    current: Callable[[str, PendingEntry], Any],
) -> tuple[list[Transition], dict[str, PendingEntry]]:
    """The transitions that fire now and the `pending` map to store.

    Args:
        pending: the stored pending map (never mutated).
        transitions: what this poll found, in the order found.
        hold: `for:` in seconds.
        now: the poll's time.
        still: whether the cause of a pending entry still holds in this poll.
        current: the item a ready entry fires with (the current item, or the stored one when it is gone).
    """
    left: dict[str, PendingEntry] = {}
    ready: list[Transition] = []
    for key, entry in pending.items():
        if not still(key, entry):
            continue
        if now - stored_time(entry["since"]) >= hold:
            ready.append((key, current(key, entry), entry.get("previous", ops.MISSING)))
        else:
            left[key] = entry
    fired = {key for key, _, _ in ready}
    for key, item, previous in transitions:
        if key in left or key in fired:  # still waiting (or firing now) since an earlier poll
            continue
        waiting: PendingEntry = {"since": now, "value": item}
        if previous is not ops.MISSING:
            waiting["previous"] = previous
        left[key] = waiting
    return ready, left


def due(pending: dict[str, PendingEntry] | None, hold: float | None) -> float | None:
    """When the earliest pending transition will have held for `hold` (None: nothing pending)."""
    if not pending or hold is None:
        return None
    return min(stored_time(entry["since"]) for entry in pending.values()) + hold
