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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from attend.runtime.store.poll_history import QUEUED, settle_outcomes

if TYPE_CHECKING:
    from attend.compiler import Fire, SensorStep
    from attend.runtime.kinds import PollOutcome
    from attend.runtime.noise.query import SensorNoise
    from attend.runtime.store.poll_history import PollTrace, TraceOutcome

__all__ = ["HOLD_REASONS", "QUEUED", "held_text", "poll_trace", "render_history", "settle_outcomes"]

# The outcome word of a fire before the discloser has decided, and the discloser's rewrite of a stored
# trace, belong to the store (`runtime/store/poll_history.py`), which applies them; here for this module's readers.

#: Every reason a transition can be held for, and what it means (for `attend sensors history`).
HOLD_REASONS: dict[str, str] = {
    "for": "pending `for:`: waiting until the transition has held long enough",
    "flapping": "the key is flapping: its fires are held until it settles",
    "shelved": "the sensor or trigger is shelved",
    "below threshold": "the sensor's accumulated magnitude is below its threshold",
    "absolute refractory": "within 60 s of the sensor's last disclosure",
    "relative refractory": "recent disclosures raised the threshold for now",
    "governor": "the lane's governor is spacing disclosures",
    "superseded": "a trigger that fired in the same poll replaces this one (`supersedes`)",
    "same line": "another fire of the same poll renders the same line: one line per finding",
}


def poll_trace(outcome: PollOutcome, step: SensorStep | None, shelved: list[Fire], *, now: float, state: str,
               message: str, replaced: Sequence[tuple[Fire, dict[str, Any]]] = ()) -> PollTrace:
    """The history record of one poll.

    Args:
        outcome: the kind's `PollOutcome`.
        step: the sensor step (None after a failed poll: then the trace has no triggers).
        shelved: the fires a shelf held (their outcomes become `held` by `shelved`).
        now: the poll's time.
        state, message: the poll's recorded state and message.
        replaced: fires another fire of the poll stands for (compiler/findings.py), each with
            `{reason, by}`: `held: superseded by <trigger>` or `held: same line`.
    """
    trace: PollTrace = {"time": now, "state": state, "message": message, "triggers": []}
    if step is None:
        return trace
    held = {(str(f.trigger), _held_key(f.key), f.description) for f in shelved}
    standing_for = {(str(f.trigger), _held_key(f.key), f.description): why for f, why in replaced}
    for verdict in step.verdicts:
        if not verdict:
            continue
        outcomes: list[TraceOutcome] = []
        for given in verdict.get("outcomes", []):
            entry = cast("TraceOutcome", dict(given))  # the compiler's outcome (compiler/triggers.py `_outcomes`)
            if entry.get("outcome") in ("fired", "flapping", "settled"):
                if entry["outcome"] != "fired":
                    entry["note"] = entry["outcome"]  # flap detection's own notification
                identity = (verdict["trigger"], _held_key(entry.get("key")), entry.get("description"))
                if identity in standing_for:
                    why = standing_for[identity]
                    entry.update({"outcome": "held", "reason": why["reason"], "instead": why["by"]})
                elif identity in held:
                    entry.update({"outcome": "held", "reason": "shelved"})
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


def _held_key(key: Any) -> str | None:
    """A fire's key as a hashable text: keys are JSON values, so a list or an object keys an item too."""
    from attend.compiler.ops import key_text

    return None if key is None else key_text(key)


def held_text(seconds: float) -> str:
    """How long a fire was held, as `4m32s`, `15s` or `1h2m`."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m{secs}s" if secs else f"{minutes}m"
    return f"{secs}s"


def _short(seconds: float) -> str:
    """A short span as the history shows one: `12 ms` under a second, `1.5 s` above."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _iso(t: float) -> str:
    """An ISO-8601 UTC time, as `attend sensors` shows times."""
    from attend.text import iso_time

    return iso_time(t) or ""


def render_history(data: SensorNoise) -> str:
    """The text form of `sensor_noise`'s data: shelves, flapping keys, then each poll, newest first (and
    how many quiet polls were left out, unless every poll was asked for); each line printable on its own (a
    poll's message quotes a command's stderr or a server's words)."""
    from attend.compiler.ops import render_value
    from attend.text import printable

    out = []
    for shelf in data["shelves"]:
        target = shelf["sensor"] if shelf["trigger"] is None else f"{shelf['sensor']}/{shelf['trigger']}"
        out.append(f"shelved: {target} until {_iso(shelf['until'])}" + (f" ({shelf['reason']})" if shelf["reason"] else ""))
    for f in data["flapping"]:
        who = f"{f['trigger']}" + (f" key {render_value(f['key'])}" if f["key"] is not None else "")
        out.append(f"flapping: {who} since {_iso(f['since'])}, {f['held']} fire(s) held")
    left_out = data.get("left_out", 0)
    if not data["history"]:
        out.append(f"no poll of {data['sensor']} fired or held anything (of its last {left_out}); "
                   "--all shows every poll" if left_out else f"no polls recorded for {data['sensor']} yet")
    for trace in data["history"]:
        head = f"{_iso(trace['time'])}  {trace['state']}"
        if trace.get("message"):
            head += f"  {trace['message']}"
        woken, took = trace.get("woken"), trace.get("took")
        if isinstance(woken, int | float) and isinstance(took, int | float):
            # where a late line's time went: waiting after the change was seen, then the poll itself
            wait = max(0.0, float(trace["time"]) - took - woken)
            head += f"  (woken by a change: polled {_short(wait)} after it was seen, the poll took {_short(took)})"
        out.append(head)
        for part in trace.get("triggers", []):
            out.append(f"  {part['trigger']}: selected {part['selected']}; {part['transition']}")
            for o in part.get("outcomes", []):
                if "more" in o:
                    out.append(f"    … {o['more']} more")
                    continue
                who = "value" if o.get("key") is None else f"key {render_value(o['key'])}"
                what: str = o["outcome"]
                if what == "held":
                    reason = o.get("reason", "")
                    what = f"held: {reason}" + (f" by {o['instead']}" if reason == "superseded" and o.get("instead") else "")
                    until = o.get("until")
                    if until is not None:
                        what += f" until {_iso(until)}"
                    what += f" ({HOLD_REASONS.get(reason, reason)})"
                elif what == "queued":
                    what = "queued: waiting for the discloser"
                elif what == "fired" and o.get("held_for") is not None:
                    what = f"fired after {held_text(o['held_for'])} held: {o.get('held_by') or 'waiting'}"
                if o.get("note"):
                    what += f" [{o['note']} notice]"
                text = f"    {who}: {what}"
                if o.get("description"):
                    text += f"  \"{o['description']}\""
                out.append(text)
    if left_out and data["history"]:
        out.append(f"({left_out} quiet poll{'s' if left_out != 1 else ''} left out: nothing fired or was held; "
                   "--all shows every poll)")
    return "\n".join(printable(line, one_line=True) for line in out) + "\n"
