"""Durations in sensor files: seconds as a number, or `500ms` / `30s` / `5m` / `1h` (DESIGN.md, Spec v1).

One pure function turns either form into float seconds; the schema uses `is_duration` to validate and
the normaliser `parse_duration` to store the value in `MergedSensor.data`. The range is checked before any
conversion (a 400-digit integer would overflow `float()`): ASCII digits only, at most
`MAX_DURATION_CHARS` characters, finite, and at most `MAX_DURATION_SECONDS` (30 days).
"""

from __future__ import annotations

import re

from attend.bounds import MAX_DURATION_CHARS, MAX_DURATION_SECONDS
from attend.spec.yamltext import yaml_text

__all__ = ["ACCEPTED_FORMS", "DURATION_SYNTAX", "UNIT_SECONDS", "is_duration", "json_schema_pattern", "parse_duration"]

#: Seconds per unit suffix.
UNIT_SECONDS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

#: What an error message says a duration may look like.
ACCEPTED_FORMS = "a number of seconds (e.g. 90 or 2.5) or a string like 500ms, 30s, 5m or 1h, at most 30 days"

#: The string form of a duration, the one definition of its syntax: digits with an optional unit,
#: ASCII spaces and tabs around. ASCII digits only (`\d` would take `٣s`, an Arabic-Indic three), and
#: written without anchors or Python-only syntax so that `spec/jsonschema.py` publishes this same text
#: as the JSON Schema pattern (`json_schema_pattern`); `parse_duration` matches it against the whole string.
DURATION_SYNTAX = r"[ \t]*([0-9]+(?:\.[0-9]+)?|\.[0-9]+)[ \t]*(ms|s|m|h)?[ \t]*"
_DURATION = re.compile(DURATION_SYNTAX, re.ASCII)


def json_schema_pattern() -> str:
    """DURATION_SYNTAX as a JSON Schema (ECMA-262) pattern: anchored at both ends.

    `$` alone also matches before a final newline in Python's `re` (which Python's JSON Schema
    validators use), so the end is also pinned by "no character follows", which both dialects read alike.
    """
    return f"^(?:{DURATION_SYNTAX})$(?![\\s\\S])"


def parse_duration(value: object) -> float:
    """Turn a duration as written in a sensor file into seconds.

    Args:
        value: a non-negative number (seconds) or a string: digits with an optional unit
            (`ms`, `s`, `m`, `h`); digits alone mean seconds.

    Returns:
        The duration in seconds, as a float.

    Raises:
        ValueError: for anything else (booleans, negative or non-finite numbers, other strings);
            the message names the accepted forms.
    """
    if isinstance(value, bool):
        raise ValueError(f"{_shown(value)} is not a duration: use {ACCEPTED_FORMS}")
    if isinstance(value, int | float):
        # Compared before converting: an int past float's range would raise OverflowError in float();
        # NaN fails every comparison, so it is refused here too.
        if not 0 <= value <= MAX_DURATION_SECONDS:
            raise ValueError(f"{_shown(value)} is not a duration: use {ACCEPTED_FORMS}")
        return float(value)
    if isinstance(value, str) and len(value) <= MAX_DURATION_CHARS:
        match = _DURATION.fullmatch(value)
        if match:
            seconds = float(match.group(1)) * UNIT_SECONDS[match.group(2) or "s"]
            if seconds <= MAX_DURATION_SECONDS:
                return seconds
    raise ValueError(f"{_shown(value)} is not a duration: use {ACCEPTED_FORMS}")


def _shown(value: object) -> str:
    """The value in YAML's words, cut short: a duration error never quotes a whole hostile string."""
    return yaml_text(value, 40)


def is_duration(value: object) -> bool:
    """True when `parse_duration` accepts `value`."""
    try:
        parse_duration(value)
    except ValueError:
        return False
    return True
