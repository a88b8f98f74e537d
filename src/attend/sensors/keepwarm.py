"""The keepwarm sensor: the timed wake floor that keeps a large, idle session's prompt cache warm (ADR-182).

The prompt cache lives `cache_life` seconds after its last use. When the session has been idle (no
change to its transcript) for `idle_floor` seconds of that life, and holds at least `min_tokens`,
`due` becomes true; the file's `enters` trigger then sends one line stating the facts (idle time,
tokens cached, minutes until the cache lapses). What to do about it (a one-word reply with no tools
refreshes the cache) is the skill's advice, never the line's: a sensor observes. `due` stays true for the rest of the idle stretch and turns false
when the transcript changes or the cache has expired anyway, so there is one line per idle stretch.

It rides the message lane with no author: the one recorded exception of ADR-403 §3a (see its file).

Result::

    {"session": "<id>", "idle_seconds": 3012, "idle_minutes": 50, "tokens": 81234,
     "lapses_in_minutes": 9, "due": true, "stretch": "<session>@<transcript mtime>"}
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from attend.peers.transcript import read_samples
from attend.sensors.base import (
    Focus,
    expand_home,
    focus_transcript,
    require,
    require_seconds,
)

__all__ = ["KeepwarmSensor", "is_due"]


def is_due(idle: float, tokens: int, *, idle_floor: float, cache_life: float, min_tokens: int) -> bool:
    """True while a wake refreshes a cache worth keeping: idle in [floor, life) and enough tokens held."""
    return idle_floor <= idle < cache_life and tokens >= min_tokens


class KeepwarmSensor:
    """Reports how long the project's newest session has been idle and whether a wake is due.

    Crate fields (set in ``sensors.d/keepwarm.yaml``): `projects_dir`, `idle_floor`, `cache_life`
    (seconds) and `min_tokens`. `clock` is for callers that need another time source (seconds since
    the epoch); the transcript's modification time is compared with it.
    """

    def __init__(self, config: Mapping[str, Any], clock: Callable[[], float] = time.time) -> None:
        self.projects_dir: str = require(config, "projects_dir", str)  # `~` is the poll's home (focus.env)
        self.idle_floor = require_seconds(config, "idle_floor")
        self.cache_life = require_seconds(config, "cache_life")
        self.min_tokens: int = require(config, "min_tokens", int)
        self._clock = clock

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The idle time and held tokens of the newest session, and whether a wake is due.

        Raises:
            SensorUnavailable: no transcript for the project.
        """
        transcript = focus_transcript(expand_home(self.projects_dir, focus.env), focus.cwd, focus.session, focus.transcript)
        samples = read_samples(transcript.path)
        tokens = samples[-1].tokens if samples else 0
        idle = max(0.0, self._clock() - transcript.mtime)
        return {
            "session": transcript.session,
            "idle_seconds": int(idle),
            "idle_minutes": int(idle // 60),
            "tokens": tokens,
            "lapses_in_minutes": int(max(0.0, self.cache_life - idle) // 60),
            "due": is_due(
                idle, tokens, idle_floor=self.idle_floor, cache_life=self.cache_life, min_tokens=self.min_tokens
            ),
            "stretch": f"{transcript.session}@{int(transcript.mtime)}",
        }
