"""A session's cold start: the peer messages it missed before it started (DESIGN.md, "Peers").

A new session starts at the journal's end (DESIGN.md, "Sessions"), and a message that came before the
messages sensor's first poll is in its baseline and never fires. So a session's first delivery (its
`attend run` Monitor stream, or its Stop-hook drain, whichever comes first) hands over, from the
peers folder itself:

- its project's addressed messages, the newest `cold_start_addressed` (50) of them;
- open-channel and channel messages younger than `cold_start_recent` (120 s);
- and passes over the rest with one line `N earlier messages not shown; attend peers inbox`.

Decisions implemented here:

- The lines are the messages sensor's own: each enabled crate sensor whose `source` is `messages`
  polls once here and its triggers run as a test fire from no state (every message an `added`), so
  the descriptions, magnitudes (hence priorities) and the `where` of the file and its settings apply.
  Own messages (`author` is the session) are neither shown nor counted. The first one shown from each
  sender says how to answer it, as the conduits' lines do (seen.py). The sensor's digest rule
  applies to what is handed over: more than its `digest.over` messages (8 for the shipped sensor) are
  its one digest line, so a new session gets ten waiting messages as one line, not ten `high` ones.
- Every message the cold start shows or passes over is recorded as seen by the session, with the
  cold start itself (`COLD_START`, store/session_rows.py) in one transaction, after printing: the sensor's
  later fire of the same message id is not shown again (runtime/sessions/seen.py), and a restarted session
  (same id) gets no second cold start. A crash between printing and recording shows them again once.
- A session's Monitor waits for the messages sensor's first poll (its baseline) before its cold start,
  at most `COLD_START_WAIT` seconds, so a message sent between the two is neither lost (the baseline
  would swallow it) nor shown twice (the seen items cover the overlap).
- An unresolved session (`pid-<pid>`) keeps no position and gets no cold start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.runtime.delivery import REPLY_HINT_META, priority
from attend.runtime.sessions.seen import hint_item

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor, Fire

__all__ = ["COLD_START_WAIT", "ColdStart", "Line", "cold_start", "message_sensors", "summary_text"]

#: The entry-point name of the messages sensor (a copy of it keeps the source, so it counts too).
MESSAGES_SOURCE = "messages"
#: How long a session's Monitor waits for the messages sensor's baseline before its cold start (seconds).
COLD_START_WAIT = 10.0


@dataclass(frozen=True, slots=True)
class Line:
    """One line a cold start shows, as a journal entry would print (`delivery.format_line`)."""

    sensor: str
    priority: str
    description: str
    key: str | None = None
    test: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    #: The one line standing for the messages passed over (`summary_text`), not a message itself.
    summary: bool = False

    def text(self) -> str:
        """The line as printed (`delivery.format_line`, on the message lane: a long message's parts are lines)."""
        from attend.runtime.delivery import format_line

        return format_line(self.sensor, self.priority, self.description, test=self.test, key=self.key,
                           meta=self.meta, lane="message")


@dataclass(slots=True)
class ColdStart:
    """What a session's cold start shows, and every item it shows or passes over."""

    lines: list[Line] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)


def summary_text(count: int) -> str:
    """The one line standing for the messages a cold start passes over."""
    return f"{count} earlier message{'s' if count != 1 else ''} not shown; attend peers inbox"


def message_sensors(project_dir: str | Path, env: Mapping[str, str]) -> list[CompiledSensor]:
    """The project's enabled, runnable crate sensors whose source is `messages`, compiled."""
    from attend.runtime.runnable import compiled_or_error, runnable
    from attend.spec import load_set

    out = []
    for sensor in load_set(project_dir, env).sensors.values():
        fields = sensor.ir
        if fields.kind != "crate" or fields.source != MESSAGES_SOURCE or not fields.enabled:
            continue
        if not runnable(sensor):
            continue
        compiled, _ = compiled_or_error(sensor)
        if compiled is not None:
            out.append(compiled)
    return out


def cold_start(
    compiled_sensors: list[CompiledSensor], project_dir: str | Path, session: str, *, seen: set[str], now: float,
    env: Mapping[str, str] | None = None,
) -> ColdStart:
    """What `session`'s cold start shows: each messages sensor's items as its triggers render them.

    Args:
        compiled_sensors: `message_sensors(project_dir, env)`.
        project_dir: the project.
        session: the session id.
        seen: the items the session was already shown (never shown or counted again).
        now: wall-clock seconds.
        env: the environment naming the peers folder (default `os.environ`).
    """
    from attend.sensors.base import Focus, SensorConfigError, SensorUnavailable
    from attend.sensors.messages import MessagesSensor

    env = os.environ if env is None else env
    seen = set(seen)
    out = ColdStart()
    passed: list[tuple[float, Line]] = []
    for compiled in compiled_sensors:
        config = {k: v for k, v in compiled.sensor.ir.crate.items() if k != "timeout"}
        try:
            sensor = MessagesSensor(config)
            result = sensor.poll(Focus(cwd=Path(project_dir), env=env))
        except (SensorConfigError, SensorUnavailable, OSError):
            continue  # the sensor's own poll reports it; a cold start shows nothing for it
        fires = [f for f in compiled.step(None, result, test=True, digest=False, now=now).fires
                 if f.key is not None and f.author != session and f"{compiled.name}/{f.key}" not in seen]
        addressed = sorted((f for f in fires if _kind(f) == "addressed"), key=_ts)
        cap = max(0, int(sensor.cold_start_addressed))
        newest = {id(f) for f in addressed[max(0, len(addressed) - cap):]}
        handed: list[Fire] = []
        for fire in sorted(fires, key=_ts):
            item = f"{compiled.name}/{fire.key}"
            shown = id(fire) in newest if _kind(fire) == "addressed" else now - _ts(fire) <= sensor.cold_start_recent
            if shown:
                handed.append(fire)
            else:
                passed.append((fire.magnitude, Line(compiled.name, priority(fire.magnitude), fire.description,
                                                    str(fire.key))))
            out.seen.append(item)
            seen.add(item)
        digest = getattr(compiled, "digest", None)
        if digest is not None and len(handed) > digest.over:  # the digest rule: more than `over` are one line
            (one,) = digest.apply(handed)
            out.lines.append(Line(compiled.name, priority(one.magnitude), one.description,
                                  meta={"authors": one.item["authors"], "keys": one.item["keys"]}))
        else:
            for f in handed:  # the first message from each sender says how to answer it (seen.py)
                hint = hint_item("message", str(f.key), f.author)
                told = hint is not None and hint not in seen
                if hint is not None and told:
                    seen.add(hint)
                    out.seen.append(hint)
                out.lines.append(Line(compiled.name, priority(f.magnitude), f.description, str(f.key),
                                      meta={REPLY_HINT_META: True} if told else {}))
    if passed:
        lightest = min(m for m, _ in passed)
        out.lines.append(Line(passed[0][1].sensor, priority(lightest), summary_text(len(passed)), summary=True))
    return out


def _kind(fire: Fire) -> str | None:
    return fire.item.get("kind") if isinstance(fire.item, dict) else None


def _ts(fire: Fire) -> float:
    ts = fire.item.get("ts") if isinstance(fire.item, dict) else None
    return float(ts) if isinstance(ts, int | float) else 0.0
