"""Engagement (ADR-123): the accumulator, the threshold and the absolute and relative refractory.

Decision: per sensor (a `scope: session` sensor: per session, its fire times those of the lines shown to
that session; runtime/pipeline.py), observations add to an accumulator that is ready at `threshold × multiplier`.
After a disclosure ("fire") the sensor is in absolute refractory for 60 s: observations keep
accumulating, nothing fires. After that, while 3 or more recent fires are live, a relative refractory
raises the threshold by `max(1, 1 + (2.25 − 1) · 0.5^(Δ/395 s))`, Δ the time since the last fire;
not for an accumulator holding a progressing key's line (`readiness(progress=True)`): progress is news,
and its newest value goes out once the absolute refractory is over.

"Live": a fire is live for `live_window` seconds (default 4 half-lives, 1580 s, when the multiplier
has decayed to within 8 % of 1), so a burst of three or more fires within about 26 minutes makes the
sensor harder to wake, and an occasional fire never does. The message lane skips all of this: it is
ready whenever something is pending.

Every function here is pure: times are plain floats, so the daemon and the tests share them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attend.spec.config import config_default, section_fields
from attend.spec.yamltext import yaml_text

__all__ = ["PARAMETER_BOUNDS", "EngagementParams", "Readiness", "multiplier", "parameter_problem", "readiness",
           "record_fire"]

#: The smallest value each parameter may take, and whether that value itself is allowed (the spec's
#: `CONFIG_SCHEMA`, which says why each bound is what it is).
PARAMETER_BOUNDS: dict[str, tuple[float, bool]] = {
    name: (float(f.minimum or 0), f.inclusive) for name, f in section_fields(("engagement",)).items()
}
_DEFAULTS: dict[str, Any] = config_default(("engagement",))


def parameter_problem(name: str, value: float) -> str | None:
    """Why the number `value` cannot be engagement parameter `name` (None when it can)."""
    bound = PARAMETER_BOUNDS.get(name)
    if not math.isfinite(value):
        return f"must be a finite number, not {yaml_text(value)}"
    if bound is None:
        return None
    minimum, inclusive = bound
    if inclusive and value < minimum:
        return f"must be at least {minimum:g}"
    if not inclusive and value <= minimum:
        return f"must be more than {minimum:g}"
    return None


@dataclass(frozen=True, slots=True)
class EngagementParams:
    """The engagement model's parameters (`engagement:` in config.yaml; defaults and texts in the spec's
    `CONFIG_SCHEMA`)."""

    #: Seconds after a fire during which nothing fires (60).
    absolute_refractory: float = _DEFAULTS["absolute_refractory"]
    #: The relative-refractory multiplier right after a fire (2.25: the threshold more than doubles).
    relative_peak: float = _DEFAULTS["relative_peak"]
    #: Seconds for the extra multiplier to halve (395).
    relative_half_life: float = _DEFAULTS["relative_half_life"]
    #: How many live fires turn the relative refractory on (3).
    relative_after: int = _DEFAULTS["relative_after"]
    #: Seconds a fire stays live, counting toward `relative_after` (4 half-lives, 1580).
    live_window: float = _DEFAULTS["live_window"]

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> EngagementParams:
        """The parameters from the `engagement:` mapping of config.yaml, over the defaults.

        Durations may be numbers (seconds) or strings such as `90s`. Raises ValueError for a bad value.
        """
        from attend.spec.durations import parse_duration

        base = cls()
        given = dict(config or {})
        readers: dict[str, Callable[[Any], float]] = {"duration": parse_duration, "number": float, "integer": int}
        values: dict[str, Any] = {}
        for name, declared in section_fields(("engagement",)).items():
            raw = given.get(name, getattr(base, name))
            try:
                values[name] = readers[declared.kind](raw)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"engagement.{name}: {exc}") from None
            problem = parameter_problem(name, values[name])
            if problem:
                raise ValueError(f"engagement.{name} {problem}")
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether a sensor's accumulator may disclose now, and if not, when to look again.

    `retry_at` is None when only new observations can make it ready.
    """

    ready: bool
    retry_at: float | None = None
    multiplier: float = 1.0
    reason: str = ""


def _live(fires: Sequence[float], now: float, params: EngagementParams) -> list[float]:
    return sorted(f for f in fires if now - f < params.live_window)


def multiplier(fires: Sequence[float], now: float, params: EngagementParams) -> float:
    """The relative-refractory threshold multiplier at `now` (1.0 when fewer fires are live)."""
    live = _live(fires, now, params)
    if len(live) < params.relative_after:
        return 1.0
    delta = max(0.0, now - live[-1])
    decay: float = 0.5 ** (delta / params.relative_half_life)
    return max(1.0, 1.0 + (params.relative_peak - 1.0) * decay)


def readiness(
    *,
    total: float,
    count: int,
    threshold: float,
    fires: Sequence[float],
    now: float,
    params: EngagementParams,
    lane: str = "event",
    progress: bool = False,
) -> Readiness:
    """Decide whether an accumulator holding `count` observations summing to `total` is ready.

    Args:
        total: the accumulated magnitude.
        count: how many observations are pending (nothing pending is never ready).
        threshold: the sensor's emission threshold.
        fires: the sensor's earlier fire times.
        now: the current time.
        params: the engagement parameters.
        lane: `message` skips threshold and refractory.
        progress: the accumulator holds a progressing key's line (a move to a value the key has not
            had within its flap window: `compiler.trigger_controls.flap`): the absolute refractory holds it, the
            relative refractory does not raise the threshold, so the newest value of a key that keeps
            moving reaches the session within the absolute refractory and one poll.
    """
    if count <= 0:
        return Readiness(False, None, reason="nothing pending")
    if lane == "message":
        return Readiness(True, reason="message lane")
    live = _live(fires, now, params)
    if live and now - live[-1] < params.absolute_refractory:
        return Readiness(False, live[-1] + params.absolute_refractory, reason="absolute refractory")
    factor = 1.0 if progress else multiplier(live, now, params)
    if total >= threshold * factor:
        return Readiness(True, multiplier=factor, reason="threshold reached")
    if total < threshold or threshold <= 0:
        return Readiness(False, None, multiplier=factor, reason="below threshold")
    return Readiness(False, _relief_at(total, threshold, live, params), multiplier=factor, reason="relative refractory")


def _relief_at(total: float, threshold: float, live: list[float], params: EngagementParams) -> float:
    """When the relative refractory has decayed enough for `total` to reach the raised threshold."""
    # Fewer than `relative_after` live fires ends the relative refractory altogether.
    ends = live[len(live) - params.relative_after] + params.live_window
    ratio = total / threshold
    extra = params.relative_peak - 1.0
    if ratio > 1.0 and extra > 0:
        delta = params.relative_half_life * math.log2(extra / (ratio - 1.0))
        return min(ends, live[-1] + max(delta, 0.0))
    return ends


def record_fire(fires: Sequence[float], now: float, params: EngagementParams) -> list[float]:
    """The fire times after a fire at `now`, keeping only the live ones (what the store holds)."""
    return [*_live(fires, now, params), now]
