"""The context sensor: how full the current Claude Code session's context window is.

The use is the newest assistant turn's tokens (input + cache creation + cache read, see
`attend.peers.transcript`) against the model's context window (`window`, a field of the file). Each
fill tier (`tiers`, e.g. 50 / 65 / 83 / 90 %) is listed in `reached` once the use gets there, and stays
listed for the session, so the file's `added` triggers disclose each tier once. When the use falls
below `reset_below` (a compaction), the tiers are cleared and can be disclosed again for the new fill.

`climb_per_minute` is how many points the use rose per minute over the turns of the last
`climb_window` seconds, measured on the transcript's own timestamps (at least `MIN_CLIMB_SPAN`
apart, so two turns a second apart don't read as a steep climb).

Result::

    {"session": "<id>", "model": "claude-…", "tokens": 104000, "window": 200000, "percent": 52.0,
     "reached": [{"id": "<session>/0/50", "tier": 50, "percent": 52.0, "tokens": 104000, "window": 200000}],
     "climb_per_minute": 1.4}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attend.peers.transcript import UsageSample, read_samples
from attend.sensors.base import (
    Focus,
    SensorConfigError,
    SensorUnavailable,
    expand_home,
    focus_transcript,
    require,
    require_seconds,
)

__all__ = ["MIN_CLIMB_SPAN", "ContextSensor", "climb_per_minute", "percent_of"]

#: The shortest time between the two turns a climb is measured over, in seconds.
MIN_CLIMB_SPAN = 60.0


def percent_of(tokens: int, window: int) -> float:
    """`tokens` as a percentage of `window`, rounded to one decimal."""
    return round(100.0 * tokens / window, 1)


def climb_per_minute(samples: Sequence[UsageSample], window: int, span: float) -> float:
    """Points of context use gained per minute over the turns of the last `span` seconds.

    Args:
        samples: Assistant turns, oldest first.
        window: The context window in tokens.
        span: How far back from the newest turn to look, in seconds.

    Returns:
        The climb, rounded to one decimal; 0.0 when fewer than `MIN_CLIMB_SPAN` seconds of turns are
        available or the use fell.
    """
    timed = [s for s in samples if s.time > 0]
    if len(timed) < 2:
        return 0.0
    newest = timed[-1]
    older = [s for s in timed if newest.time - span <= s.time <= newest.time - MIN_CLIMB_SPAN]
    if not older:
        return 0.0
    first = older[0]
    minutes = (newest.time - first.time) / 60.0
    points = 100.0 * (newest.tokens - first.tokens) / window
    return max(0.0, round(points / minutes, 1))


class ContextSensor:
    """Reports the context-window use of the project's newest Claude Code session.

    Crate fields (set in ``sensors.d/context.yaml``): `projects_dir` (where Claude Code keeps
    transcripts, ``~`` expanded), `window` (tokens), `tiers` (percentages), `reset_below` (percent),
    `climb_window` (seconds).

    State between polls: the session, the tiers reached in it, and how many times the use was reset.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.projects_dir: str = require(config, "projects_dir", str)  # `~` is the poll's home (focus.env)
        self.window: int = require(config, "window", int)
        if self.window <= 0:
            raise SensorConfigError("`window` must be a positive number of tokens")
        self.tiers: tuple[float, ...] = tuple(sorted(float(t) for t in require(config, "tiers", list)))
        self.reset_below = float(require(config, "reset_below", float))
        self.climb_window = require_seconds(config, "climb_window")
        self._session = ""
        self._epoch = 0
        self._reached: list[float] = []

    def export_state(self) -> dict[str, Any]:
        """The session, its reset count and the tiers reached."""
        return {"session": self._session, "epoch": self._epoch, "reached": self._reached}

    def import_state(self, state: Any) -> None:
        """Restore what `export_state` returned."""
        if isinstance(state, dict):
            self._session = str(state.get("session") or "")
            self._epoch = int(state.get("epoch") or 0)
            self._reached = [float(t) for t in state.get("reached") or [] if isinstance(t, int | float)]

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The newest session's use, the tiers it reached and how fast it climbs.

        Raises:
            SensorUnavailable: no transcript for the project, or no assistant turn with usage in it.
        """
        transcript = focus_transcript(expand_home(self.projects_dir, focus.env), focus.cwd, focus.session, focus.transcript)
        samples = read_samples(transcript.path)
        if not samples:
            raise SensorUnavailable(f"no assistant turn with token usage in {transcript.path}")
        newest = samples[-1]
        percent = percent_of(newest.tokens, self.window)

        if transcript.session != self._session:
            self._session, self._epoch, self._reached = transcript.session, 0, []
        if percent < self.reset_below and self._reached:
            self._epoch, self._reached = self._epoch + 1, []
        self._reached = sorted({*self._reached, *(t for t in self.tiers if percent >= t)})

        reached = [
            {
                "id": f"{self._session}/{self._epoch}/{_tier_text(tier)}",
                "tier": _tier_number(tier),
                "percent": percent,
                "tokens": newest.tokens,
                "window": self.window,
            }
            for tier in self._reached
        ]
        return {
            "session": transcript.session,
            "model": newest.model,
            "tokens": newest.tokens,
            "window": self.window,
            "percent": percent,
            "reached": reached,
            "climb_per_minute": climb_per_minute(samples, self.window, self.climb_window),
        }


def _tier_number(tier: float) -> int | float:
    return int(tier) if tier.is_integer() else tier


def _tier_text(tier: float) -> str:
    return str(_tier_number(tier))
