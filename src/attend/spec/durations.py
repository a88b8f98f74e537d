"""Durations in sensor files: seconds as a number, or `500ms` / `30s` / `5m` / `1h` (DESIGN.md, Spec v1).

One pure function turns either form into float seconds; the schema uses `is_duration` to validate and
the normaliser `parse_duration` to store the value in `Sensor.data`.
"""

from __future__ import annotations

import math
import re

__all__ = ["ACCEPTED_FORMS", "UNIT_SECONDS", "is_duration", "parse_duration"]

#: Seconds per unit suffix.
UNIT_SECONDS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

#: What an error message says a duration may look like.
ACCEPTED_FORMS = "a number of seconds (e.g. 90 or 2.5) or a string like 500ms, 30s, 5m or 1h"

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?\s*$")


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
        raise ValueError(f"{value!r} is not a duration: use {ACCEPTED_FORMS}")
    if isinstance(value, int | float):
        seconds = float(value)
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"{value!r} is not a duration: use {ACCEPTED_FORMS}")
        return seconds
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1)) * UNIT_SECONDS[match.group(2) or "s"]
    raise ValueError(f"{value!r} is not a duration: use {ACCEPTED_FORMS}")


def is_duration(value: object) -> bool:
    """True when `parse_duration` accepts `value`."""
    try:
        parse_duration(value)
    except ValueError:
        return False
    return True
