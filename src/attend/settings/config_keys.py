"""The config.yaml keys as `attend settings` reaches them: `attend.project_sensors`, `attend.engagement.*`,
`attend.governor.*`, `attend.delivery.*` (ADR-403 §2, ADR-123; DESIGN.md "Delivery").

Every key, its type, description, default and value check are the spec's `CONFIG_SCHEMA`
(`spec/config.py`): the same declaration `compile --check` checks config.yaml against and the runtime
takes its defaults from, so a key here always means what the daemon reads, and durations take the sensor
files' forms (`90`, `90s`, `1m`). This module adds only what settings asks of it.

Layers: config.yaml in `$XDG_CONFIG_HOME/attend/` is the user layer and `<project>/.claude/attend.yaml`
the project layer; the project file overrides engagement and governor keys, but `project_sensors` is
read from the user file only (a project cannot grant trust to itself), so writing it with `--project`
is refused. Either file may hold its keys at the top level or under one `attend:` mapping.
"""

from __future__ import annotations

from typing import Any

from attend.spec.config import CONFIG_SCHEMA, ConfigField, config_default, section_names

__all__ = ["CONFIG_FIELDS", "USER_ONLY", "ConfigField", "config_default", "config_field", "section_names",
           "value_problem"]

#: Every config key (its path inside config.yaml) and what it means.
CONFIG_FIELDS: dict[tuple[str, ...], ConfigField] = CONFIG_SCHEMA

#: Keys only the user layer may set.
USER_ONLY: frozenset[tuple[str, ...]] = frozenset(path for path, f in CONFIG_SCHEMA.items() if f.user_only)


def config_field(path: tuple[str, ...]) -> ConfigField | None:
    """The config key at `path`, or None."""
    return CONFIG_FIELDS.get(path)


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
