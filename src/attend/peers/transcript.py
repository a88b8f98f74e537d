"""Reading Claude Code's session transcripts: the facts the context and keepwarm sensors report.

Claude Code writes one JSON-lines transcript per session under
``~/.claude/projects/<project path with each / and . replaced by ->/<session id>.jsonl``. Each
assistant entry carries ``message.usage``; the tokens the model held on that turn are
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``. Only the file's tail is read
(`TAIL_BYTES`), so a long session costs the same to poll as a short one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "TAIL_BYTES",
    "NoTranscript",
    "Transcript",
    "UsageSample",
    "context_tokens",
    "focus_transcript",
    "newest_transcript",
    "project_folder_candidates",
    "project_folder_name",
    "read_new_lines",
    "read_samples",
    "session_transcript",
    "turn_of",
    "turn_usage",
]

#: How much of a transcript's end is read per poll: enough for the last several turns even when
#: tool results are large.
TAIL_BYTES = 2 << 20

#: The usage fields that together are the context a turn held.
USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
#: The largest token count a usage field may hold (a thousand times any context window): a larger one
#: (a 400-digit number in a hostile transcript) makes the turn's usage unknown, never a number that
#: overflows a percentage.
MAX_USAGE_TOKENS = 10**9


class NoTranscript(LookupError):
    """The project has no Claude Code transcript (the sensors that read one report `unavailable`)."""


def project_folder_name(project: Path) -> str:
    """The folder Claude Code keeps a project's transcripts in: its path with ``/`` and ``.`` as ``-``."""
    return re.sub(r"[/.]", "-", str(project))


def project_folder_candidates(project: Path) -> list[str]:
    """The folder names to look for, in order: the ``/`` and ``.`` rule, then every character other than
    a letter, digit or ``-`` as ``-`` (how Claude Code also writes a path holding ``_`` or spaces)."""
    names = [project_folder_name(project), re.sub(r"[^A-Za-z0-9-]", "-", str(project))]
    return list(dict.fromkeys(names))


@dataclass(frozen=True, slots=True)
class Transcript:
    """The newest session transcript of a project."""

    path: Path
    session: str
    mtime: float


def newest_transcript(projects_dir: Path, project: Path) -> Transcript:
    """The most recently written transcript of `project`.

    Raises:
        NoTranscript: the project has no transcript folder or no transcript in it.
    """
    folders = [projects_dir / name for name in project_folder_candidates(project)]
    folder = next((f for f in folders if f.is_dir()), folders[0])
    try:
        files = [(entry.stat().st_mtime, Path(entry.path)) for entry in _scan(folder) if entry.name.endswith(".jsonl")]
    except OSError as exc:
        raise NoTranscript(f"no Claude Code transcripts at {folder}: {exc.strerror}") from exc
    if not files:
        raise NoTranscript(f"no Claude Code transcript in {folder}")
    mtime, path = max(files)
    return Transcript(path=path, session=path.stem, mtime=mtime)


def session_transcript(projects_dir: Path, project: Path | str, session: str) -> Path | None:
    """The transcript of session `session` in `project` (``<folder>/<session>.jsonl``), or None when there is none.

    `session` must already be a usable session id (`attend.peers.identity.SESSION_ID_RE`): it names the file.
    """
    for name in project_folder_candidates(Path(project)):
        path = projects_dir / name / f"{session}.jsonl"
        if path.is_file():
            return path
    return None


def focus_transcript(projects_dir: Path, project: Path, session: str, transcript: Path | str | None = None) -> Transcript:
    """The transcript a sensor reads: session `session`'s own when it is polled for one (a
    `scope: session` sensor: never another session's), else the project's newest.

    `transcript`: the path the session's hooks were given by Claude Code (runtime/sessions/register.py);
    when it names a file, it is the session's transcript wherever Claude Code keeps it (a
    `CLAUDE_CONFIG_DIR` elsewhere than `projects_dir`'s folder).

    Raises:
        NoTranscript: no such transcript.
    """
    if not session:
        return newest_transcript(projects_dir, project)
    told = Path(transcript) if transcript else None
    path = told if told is not None and told.is_file() else session_transcript(projects_dir, project, session)
    if path is None:
        raise NoTranscript(f"no Claude Code transcript of session {session} under {projects_dir}")
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise NoTranscript(f"cannot read {path}: {exc.strerror}") from exc
    return Transcript(path=path, session=session, mtime=mtime)


def _scan(folder: Path) -> list[Any]:
    with os.scandir(folder) as it:
        return [entry for entry in it if entry.is_file()]


def context_tokens(usage: Any) -> int:
    """The tokens a turn held: input + cache creation + cache read (missing fields count 0); 0 (no usage)
    when a field is past `MAX_USAGE_TOKENS`."""
    if not isinstance(usage, dict):
        return 0
    values = [v for v in (usage.get(f) for f in USAGE_FIELDS) if isinstance(v, int) and not isinstance(v, bool)]
    if any(v > MAX_USAGE_TOKENS for v in values):
        return 0
    return sum(v for v in values if v > 0)


@dataclass(frozen=True, slots=True)
class UsageSample:
    """One assistant turn: when it was written, its model and the tokens it held."""

    time: float  # seconds since the epoch, 0.0 when the entry has no timestamp
    model: str
    tokens: int


def _timestamp(value: Any) -> float:
    if not isinstance(value, str):
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def turn_usage(entry: Any) -> UsageSample | None:
    """The session's own assistant turn in transcript entry `entry`, with the tokens it held; None for any other
    entry (a subagent's turn, which is a sidechain, a turn that held no tokens, a user entry)."""
    if not isinstance(entry, dict) or entry.get("type") != "assistant" or entry.get("isSidechain"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    tokens = context_tokens(message.get("usage"))
    if tokens <= 0:
        return None
    return UsageSample(_timestamp(entry.get("timestamp")), str(message.get("model") or ""), tokens)


def turn_of(entry: Any) -> tuple[str, float] | None:
    """Who spoke in transcript entry `entry` and when: ("user", t) for a prompt the user typed, ("assistant", t)
    for the session's own assistant turn; None for anything else (a tool result, which Claude Code writes as a
    user entry; a meta or sidechain entry; a summary; an entry without a readable timestamp)."""
    if not isinstance(entry, dict) or entry.get("isSidechain") or entry.get("isMeta"):
        return None
    kind = entry.get("type")
    if kind not in ("user", "assistant"):
        return None
    when = _timestamp(entry.get("timestamp"))
    if when <= 0:
        return None
    if kind == "user":
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if "toolUseResult" in entry or not isinstance(content, str | list):
            return None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
    return kind, when


def read_samples(path: Path, tail_bytes: int = TAIL_BYTES) -> list[UsageSample]:
    """The assistant turns with usage in the tail of transcript `path`, oldest first.

    Sidechain entries (a subagent's turns) and turns that held no tokens are left out. A line that is
    not JSON (a partial line being written) is skipped.
    """
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - tail_bytes))
        data = fh.read()
    lines = data.split(b"\n")
    if size > tail_bytes:
        lines = lines[1:]  # the first line is cut
    samples = []
    for line in lines:
        if b'"assistant"' not in line:
            continue
        try:
            sample = turn_usage(json.loads(line))
        except ValueError:
            continue
        if sample is not None:
            samples.append(sample)
    return samples


def read_new_lines(path: Path, offset: int, tail_bytes: int = TAIL_BYTES) -> tuple[list[bytes], int]:
    """The complete lines of transcript `path` written after byte `offset`, and the offset after the last one.

    A partial last line (being written) waits for the next read. At most the last `tail_bytes` are read: when
    more was written since `offset` (a first read of a long transcript at offset 0, a transcript that grew
    past it between reads), the read starts inside that tail and its first, cut line is left out. An offset
    past the end (a transcript replaced or cut) reads the tail again.

    Raises:
        OSError: the transcript cannot be read.
    """
    with path.open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        if offset > size:
            offset = 0
        start = max(offset, size - tail_bytes)
        fh.seek(start)
        data = fh.read(size - start)
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    if start > offset and lines:
        lines = lines[1:]  # the read began inside a line
    return lines, start + end
