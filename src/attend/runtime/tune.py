"""`attend tune`: engagement settings from the pace of the user's own sessions (upstream `tune`; docs/settings.md).

This module derives them; commands/tune.py writes them (`settings.plans.set_config`, as `attend settings set`).

Claude Code writes one transcript per session (peers/transcript.py). How long the user takes to answer the
agent, and how far apart their prompts are, says how often a line can interrupt them usefully:

- `attend.engagement.absolute_refractory` (seconds after a sensor's fire during which it cannot fire again)
  is the median gap from an assistant turn to the user's next prompt, within 15 s to 300 s: a sensor fires
  at most about once per exchange.
- `attend.engagement.live_window` (seconds a fire counts as recent toward the relative refractory) is the
  90th percentile of the gaps between the user's prompts, times 3, within 300 s to 3600 s: fires count
  as a burst over about three of the user's turns. This is the upstream "event window"; attend's other
  window, the event lane's governor window (`attend.governor.event.window`, 120 s: at most 3 lines per
  window), bounds a rate, not what counts as recent, and is left alone.

Decisions implemented here:

- The transcripts read are the newest `sessions` (5) of each of the newest `projects` (10) project folders
  under Claude Code's `projects/` folder (`files.claude_folder`), a project's age being its newest
  transcript's; only regular files named `*.jsonl` (no symlink, FIFO or device is opened), each read in its
  last `TUNE_TAIL_BYTES` only (peers/transcript.py `read_new_lines`). Only who spoke and when is read
  (`transcript.turn_of`): a prompt the user typed, an assistant turn; tool results, meta and sidechain
  entries are not turns. Nothing of what was said is kept or printed.
- Gaps are taken within one session, in time order: assistant → user is from the last assistant turn
  before a prompt to the prompt; user → user between consecutive prompts. No gap is dropped for being
  long (a night away): the median and the clamp bound what one gap can do.
- The 90th percentile is the nearest rank (`ceil(0.9 n)`-th smallest), so it is always a measured gap.
- A setting with no gap to measure it is not derived (and not written).
"""

from __future__ import annotations

import json
import math
import os
import stat
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attend.files import claude_folder
from attend.peers.transcript import read_new_lines, turn_of

__all__ = ["PROJECTS", "SESSIONS", "Derived", "Tuning", "derive", "nearest_rank", "recent_transcripts"]

#: How many project folders are read by default, newest first.
PROJECTS = 10
#: How many sessions of each project are read by default, newest first.
SESSIONS = 5
#: How much of a transcript's end is read (bytes).
TUNE_TAIL_BYTES = 8 << 20
#: The bounds of `absolute_refractory` (seconds).
REFRACTORY_BOUNDS = (15.0, 300.0)
#: The bounds of `live_window` (seconds), and what the 90th percentile of the prompt gaps is multiplied by.
WINDOW_BOUNDS = (300.0, 3600.0)
WINDOW_FACTOR = 3


@dataclass(slots=True)
class Derived:
    """One setting `tune` derives: its key, the value, and the figures it came from."""

    key: str
    path: tuple[str, ...]
    #: What was measured: `median` of the assistant → user gaps, `p90` of the user → user gaps.
    statistic: str
    gaps: int
    measured: float | None
    factor: int
    bounds: tuple[float, float]
    current: Any = None

    @property
    def value(self) -> int | None:
        """The setting: the measured figure times `factor`, within `bounds`, in whole seconds (None: no gaps)."""
        if self.measured is None:
            return None
        low, high = self.bounds
        return round(min(high, max(low, self.measured * self.factor)))

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "current": self.current,
                "from": {"statistic": self.statistic, "gaps": self.gaps, "seconds": self.measured,
                         "factor": self.factor, "within": list(self.bounds)}}


@dataclass(slots=True)
class Tuning:
    """What `tune` read and derived."""

    projects_dir: Path
    transcripts: list[Path] = field(default_factory=list)
    projects: int = 0
    prompts: int = 0
    settings: list[Derived] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"projects_dir": str(self.projects_dir), "projects": self.projects,
                "sessions": len(self.transcripts), "prompts": self.prompts,
                "transcripts": [str(p) for p in self.transcripts],
                "settings": [d.to_json() for d in self.settings]}


def _regular_jsonl(folder: Path) -> list[tuple[float, Path]]:
    """The transcripts in `folder` (regular files `*.jsonl`, never a symlink), with their mtimes."""
    out = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    out.append((info.st_mtime, Path(entry.path)))
    except OSError:
        return []
    return out


def recent_transcripts(projects_dir: Path, *, projects: int = PROJECTS, sessions: int = SESSIONS) -> tuple[list[Path], int]:
    """The newest `sessions` transcripts of each of the newest `projects` project folders, and how many
    folders they came from."""
    folders = []
    try:
        with os.scandir(projects_dir) as entries:
            candidates = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return [], 0
    for folder in candidates:
        found = sorted(_regular_jsonl(folder), reverse=True)
        if found:
            folders.append((found[0][0], folder, [p for _, p in found[:sessions]]))
    folders.sort(key=lambda f: (f[0], str(f[1])), reverse=True)
    chosen = folders[:projects]
    return [p for _, _, paths in chosen for p in paths], len(chosen)


def _turns(path: Path) -> list[tuple[float, str]]:
    """The turns of one transcript, in time order: (time, "user" | "assistant")."""
    try:
        lines, _ = read_new_lines(path, 0, TUNE_TAIL_BYTES)
    except OSError:
        return []
    turns = []
    for line in lines:
        if b'"user"' not in line and b'"assistant"' not in line:
            continue
        try:
            turn = turn_of(json.loads(line))
        except (ValueError, RecursionError):
            continue  # a line being written, or not JSON
        if turn is not None:
            turns.append((turn[1], turn[0]))
    return sorted(turns)


def nearest_rank(values: list[float], fraction: float) -> float:
    """The `fraction` percentile of `values` by nearest rank: the `ceil(fraction · n)`-th smallest."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def derive(env: Mapping[str, str], *, projects: int = PROJECTS, sessions: int = SESSIONS,
           current: Mapping[str, Any] | None = None) -> Tuning:
    """Read the user's recent transcripts and derive the settings (module docstring).

    `current`: the engagement section in force (its values are shown beside the derived ones).
    """
    projects_dir = claude_folder(env) / "projects"
    paths, folders = recent_transcripts(projects_dir, projects=projects, sessions=sessions)
    tuning = Tuning(projects_dir, paths, folders)
    replies: list[float] = []
    prompts: list[float] = []
    for path in paths:
        last: tuple[float, str] | None = None
        last_prompt: float | None = None
        for when, kind in _turns(path):
            if kind == "user":
                tuning.prompts += 1
                if last is not None and last[1] == "assistant" and when > last[0]:
                    replies.append(when - last[0])
                if last_prompt is not None and when > last_prompt:
                    prompts.append(when - last_prompt)
                last_prompt = when
            last = (when, kind)
    current = current or {}
    tuning.settings = [
        Derived("attend.engagement.absolute_refractory", ("engagement", "absolute_refractory"),
                "median assistant -> user gap", len(replies), statistics.median(replies) if replies else None, 1,
                REFRACTORY_BOUNDS, current.get("absolute_refractory")),
        Derived("attend.engagement.live_window", ("engagement", "live_window"),
                "p90 user -> user gap", len(prompts), nearest_rank(prompts, 0.9) if prompts else None,
                WINDOW_FACTOR, WINDOW_BOUNDS, current.get("live_window")),
    ]
    return tuning
