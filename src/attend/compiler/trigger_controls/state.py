"""Trigger state, version 3 (DESIGN.md, Noise controls): what a trigger keeps between polls.

Keyed trigger:   ``{"v": 3, "items": {key: value}, "holding": [keys], "pending": {key: entry}, "flap": {key: entry}}``
Keyless trigger: ``{"v": 3, "present": bool, "value": ..., "holding": bool, "pending": {"": entry}, "flap": {"": entry}}``

A key is `ops.key_text` of the item's key value: one text per JSON value, type included (`1` and
`"1"` are two items). Versions 1 and 2 wrote every key as a string (`1` and `"1"` both as "1"); they
migrate by recomputing each stored item's key from its stored value, so no baseline is lost and no
item fires for the change of format.

`holding` is kept for `enters`/`leaves` only; `pending` (transitions waiting for `for:`, see `hold`)
and `flap` (recent fire times of a key, see `flap`) only when not empty, so a trigger without noise
controls stores what version 1 stored. Version 1 had no `pending` and no `flap`: it migrates by
taking the version number, every stored baseline kept. Anything else stored under the trigger's
definition hash (another version, a mapping of the wrong shape, a truncated write) is not an error
of the poll: `read_state` says why it cannot be read and the trigger re-baselines. `read_state`
checks the shape in constant time (a poll must not pay a pass over 10,000 keys for it); what is wrong
deeper inside (a `since` that is not a number, an unhashable key) breaks the comparison, and the
trigger (`CompiledTrigger._run`) then re-baselines with a message the same way. The noise controls
read each stored time through `stored_time` and each count through `stored_count`, so a time that is
not a finite number within a float's range (`1e400` written as an integer, a string) is such a
problem, never kept or compared.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from attend.spec.yamltext import yaml_text

if TYPE_CHECKING:
    from attend.vocab import JSON

__all__ = [
    "STATE_VERSION", "FlapEntry", "KeyedState", "KeylessState", "PendingEntry", "TriggerState", "read_state",
    "stored_count", "stored_time",
]


class PendingEntry(TypedDict):
    """A transition waiting for `for:` (`hold`): since when, the item, and the value it left (when it had one)."""

    since: float
    value: JSON
    previous: NotRequired[JSON]


class FlapEntry(TypedDict, total=False):
    """One key's recent returns (`flap`): their times, the values had (hash → last time), and while it flaps
    since when, how many fires were held, the last one's time and description."""

    t: list[float]
    seen: dict[str, float]
    since: float
    held: int
    last: float
    text: str


class KeyedState(TypedDict):
    """A keyed trigger's state: each item by key text, the keys inside (`enters`/`leaves`), the noise controls'."""

    v: int
    items: dict[str, JSON]
    holding: NotRequired[list[str]]
    pending: NotRequired[dict[str, PendingEntry]]
    flap: NotRequired[dict[str, FlapEntry]]


class KeylessState(TypedDict):
    """A keyless trigger's state: whether the path selected anything, its value, whether it is inside."""

    v: int
    present: bool
    value: JSON
    holding: NotRequired[bool]
    pending: NotRequired[dict[str, PendingEntry]]
    flap: NotRequired[dict[str, FlapEntry]]


#: What a trigger stores between polls (the shape `read_state` checks for a keyed or a keyless trigger).
TriggerState = KeyedState | KeylessState

#: The version of the state format this module writes (it reads versions 1, 2 and 3).
STATE_VERSION = 3


def read_state(
    state: object, *, keyed: bool, key_fields: tuple[str, ...] | None = None
) -> tuple[TriggerState | None, str | None]:
    """The stored state as a version-3 state, or ``(None, why)`` when it cannot be read.

    ``(None, None)`` for no stored state (a first poll). Never raises; never mutates `state`.
    `key_fields` (the trigger's key) re-keys a keyed state of version 1 or 2.
    """
    if state is None:
        return None, None
    if not isinstance(state, dict):
        return None, f"the stored state is {type(state).__name__}, not a mapping"
    state = cast("dict[str, object]", state)
    version = state.get("v")
    if version in (1, 2):
        state = {**state, "v": STATE_VERSION}
    elif version != STATE_VERSION:
        return None, f"the stored state has version {version!r} (this attend reads 1, 2 and 3)"
    if keyed:
        if not isinstance(state.get("items"), dict):
            return None, "the stored state has no `items` mapping (it was not written by a keyed trigger)"
        if not isinstance(state.get("holding", []), list):
            return None, "the stored state's `holding` is not a list of keys"
    else:
        if not isinstance(state.get("present"), bool) or not isinstance(state.get("holding", False), bool):
            return None, "the stored state has no `present` flag (it was not written by a keyless trigger)"
    for part in ("pending", "flap"):
        if not isinstance(state.get(part, {}), dict):
            return None, f"the stored state's `{part}` is malformed"
    if keyed and version in (1, 2) and key_fields:
        state = _rekeyed(state, key_fields)
    # the shape is the one checked above for this trigger; what is wrong deeper inside breaks the comparison
    return cast("TriggerState", state), None


def stored_time(value: object) -> float:
    """A time (`since`, `last`, a flap fire time) read from stored state, as a float.

    Raises:
        ValueError: not a number, a boolean, NaN or an infinity, or an integer past a float's range.
    """
    if type(value) is float:
        if value - value == 0.0:  # finite: inf - inf and nan - nan are nan
            return value
    elif type(value) is int and -_FLOAT_MAX <= value <= _FLOAT_MAX:
        return float(value)
    raise ValueError(f"a stored time is not a finite number of seconds: {_shown(value)}")


def stored_count(value: object) -> int:
    """A count (`held`) read from stored state. Raises ValueError when it is not a whole number ≥ 0."""
    if type(value) is int and value >= 0:
        return value
    raise ValueError(f"a stored count is not a whole number: {_shown(value)}")


#: The largest finite float, as an integer bound for stored integer times.
_FLOAT_MAX = int(sys.float_info.max)


def _shown(value: object) -> str:
    return yaml_text(value, 40)


def _rekeyed(state: dict[str, object], key_fields: tuple[str, ...]) -> dict[str, object]:
    """A version 1/2 keyed state with each key recomputed from its stored item (see the module doc)."""
    from attend.compiler.ops import MISSING, get_dotted, key_text

    renamed: dict[str, str] = {}
    items: dict[str, object] = {}
    stored = cast("dict[str, object]", state["items"])  # read_state checked it is a mapping
    for old, value in stored.items():
        found = get_dotted(value, key_fields)
        new = old if found is MISSING else key_text(found)
        renamed[old] = new
        items.setdefault(new, value)
    out = {**state, "items": items}
    holding = state.get("holding")
    if isinstance(holding, list):
        out["holding"] = [renamed.get(k, k) if isinstance(k, str) else k for k in holding]
    for part in ("pending", "flap"):
        entries = state.get(part)
        if isinstance(entries, dict):
            out[part] = {renamed.get(k, k): e for k, e in entries.items()}
    return out

