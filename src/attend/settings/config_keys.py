"""The config.yaml keys: `attend.project_sensors`, `attend.engagement.*`, `attend.governor.*`,
`attend.delivery.*` (ADR-403 §2, ADR-123; DESIGN.md "Delivery").

The names and defaults are the runtime's own (`runtime/engagement.py`'s `EngagementParams`,
`runtime/governor.py`'s `DEFAULT_GOVERNORS`), so a key here always means what the daemon reads; each
value is checked as `compile --check` checks config.yaml (`spec.config.config_value_problem`), so
durations take the sensor files' forms (`90`, `90s`, `1m`).

Layers: config.yaml in `$XDG_CONFIG_HOME/attend/` is the user layer and `<project>/.claude/attend.yaml`
the project layer; the project file overrides engagement and governor keys, but `project_sensors` is
read from the user file only (a project cannot grant trust to itself), so writing it with `--project`
is refused. Either file may hold its keys at the top level or under one `attend:` mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from attend.runtime.engagement import EngagementParams
from attend.runtime.governor import DEFAULT_GOVERNORS
from attend.spec.config import DELIVERY_CHOICES, ENGAGEMENT_FIELDS, GOVERNOR_FIELDS, config_value_problem

__all__ = ["CONFIG_FIELDS", "ConfigField", "USER_ONLY", "config_field", "section_names", "value_problem"]


@dataclass(frozen=True, slots=True)
class ConfigField:
    """One config key: its description, type as a user reads it, default and value check."""

    description: str
    type: str
    default: Any
    check: Callable[[Any], str | None]


def _checked(kind: str, minimum: float, inclusive: bool) -> Callable[[Any], str | None]:
    """The value check of one engagement or governor field: the spec's, as `compile --check` runs it."""

    def check(value: Any) -> str | None:
        problem = config_value_problem(kind, minimum, inclusive, value)
        return None if problem is None else problem[1]

    return check


def _project_list(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return "must be a list of project directories, e.g. ['/home/me/code/app']"
    relative = [v for v in value if not (v.startswith("/") or v.startswith("~"))]
    if relative:
        return f"entries must be absolute paths (or start with ~): {', '.join(relative)}"
    return None


_ENGAGEMENT_TEXT = {
    "absolute_refractory": ("seconds after a fire during which the sensor cannot fire again", "duration"),
    "relative_peak": ("the threshold multiplier right after a fire, once the relative refractory is on", "number"),
    "relative_half_life": ("seconds for the relative refractory's extra multiplier to halve", "duration"),
    "relative_after": ("how many live recent fires turn the relative refractory on", "integer"),
    "live_window": ("seconds a fire counts as recent (toward relative_after)", "duration"),
}
_GOVERNOR_TEXT = {
    "cooldown": ("seconds between two disclosures on the {lane} lane", "duration"),
    "limit": ("the most disclosures on the {lane} lane per window", "integer"),
    "window": ("the rolling window of the {lane} lane's limit, in seconds", "duration"),
}


def _build() -> dict[tuple[str, ...], ConfigField]:
    table: dict[tuple[str, ...], ConfigField] = {
        ("project_sensors",): ConfigField(
            "projects whose own command and mcp sensor files may run (absolute paths; user config only)",
            "list of string", [], _project_list),
    }
    engagement = EngagementParams()
    for f in fields(EngagementParams):
        text, type_ = _ENGAGEMENT_TEXT.get(f.name, (f.name.replace("_", " "), "number"))
        table[("engagement", f.name)] = ConfigField(text, type_, getattr(engagement, f.name),
                                                    _checked(*ENGAGEMENT_FIELDS[f.name]))
    for lane, params in DEFAULT_GOVERNORS.items():
        for name, (text, type_) in _GOVERNOR_TEXT.items():
            table[("governor", lane, name)] = ConfigField(text.format(lane=lane), type_, getattr(params, name),
                                                          _checked(*GOVERNOR_FIELDS[name]))
    for name, words in DELIVERY_CHOICES.items():
        table[("delivery", name)] = ConfigField(_DELIVERY_TEXT[name], "string", words[0], _one_of(words))
    return table


_DELIVERY_TEXT = {
    "conduits": "how a session's lines reach it: auto (the hooks step in while its Monitor is not live), "
                "monitor (the Monitor stream only), hooks (the hooks only)",
}


def _one_of(words: tuple[str, ...]) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in words else f"must be one of {', '.join(words)}"

    return check


#: Every config key (its path inside config.yaml) and what it means.
CONFIG_FIELDS: dict[tuple[str, ...], ConfigField] = _build()

#: Keys only the user layer may set.
USER_ONLY: frozenset[tuple[str, ...]] = frozenset({("project_sensors",)})


def config_field(path: tuple[str, ...]) -> ConfigField | None:
    """The config key at `path`, or None."""
    return CONFIG_FIELDS.get(path)


def section_names(prefix: tuple[str, ...]) -> list[str]:
    """The names allowed right below `prefix` (for did-you-mean)."""
    n = len(prefix)
    return sorted({p[n] for p in CONFIG_FIELDS if len(p) > n and p[:n] == prefix})


def value_problem(path: tuple[str, ...], value: Any) -> str | None:
    """Why `value` cannot be stored at config key `path` (a mapping for a section is checked per key)."""
    known = config_field(path)
    if known is not None:
        return known.check(value)
    below = section_names(path)
    if not below:
        return "is not a config key"
    if not isinstance(value, dict):
        return f"is a section: set it to a mapping of {', '.join(below)}"
    for key, item in value.items():
        problem = value_problem((*path, str(key)), item)
        if problem:
            return f"{key} {problem}"
    return None
