"""The spec v1 schema: every field of a sensor file, its type, default and one-line description (ADR-403 §1).

The schema is a cerberus schema (validated by `spec/validate/`, exported by `spec/jsonschema.py`);
each field's `meta` holds its description and default, which `describe(keypath)` returns for
`attend settings help`. Trigger names, where-property names and the crate block's fields are wildcards.

Defaults (docs/spec.md): interval 60 s, min_interval 15 s (capped at interval), decay_threshold 3,
threshold 2.0, lane event, scope project, enabled true; a command's cwd `.`, timeout 10 s, output json, max_output
1 MiB, a stream's max_line 64 KiB and stream_format json; an mcp tool call's timeout 30 s, allow_unannotated false; a trigger's path `$`, match all,
magnitude 1.0, initial baseline. Noise controls (DESIGN.md, Noise controls): no `for:` (fire at once),
flap detection at more than 5 returns of one key to an earlier value in 10 minutes (`DEFAULT_FLAP_LIMIT`, `DEFAULT_FLAP_WINDOW`),
the last 50 poll verdicts kept per sensor (`HISTORY_KEPT`).
"""

from __future__ import annotations

import re

from attend import ir
from attend.records import record
from attend.vocab import KINDS, LANES, SCOPES

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.bounds import (
    MAX_COUNT,
    MAX_DECAY_THRESHOLD,
    MAX_LINE_BYTES,
    MAX_MAGNITUDE,
    MAX_OUTPUT_BYTES,
)

__all__ = [
    "CURSOR_PLACEHOLDER",
    "DEFAULT_FLAP_LIMIT",
    "DEFAULT_MAX_LINE",
    "DEFAULT_FLAP_WINDOW",
    "DEFAULT_INTERVAL",
    "DEFAULT_MIN_INTERVAL",
    "DURATION_FIELDS",
    "KINDS",
    "LANES",
    "NAME_PATTERN",
    "NAME_RE",
    "ON_VALUES",
    "OPERATORS",
    "SCOPES",
    "SENSOR_SCHEMA",
    "SPEC_VERSION",
    "STREAM_FORMATS",
    "TRIGGER_SCHEMA",
    "HISTORY_KEPT",
    "FieldDoc",
    "describe",
    "field_rules",
    "known_fields",
]

#: The one spec version this attend reads.
SPEC_VERSION = 1
#: The sensor-name rule (also trigger names): lower-case letters, digits, `_` and `-`.
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
#: `NAME_PATTERN` compiled (match with `fullmatch`: the whole text).
NAME_RE = re.compile(NAME_PATTERN)
#: Trigger names: like sensor names, upper case allowed; never a dot (settings keys split on dots).
TRIGGER_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
ON_VALUES = ("added", "removed", "changed", "enters", "leaves")
#: The where operators (DESIGN.md, Trigger semantics), each with its description, in `ir.OPERATORS`' order
#: (the one list of their names; a name without a description here fails at import).
_OPERATOR_TEXT = {
    "equals": "the field equals this value",
    "not": "the field does not equal this value (a missing field satisfies `not`)",
    "in": "the field equals one of these values",
    "contains": "the field contains this: a substring, a list element or a mapping key",
    "like": "the field matches this glob (`*`, `?`, `[…]`)",
    "matches": "the field matches this regular expression",
    "above": "the field is a number (or numeric string) above this",
    "below": "the field is a number (or numeric string) below this",
}
OPERATORS: dict[str, str] = {op: _OPERATOR_TEXT[op] for op in ir.OPERATORS}
#: Seconds a command may run when its file sets no `timeout`.
DEFAULT_COMMAND_TIMEOUT = 10.0
#: Seconds for an mcp connect and call when `mcp.timeout` is not set. Servers started through npx/uvx may
#: download themselves on first start, so this is longer than a command's default.
DEFAULT_MCP_TIMEOUT = 30.0
#: The most stdout bytes one command run may print when its file sets no `max_output` (1 MiB).
DEFAULT_MAX_OUTPUT = 1 << 20
#: The slowest cadence when no file says otherwise, in seconds.
DEFAULT_INTERVAL = 60.0
#: The fastest cadence when no file says otherwise, in seconds (never above the interval).
DEFAULT_MIN_INTERVAL = 15.0
#: Flap detection when neither the trigger nor the sensor says otherwise: more than this many fires of
#: one key within the window is flapping.
DEFAULT_FLAP_LIMIT = 5
#: ... within this many seconds (10 minutes); also how long a flapping key must stay quiet to settle.
DEFAULT_FLAP_WINDOW = 600.0
#: How many poll verdicts `attend sensors history` keeps per sensor.
HISTORY_KEPT = 50
#: How a streaming command's lines are read (`command.stream_format`).
STREAM_FORMATS = ("json", "lines")
#: A streaming command's longest line in bytes when its file sets no `max_line` (64 KiB).
DEFAULT_MAX_LINE = 64 * 1024
#: Key paths (with `*` wildcards) that hold durations; normalised to float seconds.
DURATION_FIELDS = (("interval",), ("min_interval",), ("command", "timeout"), ("mcp", "timeout"))


@record(frozen=True)
class FieldDoc:
    """What `attend settings help KEY` shows for one field."""

    description: str
    type: str
    allowed: tuple[object, ...] | None = None
    default: object = None


def _f(type_: str | list[str], description: str, default: Any = None, **rules: Any) -> dict[str, Any]:
    """One field's cerberus rules, with its description and default kept in `meta`.

    A `duration` field also carries the `duration` rule (spec/validate/shape.py checks the string form).
    """
    if type_ == "duration":
        rules["duration"] = True
    return {"type": type_, "meta": {"description": description, "default": default}, **rules}


_STR_LIST = {"type": "string", "meta": {"description": "one entry of the list"}}
_STR_MAP = {"keysrules": {"type": "string"}, "valuesrules": {"type": "string"}}

#: A where property's value: a bare value (equals, or like for a glob string), a list (in), or an
#: operator mapping. Operators and operands are checked by the compiler (`compiler.diagnose`).
WHERE_VALUE = _f(["string", "number", "boolean", "list", "dict"],
                 "a condition on this property: a bare value (equals; like for a glob), a list (in), or "
                 "an operator mapping such as {above: 40}", nullable=True)

_OPERATOR_RULES = {op: {"type": ["string", "number", "boolean", "list"], "meta": {"description": text}}
                   for op, text in OPERATORS.items()}

FLAP_SCHEMA: dict[str, Any] = {
    "limit": _f("integer", "more than this many returns of one key to a value it had within the window is "
                "flapping (0: off)",
                DEFAULT_FLAP_LIMIT, min=0, max=MAX_COUNT),
    "window": _f("duration", "the flap window; a flapping key settles after one quiet window", DEFAULT_FLAP_WINDOW),
}
FLAP_FIELD = _f(["boolean", "dict"], "flap detection: {limit, window} (default more than 5 returns of one key "
                "to an earlier value in 10m), or false to turn it off", None, schema=FLAP_SCHEMA)

DIGEST_SCHEMA: dict[str, Any] = {
    "over": _f("integer", "more than this many fires in one poll become the one digest line", None, required=True,
               min=1, max=MAX_COUNT),
    "description": _f("string", "the digest line: a template with {count} (how many fires) and {from} (their "
                      "authors, comma-separated)", None, required=True),
}

TRIGGER_SCHEMA: dict[str, Any] = {
    "path": _f("string", "where to look in the poll result (JSONPath subset: $, .field, [n], [*], ..field)", "$"),
    "key": _f("string", "the field (dotted allowed) that identifies each selected item across polls"),
    "on": _f("string", "the transition that fires: added, removed, changed, enters or leaves", None,
             allowed=list(ON_VALUES)),
    "where": _f("dict", "property → value or operator mapping; the condition items enter and leave", None,
                keysrules={"type": "string"}, valuesrules=WHERE_VALUE),
    "match": _f("string", "how where's properties combine: all (every one holds) or any", "all",
                allowed=["all", "any"]),
    "magnitude": _f("number", "how much one fire weighs in the sensor's accumulator (a number ≥ 0)", 1.0, min=0,
                    max=MAX_MAGNITUDE),
    "description": _f("string", "the notification text: a template with {field}, {value}, {key}, {previous}"),
    "author": _f("string", "the item field holding who composed the item (required on the message lane)"),
    "initial": _f("string", "what the first poll does: baseline (record, fire nothing) or fire", "baseline",
                  allowed=["baseline", "fire"]),
    "for": _f("duration", "fire only once the transition has held this long (kept across restarts)"),
    "clear_where": _f("dict", "hysteresis for enters/leaves: an item inside where stays inside until this "
                      "holds (same operators as where)", None,
                      keysrules={"type": "string"}, valuesrules=WHERE_VALUE),
    "flap": FLAP_FIELD,
    "supersedes": _f("list", "triggers of this sensor whose fires in the same poll this trigger's fire replaces "
                     "(they show in history as held: superseded by this one); none by default", None, schema=_STR_LIST),
    "enabled": _f("boolean", "whether the trigger is evaluated (false: the sensor runs without it)", True),
}

#: The placeholder an `output: stream` argv element holds for the cursor (`command.cursor`).
CURSOR_PLACEHOLDER = "{cursor}"

COMMAND_SCHEMA: dict[str, Any] = {
    "argv": _f("list", "the program and its arguments, run directly (never through a shell)", None,
               required=True, minlength=1, schema=_STR_LIST),
    "env": _f("dict", "environment variables merged over the daemon's environment", {}, **_STR_MAP),
    "cwd": _f("string", "the working directory, relative to the project directory", "."),
    "timeout": _f("duration", "how long one run may take before its process group is killed", DEFAULT_COMMAND_TIMEOUT),
    "output": _f("string", "how stdout is read: json (the poll result), lines (magnitude|description), or "
                 "stream (one long-running process; each line is a record, triggers see {items: [...]})",
                 "json", allowed=["json", "lines", "stream"]),
    "max_output": _f("integer", "the most stdout bytes one run may print; more is a failed poll", DEFAULT_MAX_OUTPUT, min=1,
                     max=MAX_OUTPUT_BYTES),
    "stream_format": _f("string", "output: stream only: a record per line as json (one JSON value) or lines "
                        "(the text as {line: TEXT})", "json", allowed=list(STREAM_FORMATS)),
    "max_line": _f("integer", "output: stream only: the longest line in bytes; a longer one is cut to this and "
                   "counted", DEFAULT_MAX_LINE, min=1, max=MAX_LINE_BYTES),
    "cursor": _f("string", "output: stream only: the record field (dotted allowed) remembered across restarts and "
                 "put into argv as {cursor} when the process starts again (an argument holding {cursor} is "
                 "left out while none is known)"),
}

#: An inline server's transport types: a program attend starts (stdio, the default), or a remote server at a
#: url, over streamable HTTP (`http`, also spelled `streamable-http`) or HTTP with server-sent events (`sse`).
MCP_TRANSPORTS = ("stdio", "http", "streamable-http", "sse")
#: The inline server fields of a stdio server, and those of a remote one (`type` is either's).
MCP_STDIO_FIELDS = ("command", "args", "env")
MCP_REMOTE_FIELDS = ("url", "headers")

#: The `command:` fields that only an `output: stream` command uses (their defaults fill only its block).
STREAM_ONLY_FIELDS = ("stream_format", "max_line")

#: The `command:` fields that only a polled command uses (a stream runs for as long as the daemon runs and
#: reads lines of at most `max_line`): a stream's block gets no defaults for them.
POLL_ONLY_FIELDS = ("timeout", "max_output")

#: The `mcp:` fields that only a tool call uses (a resource sensor gets no defaults for them).
TOOL_ONLY_FIELDS = ("args", "allow_unannotated")

#: The `mcp:` fields that only a resource read uses (a tool sensor gets no defaults for them).
RESOURCE_ONLY_FIELDS = ("subscribe",)

MCP_SERVER_SCHEMA: dict[str, Any] = {
    "type": _f("string", "the transport: stdio (attend starts `command`; the default), http (streamable HTTP at "
               "`url`) or sse (HTTP with server-sent events at `url`)", None, allowed=list(MCP_TRANSPORTS)),
    "command": _f("string", "a stdio server's program (required for stdio)", None),
    "args": _f("list", "a stdio server's arguments", [], schema=_STR_LIST),
    "env": _f("dict", "environment variables for a stdio server", {}, **_STR_MAP),
    "url": _f("string", "a remote server's endpoint (required for http and sse)", None, empty=False),
    "headers": _f("dict", "a remote server's HTTP headers, ${VAR} expanded from the environment (a bearer token); "
                  "a missing, rejected or expired credential is auth_failed, never a login", {}, **_STR_MAP),
}

MCP_SCHEMA: dict[str, Any] = {
    "server": _f(["string", "dict"], "a server name from Claude Code's MCP config (.mcp.json, ~/.claude.json), or an "
                 "inline {command, args, env} or remote {type: http|sse, url, headers}", None, required=True,
                 schema=MCP_SERVER_SCHEMA),
    "tool": _f("string", "the tool to call (it must declare readOnlyHint: true); exactly one of tool and resource",
               None),
    "resource": _f("string", "the URI of a resource to read (resources/read; read-only by nature, so no "
                   "readOnlyHint is needed); exactly one of tool and resource", None, empty=False),
    "subscribe": _f("boolean", "resource only: subscribe to the resource and read it again as soon as the server "
                    "reports a change (no sooner than min_interval); interval stays the fallback", False),
    "args": _f("dict", "the tool call's fixed arguments (tool only)", {}, keysrules={"type": "string"}),
    "allow_unannotated": _f("boolean", "allow a tool that does not declare readOnlyHint (shown as an override)",
                            False),
    "timeout": _f("duration", "how long one tool call may take", DEFAULT_MCP_TIMEOUT),
}

SENSOR_SCHEMA: dict[str, Any] = {
    "spec": _f("integer", "the spec version this file follows (1)", None),
    "name": _f("string", "the sensor's name: ^[a-z0-9][a-z0-9_-]*$, equal to the file's stem", None),
    "description": _f("string", "what the sensor watches, in a few words", ""),
    "kind": _f("string", "how the sensor polls: crate (compiled code), command or mcp", None,
               allowed=list(KINDS)),
    "enabled": _f("boolean", "whether the sensor runs", True),
    "source": _f("string", "a crate sensor's entry-point name in the attend.sensors group", None),
    "version": _f("string", "the version of a crate sensor's code", None),
    "interval": _f("duration", "the slowest polling interval (seconds, or 500ms/30s/5m/1h)", DEFAULT_INTERVAL),
    "min_interval": _f("duration", "the fastest polling interval while changes keep coming (≤ interval)",
                       DEFAULT_MIN_INTERVAL),
    "decay_threshold": _f("integer", "quiet polls before the cadence slows back down", 3, min=0,
                          max=MAX_DECAY_THRESHOLD),
    "wake_on": _f("list", "paths or globs (relative to the project, ~ expanded) whose change polls the sensor at "
                  "once, no more often than min_interval; interval stays the fallback", [],
                  schema={"type": "string", "empty": False, "meta": {"description": "a path or glob to watch"}}),
    "threshold": _f("number", "the accumulated magnitude at which the sensor fires", 2.0, min=0,
                    max=MAX_MAGNITUDE),
    "lane": _f("string", "the delivery lane: event (engagement and governor) or message", "event",
               allowed=list(LANES)),
    "scope": _f("string", "project: one poll serves every session of the project; session: polled once per live "
                "session with that session as focus (its id, its transcript), lines only to that session",
                "project", allowed=list(SCOPES)),
    "lane_exception": _f("string", "the decision record that lets a shipped message-lane sensor go without "
                         "`author` (honoured in shipped files only)", None),
    "requires": _f("list", "tool permissions the sensor needs (informational, shown and audited)", [],
                   schema=_STR_LIST),
    "flap": FLAP_FIELD,
    "digest": _f("dict", "more than `over` fires in one poll are delivered as one line, `description` (a template "
                 "with {count} and {from}), weighing the heaviest of them", None, schema=DIGEST_SCHEMA),
    "triggers": _f("dict", "the triggers, keyed by name", {},
                   keysrules={"type": "string", "regex": TRIGGER_NAME_PATTERN},
                   valuesrules={"type": "dict", "schema": TRIGGER_SCHEMA}),
    "command": _f("dict", "the command kind's block", None, schema=COMMAND_SCHEMA),
    "mcp": _f("dict", "the mcp kind's block", None, schema=MCP_SCHEMA),
    "crate": _f("dict", "the crate kind's block: the compiled sensor's own fields", {}, allow_unknown=True),
}

_TYPE_NAMES = {"dict": "mapping", "list": "list", "string": "string", "integer": "integer",
               "number": "number", "boolean": "boolean", "duration": "duration"}


def field_rules(keypath: tuple[str, ...]) -> dict[str, Any] | None:
    """The cerberus rules of the field at `keypath` (wildcards resolved), or None for no such field.

    Trigger names, where-property names and any key inside `crate`, `env`, `args` match anything.
    """
    rules: dict[str, Any] | None = {"type": "dict", "schema": SENSOR_SCHEMA}
    for part in keypath:
        if rules is None:
            return None
        if "schema" in rules and isinstance(rules["schema"], dict) and rules.get("type") != "list":
            schema = rules["schema"]
            if part in schema:
                rules = schema[part]
                continue
            return None
        if rules is WHERE_VALUE:
            rules = _OPERATOR_RULES.get(part)
            continue
        if "valuesrules" in rules:
            rules = rules["valuesrules"]
            continue
        if rules.get("type") == "list" or "list" in _as_list(rules.get("type")):
            rules = rules.get("schema") if part.isdigit() else None
            continue
        if rules.get("allow_unknown"):
            return {"type": ["string", "number", "boolean", "list", "dict"],
                    "meta": {"description": "a field of the compiled sensor (see its documentation)"}}
        return None
    return rules


def known_fields(keypath: tuple[str, ...]) -> tuple[str, ...]:
    """The field names allowed inside the mapping at `keypath` (for did-you-mean); () for wildcards."""
    rules = field_rules(keypath)
    if rules is None:
        return ()
    if rules is WHERE_VALUE:
        return tuple(OPERATORS)
    schema = rules.get("schema")
    if isinstance(schema, dict) and rules.get("type") != "list":
        return tuple(schema)
    return ()


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def type_name(rules: dict[str, Any]) -> str:
    """A field's type as a user reads it: `duration`, `mapping`, `list of string`, `string or mapping`."""
    names = []
    for t in _as_list(rules.get("type", "any")):
        name = _TYPE_NAMES.get(t, t)
        if t == "list" and isinstance(rules.get("schema"), dict) and "type" in rules["schema"]:
            name = f"list of {_TYPE_NAMES.get(rules['schema']['type'], rules['schema']['type'])}s"
        names.append(name)
    return " or ".join(names)


def describe(keypath: tuple[str, ...] | str) -> FieldDoc | None:
    """The description, type, allowed values and default of a sensor field.

    Args:
        keypath: a tuple (`("triggers", "high-wind", "where", "wind_*", "above")`) or a dotted string
            relative to the sensor (`"triggers.high-wind.magnitude"`). In a dotted string the parts
            between `where.` and a trailing operator are one (dotted) property name.

    Returns:
        A `FieldDoc`, or None when the spec defines no such field.
    """
    path = _split(keypath) if isinstance(keypath, str) else tuple(keypath)
    rules = field_rules(path)
    if rules is None:
        return None
    meta = rules.get("meta", {})
    allowed = tuple(rules["allowed"]) if "allowed" in rules else None
    return FieldDoc(meta.get("description", ""), type_name(rules), allowed, meta.get("default"))


def _split(dotted: str) -> tuple[str, ...]:
    parts = dotted.split(".") if dotted else []
    if len(parts) >= 4 and parts[0] == "triggers" and parts[2] in ("where", "clear_where"):
        rest = parts[3:]
        if len(rest) > 1 and rest[-1] in OPERATORS:
            return (*parts[:3], ".".join(rest[:-1]), rest[-1])
        return (*parts[:3], ".".join(rest))
    return tuple(parts)
