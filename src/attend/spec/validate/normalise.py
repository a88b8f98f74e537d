"""Normalising a valid merged sensor: defaults filled in, durations as float seconds."""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.bounds import MAX_MAGNITUDE
from attend.spec.durations import is_duration, parse_duration
from attend.spec.schema import (
    COMMAND_SCHEMA,
    DEFAULT_MIN_INTERVAL,
    MCP_SCHEMA,
    POLL_ONLY_FIELDS,
    RESOURCE_ONLY_FIELDS,
    SENSOR_SCHEMA,
    STREAM_ONLY_FIELDS,
    TOOL_ONLY_FIELDS,
    TRIGGER_SCHEMA,
)
from attend.spec.validate.locate import _duration_paths, _value_at


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """The merged sensor with defaults filled in and durations as float seconds.

    Values that do not validate are kept as written (the sensor is invalid anyway). Trigger
    `key`, `where`, `description` and `author` get no default: absent means absent.
    """
    out = dict(data)
    for field, rules in SENSOR_SCHEMA.items():
        default = rules["meta"]["default"]
        if field not in out and default is not None and field != "min_interval":
            out[field] = _fresh(default)
    kind = out.get("kind")
    for block, schema in (("command", COMMAND_SCHEMA), ("mcp", MCP_SCHEMA)):
        if isinstance(out.get(block), dict):
            out[block] = _with_defaults(out[block], schema)  # a copy: the durations below never touch `data`
    command = out.get("command")
    if isinstance(command, dict):
        # a polled command has no stream defaults, a stream no poll defaults (explain lists what applies)
        for name in POLL_ONLY_FIELDS if command.get("output") == "stream" else STREAM_ONLY_FIELDS:
            if name not in data["command"]:
                command.pop(name, None)
    mcp = out.get("mcp")
    if isinstance(mcp, dict):
        # a resource read has no arguments and no gate, a tool call no subscription (explain lists what applies)
        unused = TOOL_ONLY_FIELDS if "resource" in mcp and "tool" not in mcp else RESOURCE_ONLY_FIELDS
        for name in unused:
            if name not in data["mcp"]:
                mcp.pop(name, None)
    if kind != "crate" and out.get("crate") == {}:
        del out["crate"]
    if isinstance(out.get("flap"), dict):
        out["flap"] = dict(out["flap"])
    triggers = out.get("triggers")
    if isinstance(triggers, dict):
        out["triggers"] = {name: _with_defaults(t, TRIGGER_SCHEMA) if isinstance(t, dict) else t
                           for name, t in triggers.items()}
        for trigger in out["triggers"].values():
            if isinstance(trigger, dict) and isinstance(trigger.get("flap"), dict):
                trigger["flap"] = dict(trigger["flap"])  # a copy: the durations below never touch `data`
    for path in _duration_paths(out):
        block, value = _value_at(out, path[:-1]), _value_at(out, path)
        if isinstance(block, dict) and is_duration(value):
            block[path[-1]] = parse_duration(value)
    if "min_interval" not in out:
        interval = out.get("interval")
        out["min_interval"] = min(DEFAULT_MIN_INTERVAL, interval) if isinstance(interval, float) else \
            DEFAULT_MIN_INTERVAL
    if isinstance(out.get("triggers"), dict):
        for trigger in out["triggers"].values():
            if isinstance(trigger, dict) and "magnitude" in trigger:
                trigger["magnitude"] = _as_float(trigger["magnitude"])
    if "threshold" in out:
        out["threshold"] = _as_float(out["threshold"])
    return out


def _as_float(value: Any) -> Any:
    """An int as a float when float can hold it; anything else as written (the sensor is invalid then)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_MAGNITUDE:
        return float(value)
    return value


def _with_defaults(block: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    filled = dict(block)
    for field, rules in schema.items():
        default = rules["meta"]["default"]
        if field not in filled and default is not None:
            filled[field] = _fresh(default)
    return filled


def _fresh(default: Any) -> Any:
    return type(default)() if isinstance(default, dict | list) else default
