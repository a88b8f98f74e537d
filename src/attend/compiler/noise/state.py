"""Trigger state, version 2 (DESIGN.md, Noise controls): what a trigger keeps between polls.

Keyed trigger:   ``{"v": 2, "items": {key: value}, "holding": [keys], "pending": {key: entry}, "flap": {key: entry}}``
Keyless trigger: ``{"v": 2, "present": bool, "value": ..., "holding": bool, "pending": {"": entry}, "flap": {"": entry}}``

`holding` is kept for `enters`/`leaves` only; `pending` (transitions waiting for `for:`, see `hold`)
and `flap` (recent fire times of a key, see `flap`) only when not empty, so a trigger without noise
controls stores what version 1 stored. Version 1 had no `pending` and no `flap`: it migrates by
taking the version number, every stored baseline kept. Anything else stored under the trigger's
definition hash (another version, a mapping of the wrong shape, a truncated write) is not an error
of the poll: `read_state` says why it cannot be read and the trigger re-baselines. `read_state`
checks the shape in constant time (a poll must not pay a pass over 10,000 keys for it); what is wrong
deeper inside (a `since` that is not a number, an unhashable key) breaks the comparison, and the
trigger (`CompiledTrigger._run`) then re-baselines with a message the same way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["STATE_VERSION", "read_state"]

#: The version of the state format this module writes (it reads versions 1 and 2).
STATE_VERSION = 2


def read_state(state: Any, *, keyed: bool) -> tuple[dict[str, Any] | None, str | None]:
    """The stored state as a version-2 state, or ``(None, why)`` when it cannot be read.

    ``(None, None)`` for no stored state (a first poll). Never raises; never mutates `state`.
    """
    if state is None:
        return None, None
    if not isinstance(state, dict):
        return None, f"the stored state is {type(state).__name__}, not a mapping"
    version = state.get("v")
    if version == 1:
        state = {**state, "v": STATE_VERSION}
    elif version != STATE_VERSION:
        return None, f"the stored state has version {version!r} (this attend reads 1 and 2)"
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
    return state, None
