"""The disclosure sensor: re-tells a session attend's messaging commands each time another share of its
context window has gone by since it last saw them (upstream ADR-400 and ADR-122, "token-gated reheat").

What an agent read at the start of a session stops bearing on its work as the context fills; a peer
message then arrives and the agent no longer knows it can answer, or how. The sensor measures that
distance on the session's own transcript (`scope: session`), the authoritative ledger upstream names:

- a *sighting* is an entry of the session itself (not a subagent's) that holds `marker` (the shipped
  line holds it, so the line once delivered is one; so is the agent running ``attend peers send``, or a
  skill that names it);
- *gone by* is the context the session's own turns added since the last sighting: each turn's growth
  over the one before (input + cache tokens, `peers.transcript.turn_usage`); a compaction shrinks the
  context and adds nothing, what grows after it counts;
- once `every` percent of `window` has gone by, `due` holds one item keyed by session, sighting and
  step, so the line goes out once per step; a sighting starts the count again. Before any sighting the
  count runs from the first turn read.

An idle session is not woken for it: `due` is empty while the session's newest entry is the end of a
turn (an assistant entry of text only); the line goes out at the first poll of its next turn, while it
works. The transcript is read on from where the last poll stopped (`read_new_lines`), so a long session
costs what its new lines cost.

Result::

    {"session", "tokens", "window", "every": 25, "gone_by": 52000, "percent_since": 26.0,
     "sightings": 1, "working": true,
     "due": [{"id": "<session>/<sighting>/<step>", "step": 1, "percent_since": 26.0, "every": 25}]}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from attend.peers.transcript import read_new_lines, turn_usage
from attend.sensors.base import Focus, SensorConfigError, SensorUnavailable, expand_home, focus_transcript, require

__all__ = ["DisclosureSensor", "Ledger"]


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


class Ledger:
    """What a session's transcript says so far: where the reading stopped, the newest turn's tokens, the
    context gone by since the last sighting, how many sightings, and whether a turn is in progress."""

    def __init__(self, session: str = "") -> None:
        self.session = session
        self.offset = 0
        self.tokens = 0
        self.gone_by = 0
        self.sightings = 0
        self.working = False

    def read(self, lines: Iterable[bytes], marker: bytes) -> None:
        """Account for transcript `lines` (complete JSON lines, oldest first)."""
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # not JSON: nothing Claude Code wrote whole
            if not isinstance(entry, dict) or entry.get("isSidechain"):
                continue  # a subagent's entries are not what the session holds
            usage = turn_usage(entry)
            if usage is not None:
                if self.tokens:
                    self.gone_by += max(0, usage.tokens - self.tokens)
                self.tokens = usage.tokens
            if marker in line:
                self.gone_by = 0
                self.sightings += 1
            self._turn(entry)

    def _turn(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "user" and not entry.get("isMeta"):
            self.working = True  # a prompt or a tool's result: the model answers next
        elif kind == "assistant":
            message = entry.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list) and content:
                # text only ends a turn; a tool call or thinking goes on
                self.working = not all(isinstance(b, dict) and b.get("type") == "text" for b in content)

    def export(self) -> dict[str, Any]:
        return {"session": self.session, "offset": self.offset, "tokens": self.tokens, "gone_by": self.gone_by,
                "sightings": self.sightings, "working": self.working}

    @classmethod
    def restored(cls, state: Any) -> Ledger:
        ledger = cls()
        if isinstance(state, dict):
            ledger.session = str(state.get("session") or "")
            for name in ("offset", "tokens", "gone_by", "sightings"):
                value = state.get(name)
                setattr(ledger, name, value if isinstance(value, int) and not isinstance(value, bool) and value >= 0
                        else 0)
            ledger.working = state.get("working") is True
        return ledger


class DisclosureSensor:
    """Re-tells the messaging commands every `every` percent of the context window (a `scope: session` sensor).

    Crate fields (``sensors.d/disclosure.yaml``): `projects_dir` (Claude Code's transcripts, ``~`` expanded),
    `window` (tokens), `every` (percent of `window`), `marker` (the text whose appearance is a sighting: the
    shipped line holds it).

    State between polls: the `Ledger` of the session it is polled for.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.projects_dir: str = require(config, "projects_dir", str)
        self.window: int = require(config, "window", int)
        if self.window <= 0:
            raise SensorConfigError("`window` must be a positive number of tokens")
        self.every = float(require(config, "every", float))
        if not 0 < self.every <= 100:
            raise SensorConfigError("`every` must be a percentage above 0 and at most 100")
        marker: str = require(config, "marker", str)
        if not marker.strip():
            raise SensorConfigError("`marker` must not be empty")
        self.marker = marker.encode()
        self.ledger = Ledger()

    def export_state(self) -> dict[str, Any]:
        return self.ledger.export()

    def import_state(self, state: Any) -> None:
        self.ledger = Ledger.restored(state)

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The context gone by since the session last saw the commands, and the step due.

        Raises:
            SensorUnavailable: no transcript for the session, or no assistant turn with usage in it yet.
        """
        transcript = focus_transcript(expand_home(self.projects_dir, focus.env), focus.cwd, focus.session)
        if transcript.session != self.ledger.session:
            self.ledger = Ledger(transcript.session)
        try:
            lines, offset = read_new_lines(transcript.path, self.ledger.offset)
        except OSError as exc:
            raise SensorUnavailable(f"cannot read {transcript.path}: {exc.strerror}") from None
        self.ledger.read(lines, self.marker)
        self.ledger.offset = offset
        if not self.ledger.tokens:
            raise SensorUnavailable(f"no assistant turn with token usage in {transcript.path}")
        ledger = self.ledger
        step = int(ledger.gone_by // (self.window * self.every / 100))
        percent_since = round(100.0 * ledger.gone_by / self.window, 1)
        every = _number(self.every)
        due = ([{"id": f"{ledger.session}/{ledger.sightings}/{step}", "step": step, "percent_since": percent_since,
                 "every": every}] if step >= 1 and ledger.working else [])
        return {"session": ledger.session, "tokens": ledger.tokens, "window": self.window, "every": every,
                "gone_by": ledger.gone_by, "percent_since": percent_since, "sightings": ledger.sightings,
                "working": ledger.working, "due": due}
