"""The noise controls of a trigger, one module per control (DESIGN.md, Noise controls and traces).

- `state`: the versioned trigger state (version 2), the migration of stored version-1 state, and the
  check that turns an unreadable stored state into a re-baseline with a message instead of a crash.
- `hold`: `for: DURATION`, transitions that wait in `pending` until they have held long enough.
- `hysteresis`: `clear_where`, the holding set of `enters`/`leaves` with a separate exit condition.
- `flap`: flap detection per key, with one line when a key starts flapping and one when it settles.

`resolve_flap` puts a trigger's flap settings together: the trigger's own, else its sensor's, else the
defaults of `spec.schema`.
"""

from __future__ import annotations

from attend import ir

__all__ = ["resolve_flap"]


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
