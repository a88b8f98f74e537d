"""Shelving (DESIGN.md, Noise controls): `attend sensors shelve NAME[/TRIGGER] --for DURATION`.

A shelf covers a whole sensor (`trigger` None) or one trigger until `until` (wall-clock seconds). While
it lasts, the covered fires are held: recorded in the poll history as held by `shelved`, never turned
into observations, so nothing is delivered; the sensor keeps polling and its trigger state keeps moving
(an item that appeared while shelved is not news when the shelf expires). A shelf expires on its own:
an expired one covers nothing and is pruned the next time shelves are written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Shelf", "covering", "split_shelved"]


@dataclass(frozen=True, slots=True)
class Shelf:
    """One shelf: a sensor, or one of its triggers, held until `until`, with why and since when."""

    sensor: str
    trigger: str | None
    until: float
    reason: str
    since: float

    @property
    def target(self) -> str:
        """`NAME` or `NAME/TRIGGER`, as the CLI writes it."""
        return self.sensor if self.trigger is None else f"{self.sensor}/{self.trigger}"

    def to_json(self) -> dict[str, Any]:
        """The `--json` form (times as seconds since the epoch)."""
        return {"sensor": self.sensor, "trigger": self.trigger, "until": self.until, "reason": self.reason,
                "since": self.since}


def covering(shelves: list[Shelf], trigger: str, now: float) -> Shelf | None:
    """The shelf that holds `trigger`'s fires now (the sensor's own shelf first), or None."""
    best = None
    for shelf in shelves:
        if shelf.until > now and shelf.trigger in (None, trigger):
            if best is None or shelf.trigger is None:
                best = shelf
    return best


def split_shelved(fires: list[Any], shelves: list[Shelf], now: float) -> tuple[list[Any], list[Any]]:
    """`fires` split into those delivered and those a live shelf holds."""
    if not shelves:
        return fires, []
    delivered, held = [], []
    for fire in fires:
        (held if covering(shelves, str(fire.trigger), now) is not None else delivered).append(fire)
    return delivered, held
