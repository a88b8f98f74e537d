"""Shelving (DESIGN.md, Noise controls): `attend sensors shelve NAME[/TRIGGER] --for DURATION`.

A shelf covers a whole sensor (`trigger` None) or one trigger until `until` (wall-clock seconds). While
it lasts, the covered fires are held: recorded in the poll history as held by `shelved`, never turned
into observations, so nothing is delivered; the sensor keeps polling and its trigger state keeps moving
(an item that appeared while shelved is not news when the shelf expires). A shelf expires on its own:
an expired one covers nothing and is pruned the next time shelves are written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attend.errors import EXIT_FAILED, EXIT_USAGE, Refusal
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.store.shelves import Shelf  # the row type of the store's `shelves` table

if TYPE_CHECKING:
    from pathlib import Path

    from attend.compiler import Fire
    from attend.runtime.store import Store
    from attend.spec.loaded import SensorSet

__all__ = ["Shelf", "ShelfRefused", "covering", "resolve_target", "shelve_target", "split_shelved", "unshelve_target"]


def covering(shelves: list[Shelf], trigger: str, now: float) -> Shelf | None:
    """The shelf that holds `trigger`'s fires now (the sensor's own shelf first), or None."""
    best = None
    for shelf in shelves:
        if shelf.until > now and shelf.trigger in (None, trigger) and (best is None or shelf.trigger is None):
            best = shelf
    return best


def split_shelved(fires: list[Fire], shelves: list[Shelf], now: float) -> tuple[list[Fire], list[Fire]]:
    """`fires` split into those delivered and those a live shelf holds."""
    if not shelves:
        return fires, []
    delivered: list[Fire] = []
    held: list[Fire] = []
    for fire in fires:
        (held if covering(shelves, str(fire.trigger), now) is not None else delivered).append(fire)
    return delivered, held


class ShelfRefused(Refusal):
    """A shelve or unshelve that did nothing: `message` for the user, `code` the exit code."""


def resolve_target(project_dir: str | Path, text: str) -> tuple[SensorSet, str, str | None]:
    """The sensor set, sensor name and trigger of `NAME[/TRIGGER]`; `ShelfRefused` (usage) when unknown."""
    from attend.spec import load_set

    name, _, trigger = text.partition("/")
    sensor_set = load_set(project_dir)
    sensor = sensor_set.sensors.get(name)
    if sensor is None:
        known = ", ".join(sorted(sensor_set.sensors)) or "none"
        raise ShelfRefused(f"no sensor named {name!r} (known: {known})", EXIT_USAGE)
    triggers = [t.name for t in sensor.ir.triggers]
    if trigger and trigger not in triggers:
        known = ", ".join(triggers) or "none"
        raise ShelfRefused(f"sensor {name!r} has no trigger {trigger!r} (triggers: {known})", EXIT_USAGE)
    return sensor_set, name, trigger or None


def _store(sensor_set: SensorSet, clock: Clock = WALL_CLOCK) -> Store:
    from attend.runtime.store import open_project_store

    assert sensor_set.paths is not None  # load_set sets it
    return open_project_store(sensor_set.paths, clock=clock)


def shelve_target(project_dir: str | Path, target: str, duration: str, reason: str = "", *,
                  clock: Clock = WALL_CLOCK) -> Shelf:
    """Shelve `NAME[/TRIGGER]` for `duration` from now by `clock` (`sensors shelve`; the sensors tab's `s`); the shelf.

    Raises:
        ShelfRefused: a bad duration, or an unknown sensor or trigger (usage).
    """
    from attend.spec.durations import ACCEPTED_FORMS, parse_duration

    try:
        seconds = parse_duration(duration)
    except ValueError:
        raise ShelfRefused(f"--for must be {ACCEPTED_FORMS}, not {duration!r}", EXIT_USAGE) from None
    if seconds <= 0:
        raise ShelfRefused("--for must be above zero (a shelf that expires at once would hold nothing)", EXIT_USAGE)
    sensor_set, name, trigger = resolve_target(project_dir, target)
    # A reason from undecodable argv bytes holds lone surrogates that no UTF-8 store takes: each byte is U+FFFD.
    reason = (reason or "").encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    with _store(sensor_set, clock) as store:
        return store.put_shelf(name, trigger, until=store.now() + seconds, reason=reason)


def unshelve_target(project_dir: str | Path, target: str) -> str:
    """Take the shelf of `NAME[/TRIGGER]` down (`sensors unshelve`; the tab's `S`); the target's name.

    Raises:
        ShelfRefused: an unknown sensor or trigger (usage), or no shelf there (exit 1).
    """
    sensor_set, name, trigger = resolve_target(project_dir, target)
    with _store(sensor_set) as store:
        removed = store.remove_shelf(name, trigger)
    shown = name if trigger is None else f"{name}/{trigger}"
    if not removed:
        raise ShelfRefused(f"{shown} is not shelved", EXIT_FAILED)
    return shown
