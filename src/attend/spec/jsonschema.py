"""`attend spec schema`: spec v1 as a JSON Schema (draft 2020-12) for editors (ADR-403 §1).

Built from the same cerberus schema the validator uses (`spec/schema.py`), descriptions and defaults
included, so yaml-language-server can complete and check sensor files. Because a higher-layer file
may hold only the fields it overrides, no top-level field is required here; a kind's block is
required once `kind` names it. Use it with `# yaml-language-server: $schema=<file>` in a sensor file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attend.bounds import MAX_DURATION_CHARS, MAX_DURATION_SECONDS
from attend.spec.durations import ACCEPTED_FORMS, json_schema_pattern
from attend.spec.schema import (
    MCP_REMOTE_FIELDS,
    MCP_STDIO_FIELDS,
    MCP_TRANSPORTS,
    NAME_PATTERN,
    OPERATORS,
    SENSOR_SCHEMA,
    SPEC_VERSION,
)

if TYPE_CHECKING:
    from attend.vocab import JSON, JSONObject

__all__ = ["DURATION_PATTERN", "json_schema"]

#: The string form of a duration, as a JSON Schema pattern: spec/durations.py's own definition.
DURATION_PATTERN = json_schema_pattern()
SCHEMA_ID = "https://attend.invalid/schemas/sensor-spec-v1.json"

_SIMPLE = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
           "dict": "object", "list": "array"}


def _types(rules: dict[str, Any]) -> list[str]:
    declared: str | list[str] = rules.get("type", [])
    return declared if isinstance(declared, list) else [declared]


def _field(rules: dict[str, Any]) -> JSONObject:
    """One cerberus field's rules as a JSON Schema."""
    out: JSONObject = {}
    meta: dict[str, JSON] = rules.get("meta", {})
    description, default = meta.get("description"), meta.get("default")
    if description:
        out["description"] = description
    if default is not None:
        out["default"] = default
    types = _types(rules)
    if types == ["duration"]:
        out["anyOf"] = [{"type": "number", "minimum": 0, "maximum": MAX_DURATION_SECONDS},
                        {"type": "string", "pattern": DURATION_PATTERN, "maxLength": MAX_DURATION_CHARS}]
        out["description"] = f"{description or ''} ({ACCEPTED_FORMS})".strip()
        return out
    json_types: list[JSON] = [_SIMPLE[t] for t in types if t in _SIMPLE]
    if rules.get("nullable"):
        json_types.append("null")
    if json_types:
        out["type"] = json_types[0] if len(json_types) == 1 else json_types
    if "allowed" in rules:
        out["enum"] = list(rules["allowed"])
    if "min" in rules:
        out["minimum"] = rules["min"]
    if "minlength" in rules:
        out["minItems"] = rules["minlength"]
    schema = rules.get("schema")
    if isinstance(schema, dict) and "list" in types and "type" in schema:
        out["items"] = _field(schema)
    elif isinstance(schema, dict) and "dict" in types:
        out.update(_object(schema, allow_unknown=bool(rules.get("allow_unknown"))))
    elif "dict" in types:
        if rules.get("allow_unknown"):
            out["additionalProperties"] = True
        if "keysrules" in rules and "regex" in rules["keysrules"]:
            out["propertyNames"] = {"pattern": rules["keysrules"]["regex"]}
        if "valuesrules" in rules:
            out["additionalProperties"] = _field(rules["valuesrules"])
    return out


def _object(schema: dict[str, Any], *, allow_unknown: bool = False) -> JSONObject:
    out: JSONObject = {
        "properties": {name: _field(rules) for name, rules in schema.items()},
        "additionalProperties": allow_unknown,
    }
    required: list[JSON] = [name for name, rules in schema.items() if rules.get("required")]
    if required:
        out["required"] = required
    return out


def json_schema() -> JSONObject:
    """The JSON Schema (draft 2020-12) of a spec v1 sensor file."""
    schema: JSONObject = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"attend sensor (spec {SPEC_VERSION})",
        "description": "One sensor per file, named <name>.yaml; see docs/spec.md.",
        "type": "object",
        **_object(SENSOR_SCHEMA),
    }
    properties = _at(schema, "properties")
    _at(properties, "spec")["const"] = SPEC_VERSION
    _at(properties, "name")["pattern"] = NAME_PATTERN
    trigger = _at(properties, "triggers", "additionalProperties")
    _at(trigger, "properties", "where", "additionalProperties")["anyOf"] = [
        {"type": ["string", "number", "boolean", "null", "array"]},
        {"type": "object", "propertyNames": {"enum": list(OPERATORS)}},
    ]
    mcp = _at(properties, "mcp")
    mcp["oneOf"] = [{"required": ["tool"], "not": {"required": ["resource"]}},
                    {"required": ["resource"], "not": {"required": ["tool"]}}]
    # an inline server: a stdio program (`command`, no `url`), or a remote endpoint (`type: http|sse` and `url`,
    # no `command`, `args` or `env`); a name is a string
    remote: list[JSON] = [kind for kind in MCP_TRANSPORTS if kind != "stdio"]
    _at(mcp, "properties", "server")["anyOf"] = [
        {"type": "string"},
        {"type": "object", "required": ["command"],
         "not": {"anyOf": [{"required": [name]} for name in MCP_REMOTE_FIELDS]},
         "properties": {"type": {"const": "stdio"}}},
        {"type": "object", "required": ["type", "url"],
         "not": {"anyOf": [{"required": [name]} for name in MCP_STDIO_FIELDS]},
         "properties": {"type": {"enum": remote}}},
    ]
    schema["allOf"] = [
        {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"required": [kind]}}
        for kind in ("command", "mcp")
    ]
    return schema




def _at(node: JSONObject, *path: str) -> JSONObject:
    """The mapping at key path `path` inside `node` (one the schema built here holds)."""
    for part in path:
        inner = node[part]
        assert isinstance(inner, dict)
        node = inner
    return node
