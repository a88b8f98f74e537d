"""The poll history (DESIGN.md, Noise controls: traces): "why did (or didn't) this fire?".

For each poll the daemon (and `sensors poll`) stores one trace, in the same transaction as the poll:
its time and state, and per trigger what it selected, the transitions it found, and what became of
each. Outcomes at poll time come from the trigger (a fire, or `held` by `for` or `flapping`; flap
detection's own notifications carry `note: flapping|settled`) and from shelving (`held` by `shelved`); a fire that became an
observation is `queued` until the discloser decides, which rewrites it to `fired` when disclosed or
to `held` by `below threshold`, `absolute refractory`, `relative refractory` or `governor` while it
waits. The store keeps the last `HISTORY_KEPT` traces per sensor (spec/schema.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["HOLD_REASONS", "QUEUED", "poll_trace", "settle_outcomes"]

#: The outcome of a fire that became an observation, before the discloser has decided.
QUEUED = "queued"

#: Every reason a transition can be held for, and what it means (for `attend sensors history`).
HOLD_REASONS: dict[str, str] = {
    "for": "pending `for:`: waiting until the transition has held long enough",
    "flapping": "the key is flapping: its fires are held until it settles",
    "shelved": "the sensor or trigger is shelved",
    "below threshold": "the sensor's accumulated magnitude is below its threshold",
    "absolute refractory": "within 60 s of the sensor's last disclosure",
    "relative refractory": "recent disclosures raised the threshold for now",
    "governor": "the lane's governor is spacing disclosures",
}


def poll_trace(outcome: Any, step: Any, shelved: list[Any], *, now: float, state: str, message: str) -> dict[str, Any]:
    """The history record of one poll.

    Args:
        outcome: the kind's `PollOutcome`.
        step: the sensor step (None after a failed poll: then the trace has no triggers).
        shelved: the fires a shelf held (their outcomes become `held` by `shelved`).
        now: the poll's time.
        state, message: the poll's recorded state and message.
    """
    trace: dict[str, Any] = {"time": now, "state": state, "message": message, "triggers": []}
    if step is None:
        return trace
    held = {(str(f.trigger), f.key, f.description) for f in shelved}
    for verdict in step.verdicts:
        if not verdict:
            continue
        outcomes = []
        for entry in verdict.get("outcomes", []):
            entry = dict(entry)
            if entry.get("outcome") in ("fired", "flapping", "settled"):
                if entry["outcome"] != "fired":
                    entry["note"] = entry["outcome"]  # flap detection's own notification
                if (verdict["trigger"], entry.get("key"), entry.get("description")) in held:
                    entry.update(outcome="held", reason="shelved")
                else:
                    entry["outcome"] = QUEUED
            outcomes.append(entry)
        trace["triggers"].append({
            "trigger": verdict["trigger"],
            "baseline": verdict.get("baseline", False),
            "selected": verdict.get("selected", 0),
            "transition": verdict.get("transition", ""),
            "outcomes": outcomes,
            "flapping": verdict.get("flapping", {}),
        })
    return trace


def settle_outcomes(trace: dict[str, Any], *, fired: bool, reason: str) -> bool:
    """Rewrite the discloser's verdict into a stored trace: its queued (or discloser-held) outcomes become
    `fired`, or `held` by `reason`. Returns whether anything is still open (waiting on the discloser)."""
    open_ = False
    for trigger in trace.get("triggers", []):
        for entry in trigger.get("outcomes", []):
            waiting = entry.get("outcome") == QUEUED or (entry.get("outcome") == "held" and entry.get("by") == "discloser")
            if not waiting:
                continue
            if fired:
                entry.pop("by", None)
                entry.pop("reason", None)
                entry["outcome"] = "fired"
            else:
                entry.update(outcome="held", reason=reason, by="discloser")
                open_ = True
    return open_
