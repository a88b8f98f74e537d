"""Poll cadence: how long a sensor waits before its next poll (DESIGN.md, Runtime: Cadence).

Decision: every sensor polls at start, at its slowest `interval`. A poll with observations halves the
interval (not below `min_interval`); after `decay_threshold` quiet polls in a row each further quiet
poll multiplies it by 1.5 (not above `interval`). A failed poll counts as a quiet poll, and repeated
failures may back off further, up to `FAILURE_BACKOFF_LIMIT` × `interval`, so a broken sensor costs
little while it stays broken; its first good poll brings it back within `interval`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import trio

from attend import ir

__all__ = [
    "DECAY_FACTOR",
    "FAILURE_BACKOFF_LIMIT",
    "MIN_POLL_GAP",
    "SPEEDUP_FACTOR",
    "Cadence",
    "CadenceParams",
    "Wake",
    "backoff",
    "next_cadence",
    "poll_on_cadence",
]

#: A poll with observations divides the interval by this.
SPEEDUP_FACTOR = 2.0

#: Each quiet poll after `decay_threshold` quiet ones multiplies the interval by this.
DECAY_FACTOR = 1.5

#: Repeated failures back off up to this multiple of the sensor's `interval`.
FAILURE_BACKOFF_LIMIT = 4.0

#: The shortest wait between two polls of one sensor, in seconds, whatever its file says: the spec
#: accepts `interval: 0`, and polling back to back would spin a core on process spawns.
MIN_POLL_GAP = 0.1


@dataclass(frozen=True, slots=True)
class CadenceParams:
    """A sensor's cadence fields, in seconds."""

    interval: float
    min_interval: float
    decay_threshold: int

    @classmethod
    def of(cls, fields: ir.Sensor) -> CadenceParams:
        """The cadence fields of a sensor (`MergedSensor.ir`), bounded below by `MIN_POLL_GAP`."""
        interval = max(fields.interval, MIN_POLL_GAP)
        return cls(
            interval=interval,
            min_interval=max(min(fields.min_interval, interval), MIN_POLL_GAP),
            decay_threshold=fields.decay_threshold,
        )


@dataclass(frozen=True, slots=True)
class Cadence:
    """Where a sensor stands: its current interval and how many quiet polls (or failures) in a row."""

    interval: float
    quiet_polls: int = 0
    failures: int = 0

    @classmethod
    def start(cls, params: CadenceParams) -> Cadence:
        """The cadence before the first poll (which happens at start)."""
        return cls(interval=params.interval)


def backoff(initial: float, steps: int, *, factor: float, limit: float) -> float:
    """`initial` grown `steps` times by `factor`, never above `limit` (`steps` ≤ 0: `initial`, capped).

    The one exponential backoff of the runtime, pure so it is tested with explicit numbers: a quiet or
    failing sensor's next interval (one step from the current one), an MCP server's restart delay
    (`mcp/policy.py` `restart_delay`: one step per consecutive failure after the first), the file
    watcher's retry of a folder it could not watch (`watching/watcher.py`, likewise).
    """
    return min(limit, initial * factor ** max(steps, 0))


def next_cadence(params: CadenceParams, cadence: Cadence, *, observed: bool, failed: bool = False) -> Cadence:
    """The cadence after one poll.

    Args:
        params: the sensor's cadence fields.
        cadence: the cadence before the poll.
        observed: the poll produced observations.
        failed: the poll failed (its state is not `ok`).

    Returns:
        The new cadence; wait `.interval` seconds before the next poll.
    """
    if failed:
        failures = cadence.failures + 1
        interval = cadence.interval
        if failures > params.decay_threshold:
            interval = backoff(interval, 1, factor=DECAY_FACTOR, limit=params.interval * FAILURE_BACKOFF_LIMIT)
        return Cadence(interval=interval, quiet_polls=cadence.quiet_polls + 1, failures=failures)
    # Back from a failure streak: never wait longer than the sensor's own slowest interval.
    interval = min(cadence.interval, params.interval)
    if observed:
        return Cadence(interval=max(interval / SPEEDUP_FACTOR, params.min_interval))
    quiet = cadence.quiet_polls + 1
    if quiet > params.decay_threshold:
        interval = backoff(interval, 1, factor=DECAY_FACTOR, limit=params.interval)
    return Cadence(interval=interval, quiet_polls=quiet)


class Wake(Protocol):
    """What `poll_on_cadence` needs of a wake signal (`runtime.watching.watcher.WakeSignal`): the watcher
    imports the cadence's backoff, so the cadence names only the two calls it makes."""

    def clear(self) -> None: ...

    async def wait(self) -> None: ...


async def poll_on_cadence(
    params: CadenceParams,
    poll: Callable[[Cadence], Awaitable[Cadence]],
    *,
    wake: Wake | None = None,
    until_due: Callable[[], float | None] | None = None,
) -> None:
    """Poll at once, then again after each new cadence's interval, until cancelled.

    Args:
        params: the sensor's cadence fields.
        poll: runs one poll given the cadence before it and returns the cadence after it (the daemon's
            poll records both in the store, with `next_cadence` deciding).
        wake: set when a path the sensor watches changed (`wake_on`, runtime/watching/wake.py) or an MCP
            resource it reads was updated: a sensor at rest (`min_interval` past since its last poll ended)
            polls at once; one that polled within `min_interval` polls once `min_interval` has passed, so
            what a burst still writes after a poll is one more poll, not one per change. A change during
            a poll polls once more after it. The watcher hands a burst over once it has been quiet for a
            step (watching/notify.py `WATCH_STEP_MS`), so a checkout's writes reach the sensor together.
        until_due: seconds until a trigger's pending `for:` will have held long enough (None: nothing
            pending); the next poll comes no later than that, so the fire is on time.
    """
    cadence = Cadence.start(params)
    while True:
        if wake is not None:
            wake.clear()  # this poll sees every change made before it starts
        cadence = await poll(cadence)
        ended = trio.current_time()
        wait = max(cadence.interval, MIN_POLL_GAP)
        due = until_due() if until_due is not None else None
        if due is not None:
            wait = min(wait, max(due, MIN_POLL_GAP))
        deadline = ended + wait
        if wake is None:
            await trio.sleep_until(deadline)
            continue
        with trio.move_on_at(deadline):
            await wake.wait()
            # No settle of its own: the watcher's quiet step already gathered the burst (a checkout writes
            # index, a ref and HEAD within a few ms), and waiting longer is what a line costs.
            await trio.sleep_until(min(deadline, ended + max(params.min_interval, MIN_POLL_GAP)))
