"""Settings key paths: parsing and printing `attend.sensors.<name>.<field>…` keys (ADR-403 §5).

A key is a dot-separated list of segments. A segment that holds a `.` or a `"`, that is empty, or that
starts or ends with a space is written double-quoted, with `\\"` and `\\\\` as its only escapes:
`attend.sensors.x.triggers.t.where."a.b".above`. Every other character (`-`, `*`, `?`, `[`, `/`, …) may
stand in a plain segment, so trigger names and where properties are written as they are in the file.

Three families of keys exist:

- `attend.sensors.<name>[.<field>…]` — a field of a sensor file, to any depth (the sensor layers);
- `attend.project_sensors` — the trusted projects (user `config.yaml` only);
- `attend.engagement.<field>` and `attend.governor.<lane>.<field>` — runtime parameters (`config.yaml`).

This module is pure: it knows the shape of keys, not which keys exist (see `attend.settings.resolve`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from attend.spec.config import CONFIG_KEYS

__all__ = [
    "CONFIG_SECTIONS",
    "ROOT",
    "Key",
    "KeySyntaxError",
    "format_key",
    "format_segment",
    "parse_key",
    "split_segments",
    "suggest",
]

#: The first segment of every attend key (ways has its own prefix, ways.sensors).
ROOT = "attend"

#: The config.yaml sections that settings keys reach, after `attend.` (the ones the config loader reads).
CONFIG_SECTIONS: tuple[str, ...] = CONFIG_KEYS

#: Characters that force a segment to be quoted.
_SPECIAL = frozenset('."')

#: How close a candidate must be to count as a did-you-mean (difflib ratio).
SUGGESTION_CUTOFF = 0.6


class KeySyntaxError(ValueError):
    """A key that does not parse; `column` is the 1-based position of the problem in the key."""

    def __init__(self, message: str, key: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.column = column

    def __str__(self) -> str:
        return f"{self.message} (column {self.column} of {self.key!r})"


@dataclass(frozen=True, slots=True)
class Key:
    """A parsed settings key.

    `scope` is `sensor` (a field of a sensor file) or `config` (a field of config.yaml). For a sensor
    key, `sensor` is the sensor name and `path` the field's address inside the sensor document
    (empty for the whole sensor). For a config key, `path` is the address inside config.yaml
    (`("engagement", "half_life")`).
    """

    scope: Literal["sensor", "config"]
    path: tuple[str, ...]
    sensor: str | None = None

    def __str__(self) -> str:
        if self.scope == "sensor":
            return format_key((ROOT, "sensors", self.sensor or "", *self.path))
        return format_key((ROOT, *self.path))


def format_segment(segment: str) -> str:
    """One segment as it stands in a key: plain when it can be, else double-quoted."""
    if segment and not (_SPECIAL & set(segment)) and segment == segment.strip():
        return segment
    return '"' + segment.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_key(segments: Iterable[str]) -> str:
    """Join segments into a key, quoting those that need it."""
    return ".".join(format_segment(s) for s in segments)


def split_segments(text: str) -> list[str]:
    """Split a key into its segments, undoing the quoting.

    Raises:
        KeySyntaxError: for an empty segment, an unterminated quote, an unknown escape or text
            glued to a closing quote.
    """
    segments: list[str] = []
    i, n = 0, len(text)
    if n == 0:
        raise KeySyntaxError("the key is empty", text, 1)
    while True:
        if i < n and text[i] == '"':
            start = i
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise KeySyntaxError("a quoted segment is not closed", text, start + 1)
                ch = text[i]
                if ch == "\\":
                    if i + 1 >= n or text[i + 1] not in '"\\':
                        raise KeySyntaxError('only \\" and \\\\ may be escaped in a quoted segment', text, i + 1)
                    buf.append(text[i + 1])
                    i += 2
                elif ch == '"':
                    i += 1
                    break
                else:
                    buf.append(ch)
                    i += 1
            segments.append("".join(buf))
            if i < n and text[i] != ".":
                raise KeySyntaxError("a quoted segment must be followed by '.' or the end of the key", text, i + 1)
        else:
            start = i
            while i < n and text[i] != ".":
                if text[i] == '"':
                    raise KeySyntaxError('a \'"\' inside a segment: quote the whole segment', text, i + 1)
                i += 1
            if i == start:
                raise KeySyntaxError("an empty segment (two dots, or a dot at an end)", text, i + 1)
            segments.append(text[start:i])
        if i >= n:
            return segments
        i += 1  # the dot
        if i >= n:
            raise KeySyntaxError("an empty segment (two dots, or a dot at an end)", text, i)


def parse_key(text: str) -> Key:
    """Parse a settings key into a `Key`.

    Raises:
        KeySyntaxError: when the text is not a key, or not under one of the families attend serves.
    """
    segments = split_segments(text)
    if segments[0] != ROOT:
        hint = f"; did you mean {ROOT}.{text}?" if segments[0] in ("sensors", *CONFIG_SECTIONS) else ""
        raise KeySyntaxError(f"keys start with '{ROOT}.'{hint}", text, 1)
    if len(segments) == 1:
        raise KeySyntaxError(
            f"'{ROOT}' alone is not a key: name attend.sensors.<name>… or attend.{{{','.join(CONFIG_SECTIONS)}}}…",
            text,
            1,
        )
    section = segments[1]
    if section == "sensors":
        if len(segments) < 3:
            raise KeySyntaxError("name a sensor: attend.sensors.<name>[.<field>…]", text, len(text))
        return Key("sensor", tuple(segments[3:]), segments[2])
    if section in CONFIG_SECTIONS:
        return Key("config", tuple(segments[1:]))
    guesses = suggest(section, ("sensors", *CONFIG_SECTIONS))
    hint = f"; did you mean attend.{guesses[0]}?" if guesses else ""
    raise KeySyntaxError(f"unknown section {section!r}{hint}", text, len(ROOT) + 2)


def suggest(word: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The candidates closest to `word`, best first (for did-you-mean messages)."""
    pool = sorted(set(candidates))
    return difflib.get_close_matches(word, pool, n=limit, cutoff=SUGGESTION_CUTOFF)
