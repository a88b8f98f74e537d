"""`clear_where` (DESIGN.md, Noise controls): hysteresis for `enters`/`leaves`.

Without it an item is inside exactly when `where` holds. With it, an item that was inside stays inside
until `clear_where` holds, and an item outside enters only when `where` holds: with `where: {cpu:
{above: 90}}` and `clear_where: {cpu: {below: 70}}`, 95 enters, 85 neither leaves nor re-enters, 65
leaves, 95 enters again. The holding set is what the state keeps (`holding`), so the band survives a
restart like every other part of the state.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["holding_keys", "holds"]

Predicate = Callable[[object, Callable[[str], None]], bool]


def holding_keys(
    items: dict[str, object], was_inside: set[str], where: Predicate, clear: Predicate, warn: Callable[[str], None]
) -> list[str]:
    """The keys inside now, in item order: inside before and `clear` does not hold, or outside and `where` holds."""
    return [k for k, v in items.items() if (not clear(v, warn) if k in was_inside else where(v, warn))]


def holds(value: object, was_inside: bool, where: Predicate, clear: Predicate, warn: Callable[[str], None]) -> bool:
    """Whether a keyless trigger's watched value is inside now."""
    return not clear(value, warn) if was_inside else where(value, warn)
