"""Presence: the live sessions and what each is doing, for `peers list` and the peers sensor (DESIGN.md, "Peers").

A session is live while its heartbeat is (`Mailbox.presences`). What it is doing comes from its Claude
Code transcript, ``<projects_dir>/<project folder>/<session id>.jsonl`` (`peers/transcript.py`):

- status `working` while the transcript was written in the last `working_within` seconds (a turn in
  progress appends to it: every tool call, tool result and assistant message), `waiting` once it has
  been quiet longer (the session waits for its user, or runs one long tool call), `unknown` when the
  session has no transcript (not a Claude Code session, or one that has not written yet);
- context use: the newest assistant turn's tokens (input + cache creation + cache read, the context
  sensor's count) as a percentage of `window`; `unknown` without a transcript or a turn with usage.

Decision: both are computed when read, not written into the heartbeat. The heartbeat's writer (every
`attend run`, every 5 s) would otherwise read its transcript all the time for nobody, and a heartbeat
up to 5 s old would lag the transcript it reports. The three settings are the peers sensor's `crate:`
block (the shipped ``sensors.d/peers.yaml`` holds the defaults: 60 s, 200,000 tokens,
``~/.claude/projects``), read merged over its layers (`attend.sensors.peers.presence_settings`: the
crate block is the sensor's to parse; peers never imports sensors), so one setting
(`attend settings set attend.sensors.peers.crate.working_within 2m`) changes the sensor and the listing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

from attend.peers.identity import PRESENCE_SENSOR, SESSION_ID_RE
from attend.peers.mailbox import Presence
from attend.peers.transcript import TAIL_BYTES, read_samples, session_transcript

__all__ = ["CONTEXT_TAIL", "PRESENCE_SENSOR", "UNKNOWN", "PresenceSettings", "SessionState", "TranscriptReader",
           "last_activity", "status_of"]

#: How much of a transcript's end is read first for its newest turn (the whole `TAIL_BYTES` only when
#: this much holds no assistant turn with usage, as after a huge tool result).
CONTEXT_TAIL = 256 << 10
#: How many transcripts' newest turn a reader remembers (sessions come and go; the memory must not grow).
REMEMBERED = 512

UNKNOWN: Literal["unknown"] = "unknown"


@dataclass(frozen=True, slots=True)
class PresenceSettings:
    """Where transcripts are, the context window, and how recent a write means `working`."""

    projects_dir: Path
    window: int
    working_within: float


def status_of(mtime: float | None, now: float, working_within: float) -> str:
    """`working` when a transcript last written at `mtime` was written within `working_within` seconds of `now`."""
    if mtime is None:
        return UNKNOWN
    return "working" if now - mtime <= working_within else "waiting"


def last_activity(settings: PresenceSettings, session: str, folder: str) -> float | None:
    """When `session`'s transcript in `folder` was last written (None: it has none); sent with its heartbeat
    across machines, where its transcript cannot be read."""
    if not SESSION_ID_RE.fullmatch(session):
        return None
    path = session_transcript(settings.projects_dir, folder, session)
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


class SessionStateJson(TypedDict):
    """`SessionState.to_json`."""

    status: str
    context: float | Literal["unknown"]
    context_tokens: int | None


@dataclass(frozen=True, slots=True)
class SessionState:
    """What a live session is doing: `status` (working, waiting, unknown), and its context use."""

    status: str
    context: float | None  # percent of the window; None: unknown
    tokens: int | None

    def to_json(self) -> SessionStateJson:
        """`status`, `context` (percent or "unknown") and `context_tokens` (or None)."""
        return {"status": self.status, "context": UNKNOWN if self.context is None else self.context,
                "context_tokens": self.tokens}


class TranscriptReader:
    """Reads sessions' states from their transcripts; an unchanged transcript (same size and mtime) is not read again.

    Args:
        settings: where the transcripts are, the window, the working threshold.
    """

    def __init__(self, settings: PresenceSettings) -> None:
        self.settings = settings
        self._tokens: dict[Path, tuple[tuple[int, int], int | None]] = {}

    def state(self, presence: Presence, now: float) -> SessionState:
        """The state of the session behind `presence` at time `now`."""
        if presence.remote:  # another machine's session: its transcript is there, its last write came with its beat
            return SessionState(status_of(presence.activity, now, self.settings.working_within), None, None)
        if not SESSION_ID_RE.fullmatch(presence.session):
            return SessionState(UNKNOWN, None, None)  # not a name a transcript can have
        path = session_transcript(self.settings.projects_dir, presence.path or presence.project, presence.session)
        try:
            stat = path.stat() if path is not None else None
        except OSError:
            stat = None
        if path is None or stat is None:
            return SessionState(UNKNOWN, None, None)
        tokens = self._newest_tokens(path, (stat.st_size, stat.st_mtime_ns))
        context = None if tokens is None else round(100.0 * tokens / self.settings.window, 1)
        return SessionState(status_of(stat.st_mtime, now, self.settings.working_within), context, tokens)

    def _newest_tokens(self, path: Path, version: tuple[int, int]) -> int | None:
        cached = self._tokens.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        try:
            samples = read_samples(path, CONTEXT_TAIL)
            if not samples and version[0] > CONTEXT_TAIL:
                samples = read_samples(path, TAIL_BYTES)
        except OSError:
            return None
        tokens = samples[-1].tokens if samples else None
        if len(self._tokens) >= REMEMBERED:
            self._tokens.clear()
        self._tokens[path] = (version, tokens)
        return tokens
