"""Flap detection per key (DESIGN.md, Noise controls).

Progress is not flapping. A key whose fire moves it to a value it has not had within `window` seconds
is progressing (an upstream head, a CI run, a version: each move is news); flapping is returning to
a value it had within the window (A→B→A). A key that returns more than `limit` times within `window`
is flapping: the return that crosses the limit is replaced by one notification saying so, and the
key's further fires are held, its newest value replacing the older ones. Once the key has gone one
whole window without a fire it settles: one notification says so and states the newest value (the
description of the newest fire, whether it was held or the one the flapping notice named), with how
many changes were held.

What a "value" is, per `on`: for `changed`, the item's value (its previous value, left at the fire,
counts as had too); for `added`, `removed`, `enters` and `leaves`, the state the fire moves the key
into (present, absent, inside, outside), so every fire of such a trigger after the key's first within
the window is a return. A fire the caller marks as new (`token` gives no previous and a value never
seen) is progress; `apply_flap` returns which delivered fires those are.

The state's `flap` map keeps, per key that fired within the window, ``{"t": [return times], "seen":
{value hash: last time had}}``, plus ``"since"``, ``"held"``, ``"last"`` and ``"text"`` (the newest
fire's description) while it flaps. A keyless trigger uses the key "". `limit` 0 turns detection off.
Entries written before values were kept (no ``"seen"``) read as a key with no value had: its next
fire is progress unless it returns to a value recorded from then on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from attend.compiler.ops import key_text
from attend.compiler.trigger_controls.state import FlapEntry, stored_count, stored_time

__all__ = ["FLAPPING", "SETTLED", "apply_flap", "flapping_keys", "span_text", "value_hash"]

#: The `note` of the notification that says a key started flapping, and of the one that says it settled.
FLAPPING = "flapping"
SETTLED = "settled"

#: The most values one key's entry remembers within the window (the newest kept): a key moving to a new
#: value every poll for a whole window does not grow its state without bound.
SEEN_KEPT = 64


class Firing(Protocol):
    """What flap detection reads of a fire (`compiler.triggers.Fire`): its key (None: keyless) and description."""

    @property
    def key(self) -> object: ...

    @property
    def description(self) -> str: ...


Fire = TypeVar("Fire", bound=Firing)


#: The canonical text a value is hashed from (made once: `json.dumps` with these options builds an encoder per call).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def value_hash(value: Any) -> str:
    """A short hash of a JSON value, equal for equal values (keys in any order): what `seen` keeps."""
    text = _CANONICAL.encode(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def apply_flap(
    fires: list[Fire],
    entries: dict[str, FlapEntry],
    *,
    limit: int,
    window: float,
    now: float,
    token: Callable[[Fire], tuple[str, str | None]],
    note: Callable[[Fire, str, str], Fire],
    settle_note: Callable[[str, FlapEntry], Fire],
) -> tuple[list[Fire], dict[str, FlapEntry], list[Fire], list[Fire]]:
    """Run this poll's fires through flap detection.

    Args:
        fires: the fires the trigger decided on (each with `.key`, None for a keyless trigger).
        entries: the stored `flap` map (never mutated).
        limit, window: more than `limit` returns within `window` seconds is flapping.
        now: the poll's time.
        token: a fire's value and the value it leaves (None when it leaves none), as hashes or state
            names (module docstring).
        note: makes the "started flapping" notification from the fire that crossed the limit.
        settle_note: makes the "settled" notification from a key and its entry.

    Returns:
        The fires to deliver (notifications included), the `flap` map to store, the held fires, and the
        delivered fires that are progress (a move to a value the key has not had within the window).
    """
    if limit <= 0:
        return fires, {}, [], []
    out: dict[str, FlapEntry] = {}
    delivered: list[Fire] = []
    held: list[Fire] = []
    progress: list[Fire] = []
    horizon = now - window
    for fire in fires:
        key = "" if fire.key is None else key_text(fire.key)  # the state's key text, as `items` uses
        entry = out.get(key)
        if entry is None:  # not yet seen in this poll: the state's entry, checked before it is read
            entry = entries.get(key)
            if entry is not None:
                _check(entry)
        value, left = token(fire)
        seen = _recent(entry.get("seen") if entry else None, horizon)
        returned = value in seen
        times = [t for t in (entry.get("t", []) if entry else []) if t > horizon]
        if returned:
            times.append(now)
        if left is not None:
            seen[left] = now
        seen[value] = now
        if len(seen) > SEEN_KEPT:
            seen = dict(sorted(seen.items(), key=lambda kv: kv[1])[-SEEN_KEPT:])
        if entry is not None and "since" in entry:
            out[key] = {**entry, "t": times, "seen": seen, "held": entry["held"] + 1, "last": now,
                        "text": str(fire.description)}
            held.append(fire)
        elif len(times) > limit:
            out[key] = {"t": times, "seen": seen, "since": now, "held": 1, "last": now, "text": str(fire.description)}
            delivered.append(note(fire, FLAPPING, f"{len(times)} returns to an earlier value within {span_text(window)}"))
            held.append(fire)
        else:
            out[key] = {"t": times, "seen": seen}
            delivered.append(fire)
            if not returned and left is not None:
                progress.append(fire)
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
        times = [t for t in entry.get("t", []) if t > horizon]
        seen = _recent(entry.get("seen"), horizon)
        if times or seen:
            out[key] = {"t": times, "seen": seen}
    return delivered, out, held, progress


def _recent(seen: dict[str, float] | None, horizon: float) -> dict[str, float]:
    """The values of a stored `seen` map had after `horizon` (a copy)."""
    return {v: t for v, t in (seen or {}).items() if t > horizon}


def _check(entry: FlapEntry) -> None:
    """Raise ValueError (or TypeError) when a stored entry is not one this module wrote: its times finite
    numbers, its count whole (`trigger_controls.state.stored_time`), so nothing unreadable is compared or kept."""
    stored: dict[str, object] = dict(entry)  # read from the store: each part checked here before it is used
    for t in cast("list[object]", stored.get("t", ())):
        stored_time(t)
    seen = stored.get("seen", {})
    if not isinstance(seen, dict) or not all(isinstance(v, str) for v in seen):
        raise TypeError("a flap entry's `seen` must map value hashes to times")
    for t in seen.values():
        stored_time(t)
    if "since" in stored:
        stored_time(stored["since"]), stored_time(stored["last"]), stored_count(stored["held"])
        if not isinstance(stored.get("text", ""), str):
            raise TypeError("a flap entry's `text` must be a string")


def flapping_keys(entries: dict[str, FlapEntry] | None) -> dict[str, dict[str, float]]:
    """The keys of a stored `flap` map that are flapping now: key → {since, held, last}."""
    return {k: {"since": e["since"], "held": e["held"], "last": e["last"]} for k, e in (entries or {}).items()
            if "since" in e}


def span_text(seconds: float) -> str:
    """A duration as a person writes it: `10m`, `1h`, `90s`."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
