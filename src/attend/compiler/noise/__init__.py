"""The noise controls of a trigger, one module per control (DESIGN.md, Noise controls and traces).

- `state`: the versioned trigger state (version 2), the migration of stored version-1 state, and the
  check that turns an unreadable stored state into a re-baseline with a message instead of a crash.
- `hold`: `for: DURATION`, transitions that wait in `pending` until they have held long enough.
- `hysteresis`: `clear_where`, the holding set of `enters`/`leaves` with a separate exit condition.
- `flap`: flap detection per key, with one line when a key starts flapping and one when it settles.

`resolve_flap` and `normalise_durations` put a trigger's noise settings together: the trigger's own,
else its sensor's, else the defaults of `spec.schema`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attend import ir
from attend.errors import CompileError

__all__ = ["normalise_durations", "resolve_flap"]


def resolve_flap(trigger: ir.Flap | None, sensor: ir.Flap | None) -> ir.Flap:
    """The flap settings a trigger runs with: each field from the trigger, else the sensor, else the default.

    `flap: false` at either level turns detection off unless the trigger itself sets a `limit`.
    """
    from attend.spec.schema import DEFAULT_FLAP_LIMIT, DEFAULT_FLAP_WINDOW

    limit, window = -1, -1.0
    for level in (trigger, sensor):
        if level is None:
            continue
        if limit < 0:
            limit = level.limit
        if window < 0:
            window = level.window
    if limit == 0:
        return ir.Flap(limit=0, window=0.0)
    return ir.Flap(limit=DEFAULT_FLAP_LIMIT if limit < 0 else limit,
                   window=DEFAULT_FLAP_WINDOW if window <= 0 else window)


def normalise_durations(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    """A trigger definition with `for` and `flap.window` in seconds (`5m` → 300.0), for `compile_trigger`
    callers who pass a mapping as written in a sensor file. Other values pass through for the parser.

    Raises:
        CompileError: `for` or `flap.window` is a string that is not a duration.
    """
    from attend.spec.durations import ACCEPTED_FORMS, parse_duration

    out = dict(definition)
    for keypath in (("for",), ("flap", "window")):
        block: Any = out
        for part in keypath[:-1]:
            block = block.get(part) if isinstance(block, Mapping) else None
        if not isinstance(block, Mapping) or not isinstance(block.get(keypath[-1]), str):
            continue
        try:
            seconds = parse_duration(block[keypath[-1]])
        except ValueError:
            raise CompileError(f"`{'.'.join(keypath)}` must be {ACCEPTED_FORMS}, not {block[keypath[-1]]!r}",
                               field=keypath[0], code="bad-value") from None
        if len(keypath) == 1:
            out[keypath[0]] = seconds
        else:
            out[keypath[0]] = {**block, keypath[-1]: seconds}
    return out
