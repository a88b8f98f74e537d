"""Normalising a valid merged sensor: defaults filled in, durations as float seconds."""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.vocab import JSON, JSONObject

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


def normalise(data: JSONObject) -> JSONObject:
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
        found = out.get(block)
        if isinstance(found, dict):
            out[block] = _with_defaults(found, schema)  # a copy: the durations below never touch `data`
    command, written = out.get("command"), data.get("command")
    if isinstance(command, dict) and isinstance(written, dict):
        # a polled command has no stream defaults, a stream no poll defaults (explain lists what applies)
        for name in POLL_ONLY_FIELDS if command.get("output") == "stream" else STREAM_ONLY_FIELDS:
            if name not in written:
                command.pop(name, None)
    mcp, written = out.get("mcp"), data.get("mcp")
    if isinstance(mcp, dict) and isinstance(written, dict):
        # a resource read has no arguments and no gate, a tool call no subscription (explain lists what applies)
        unused = TOOL_ONLY_FIELDS if "resource" in mcp and "tool" not in mcp else RESOURCE_ONLY_FIELDS
        for name in unused:
            if name not in written:
                mcp.pop(name, None)
    if kind != "crate" and out.get("crate") == {}:
        del out["crate"]
    flap = out.get("flap")
    if isinstance(flap, dict):
        out["flap"] = dict(flap)
    triggers = out.get("triggers")
    if isinstance(triggers, dict):
        filled: JSONObject = {name: _with_defaults(t, TRIGGER_SCHEMA) if isinstance(t, dict) else t
                              for name, t in triggers.items()}
        out["triggers"] = filled
        for trigger in filled.values():
            if isinstance(trigger, dict):
                trigger_flap = trigger.get("flap")
                if isinstance(trigger_flap, dict):
                    trigger["flap"] = dict(trigger_flap)  # a copy: the durations below never touch `data`
    for path in _duration_paths(out):
        holder, value = _value_at(out, path[:-1]), _value_at(out, path)
        if isinstance(holder, dict) and is_duration(value):
            holder[path[-1]] = parse_duration(value)
    if "min_interval" not in out:
        interval = out.get("interval")
        out["min_interval"] = min(DEFAULT_MIN_INTERVAL, interval) if isinstance(interval, float) else \
            DEFAULT_MIN_INTERVAL
    triggers = out.get("triggers")
    if isinstance(triggers, dict):
        for trigger in triggers.values():
            if isinstance(trigger, dict) and "magnitude" in trigger:
                trigger["magnitude"] = _as_float(trigger["magnitude"])
    if "threshold" in out:
        out["threshold"] = _as_float(out["threshold"])
    return out


def _as_float(value: JSON) -> JSON:
    """An int as a float when float can hold it; anything else as written (the sensor is invalid then)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_MAGNITUDE:
        return float(value)
    return value


def _with_defaults(block: JSONObject, schema: dict[str, Any]) -> JSONObject:
    filled = dict(block)
    for field, rules in schema.items():
        default = rules["meta"]["default"]
        if field not in filled and default is not None:
            filled[field] = _fresh(default)
    return filled


def _fresh(default: JSON) -> JSON:
    return type(default)() if isinstance(default, dict | list) else default
