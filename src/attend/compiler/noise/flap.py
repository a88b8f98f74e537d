"""Flap detection per key (DESIGN.md, Noise controls).

A key that fires more than `limit` times within `window` seconds is flapping: the fire that crosses
the limit is replaced by one notification saying so, and the key's further fires are held (counted in
its entry). Once the key has gone one whole window without a fire it settles: one notification says
so, with how many fires were held. The state's `flap` map keeps, per key that fired within the window,
``{"t": [fire times]}``, plus ``"since"``, ``"held"`` and ``"last"`` while it flaps. A keyless trigger
uses the key "". `limit` 0 turns detection off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend.compiler.noise.state import stored_count, stored_time
from attend.compiler.ops import key_text

__all__ = ["FLAPPING", "SETTLED", "apply_flap", "flapping_keys", "span_text"]

#: The `note` of the notification that says a key started flapping, and of the one that says it settled.
FLAPPING = "flapping"
SETTLED = "settled"


def apply_flap(
    fires: list[Any],
    entries: dict[str, Any],
    *,
    limit: int,
    window: float,
    now: float,
    note: Callable[[Any, str, str], Any],
    settle_note: Callable[[str, dict[str, Any]], Any],
) -> tuple[list[Any], dict[str, Any], list[Any]]:
    """Run this poll's fires through flap detection.

    Args:
        fires: the fires the trigger decided on (each with `.key`, None for a keyless trigger).
        entries: the stored `flap` map (never mutated).
        limit, window: more than `limit` fires within `window` seconds is flapping.
        now: the poll's time.
        note: makes the "started flapping" notification from the fire that crossed the limit.
        settle_note: makes the "settled" notification from a key and its entry.

    Returns:
        The fires to deliver (notifications included), the `flap` map to store, and the held fires.
    """
    if limit <= 0:
        return fires, {}, []
    out: dict[str, Any] = {}
    delivered: list[Any] = []
    held: list[Any] = []
    horizon = now - window
    for fire in fires:
        key = "" if fire.key is None else key_text(fire.key)  # the state's key text, as `items` uses
        entry = out.get(key)
        stored = not entry  # not yet seen in this poll: the state's entry, checked before it is read
        if stored:
            entry = entries.get(key)
        if entry is None:  # the common case: the key's first fire within the window
            out[key] = {"t": [now]}
            delivered.append(fire)
            continue
        if stored:
            _check(entry)
        times = [t for t in entry.get("t", ()) if t > horizon]
        times.append(now)
        if "since" in entry:
            out[key] = {**entry, "t": times, "held": entry["held"] + 1, "last": now}
            held.append(fire)
        elif len(times) > limit:
            out[key] = {"t": times, "since": now, "held": 1, "last": now}
            delivered.append(note(fire, FLAPPING, f"{len(times)} fires within {span_text(window)}"))
            held.append(fire)
        else:
            out[key] = {"t": times}
            delivered.append(fire)
    for key, entry in entries.items():
        if key in out:
            continue
        _check(entry)
        if "since" in entry:
            if now - entry["last"] >= window:
                delivered.append(settle_note(key, entry))
            else:
                out[key] = entry
            continue
        times = [t for t in entry.get("t", ()) if t > horizon]
        if times:
            out[key] = {"t": times}
    return delivered, out, held


def _check(entry: Any) -> None:
    """Raise ValueError (or TypeError) when a stored entry is not one this module wrote: its times finite
    numbers, its count whole (`noise.state.stored_time`), so nothing unreadable is compared or kept."""
    for t in entry.get("t", ()):
        stored_time(t)
    if "since" in entry:
        stored_time(entry["since"]), stored_time(entry["last"]), stored_count(entry["held"])


def flapping_keys(entries: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The keys of a stored `flap` map that are flapping now: key → {since, held, last}."""
    return {k: {f: e[f] for f in ("since", "held", "last")} for k, e in (entries or {}).items() if "since" in e}


def span_text(seconds: float) -> str:
    """A duration as a person writes it: `10m`, `1h`, `90s`."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
