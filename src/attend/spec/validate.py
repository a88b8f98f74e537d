"""Validating a merged sensor against spec v1 and normalising it (ADR-403 §1–§3a, DESIGN.md Spec v1).

Validation runs on the *merged* sensor (a higher layer may hold only the fields it overrides), and each
problem is reported at the file, line and column of the layer that supplied the offending key or
value, found through the sensor's origins. Cerberus checks the shape (`spec/schema.py`); the rules
cerberus cannot say (spec version, name, kind blocks, interval order, on/key/where, message lane)
are pure functions below. `normalise` fills defaults and turns durations into float seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.bounds import (
    MAX_COUNT,
    MAX_ERRORS_PER_FILE,
    MAX_MAGNITUDE,
    MAX_PATTERN_EXPANSION_PER_SENSOR,
    MAX_TRIGGERS,
    MAX_WHERE_PROPERTIES,
    pattern_shape,
)
from attend.errors import Diagnostic, Severity
from attend.spec.conform import conforms
from attend.spec.durations import ACCEPTED_FORMS, is_duration, parse_duration
from attend.spec.model import KeyPath, Origin, SensorFile
from attend.spec.schema import (
    COMMAND_SCHEMA,
    CURSOR_PLACEHOLDER,
    DEFAULT_MIN_INTERVAL,
    DURATION_FIELDS,
    KINDS,
    MCP_REMOTE_FIELDS,
    MCP_SCHEMA,
    MCP_STDIO_FIELDS,
    MCP_TRANSPORTS,
    NAME_PATTERN,
    ON_VALUES,
    SENSOR_SCHEMA,
    SPEC_VERSION,
    TRIGGER_SCHEMA,
    field_rules,
    known_fields,
    type_name,
)
from attend.spec.yamltext import yaml_text

__all__ = ["Locator", "normalise", "normalise_trigger", "trigger_problems", "validate_sensor"]

_NAME = re.compile(NAME_PATTERN)
#: The rules of a whole sensor document.
_SENSOR_RULES: dict[str, Any] = {"type": "dict", "schema": SENSOR_SCHEMA}
#: Where `lane_exception` is honoured: only a file attend itself ships may waive `author`.
LANE_EXCEPTION_LAYER = "shipped"

_validator = None
#: The custom cerberus error a malformed duration string raises (mapped to `bad-duration`).
_BAD_DURATION = "bad-duration"
#: cerberus.errors.UNKNOWN_FIELD.code and CUSTOM.code, without importing cerberus at module load.
_UNKNOWN_FIELD, _CUSTOM = 0x03, 0x00


def _cerberus() -> Any:  # the Validator class is built lazily (cerberus costs ~50 ms to import)
    global _validator
    if _validator is None:
        import cerberus

        class SpecValidator(cerberus.Validator):  # type: ignore[misc]  # cerberus is untyped
            """Cerberus with the spec's `duration` type (a number or a string) and rule (its form)."""

            types_mapping = {  # noqa: RUF012 - cerberus reads this class attribute
                **cerberus.Validator.types_mapping,
                "duration": cerberus.TypeDefinition("duration", (int, float, str), (bool,)),
            }

            def _validate_duration(self, constraint: bool, field: str, value: object) -> None:
                """{'type': 'boolean'}"""
                if constraint and not is_duration(value):
                    self._error(field, _BAD_DURATION)

            def _validate_regex(self, pattern: str, field: str, value: object) -> None:
                """{'type': 'string'}"""
                # Cerberus matches `pattern + "$"` from the start, and `$` also matches before a final
                # newline: "t\n" passed `^[A-Za-z0-9_-]*$`. The whole value must match (conform.py alike).
                if isinstance(value, str) and re.fullmatch(pattern, value) is None:
                    self._error(field, cerberus.errors.REGEX_MISMATCH)

        _validator = SpecValidator(checked_schema())
    return _validator


def checked_schema() -> Any:
    """SENSOR_SCHEMA as cerberus's expanded definition, without cerberus re-checking it in every process.

    `Validator(schema)` validates the schema itself against cerberus's rules (~27 ms, most of a
    one-file `compile --check` after imports). SENSOR_SCHEMA is a constant of this package, so that
    check belongs in the test suite (tests/spec/test_schema.py runs it on exactly this expansion);
    here the schema is only expanded, as `DefinitionSchema` would, and handed over as checked.
    """
    from cerberus.schema import DefinitionSchema, UnvalidatedSchema

    return UnvalidatedSchema(DefinitionSchema.expand(SENSOR_SCHEMA))


class Locator:
    """Finds where a key path of a merged sensor stands: the origin of the path or its nearest ancestor."""

    def __init__(self, origins: Mapping[KeyPath, Origin], fallback_file: str) -> None:
        self.origins = origins
        self.fallback_file = fallback_file

    def origin(self, path: KeyPath) -> Origin | None:
        """The origin of `path` or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            found = self.origins.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return self.origins.get(())

    def at_value(self, path: Iterable[Any], code: str, message: str,
                 severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        """A diagnostic pointing at the value of `path`; `fault` is the field to blame when it is
        another one (a missing `key` is reported at `on`), read by `trigger_problems`."""
        origin = self.origin(tuple(str(p) for p in path))
        if origin is None:
            return Diagnostic(self.fallback_file, 1, 1, code, message, severity)
        return Diagnostic(origin.file, origin.line, origin.col, code, message, severity)

    def at_key(self, path: Iterable[Any], code: str, message: str,
               severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        """A diagnostic pointing at the key of `path` (its value when it has no key)."""
        path = tuple(str(p) for p in path)
        origin = self.origins.get(path) if path else None
        if origin is None:
            return self.at_value(path, code, message, severity)
        span = origin.key_span
        return Diagnostic(origin.file, span.line, span.col, code, message, severity)


def validate_sensor(name: str, data: dict[str, Any], origins: Mapping[KeyPath, Origin],
                    files: tuple[SensorFile, ...] = (), *, fallback_file: str = "") -> list[Diagnostic]:
    """Every spec v1 problem of a merged sensor, each at the file and line that supplied it.

    Args:
        name: the sensor's name (its files' stem).
        data: the merged document.
        origins: the merged origins (key path → origin).
        files: the files merged, lowest layer first (for per-file rules: name, spec version).
        fallback_file: where to report problems no key points at (default: the lowest file).

    Returns:
        The diagnostics, errors and warnings, in no particular order.
    """
    fallback = fallback_file or (str(files[0].path) if files else name)
    loc = Locator(origins, fallback)
    out: list[Diagnostic] = []
    out.extend(_file_rules(name, files, data))
    version = data.get("spec")
    if "spec" not in data and files and all(f.layer in ("user", "project") for f in files):
        missing = ", ".join(f for f in ("spec", "name", "kind") if f not in data)
        out.append(Diagnostic(fallback, 1, 1, "layer-override",
                              f"no lower layer defines sensor {name!r}, so this file must define it completely "
                              f"(missing: {missing}); an override file only works over a shipped or user sensor"))
        out.extend(_schema_errors(data, loc))
        return out
    if "spec" not in data:
        out.append(Diagnostic(fallback, 1, 1, "spec-version",
                              f"missing `spec: {SPEC_VERSION}`: every sensor file states the spec version it follows"))
    elif version != SPEC_VERSION or isinstance(version, bool):
        out.append(loc.at_value(("spec",), "spec-version",
                                f"spec {version!r} is not a version this attend reads (it reads spec {SPEC_VERSION})"))
        return out
    out.extend(_schema_errors(data, loc))
    out.extend(_finite_numbers(data, loc))
    out.extend(_required_core(data, fallback))
    out.extend(_kind_rules(data, loc))
    out.extend(_stream_rules(data, loc))
    out.extend(_positive_durations(data, loc))
    out.extend(_interval_order(data, loc))
    out.extend(_size_limits(data, loc))
    out.extend(_pattern_budget(data, loc))
    out.extend(_crate_fields(data, files, loc))
    out.extend(_trigger_rules(data, loc))
    out.extend(_lane_rules(data, loc))
    out.extend(_supersedes_rules(data, loc))
    return out


def _trigger_checks(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """Every spec rule that reads a sensor's triggers: what `trigger_problems` runs on one trigger."""
    return [*_schema_errors(data, loc), *_finite_numbers(data, loc), *_positive_durations(data, loc),
            *_size_limits(data, loc), *_pattern_budget(data, loc), *_trigger_rules(data, loc)]


def _file_rules(name: str, files: tuple[SensorFile, ...], data: dict[str, Any]) -> list[Diagnostic]:
    """The name rule, per file: a `name:` must follow the rule and equal the file's stem."""
    out = []
    for sensor_file in files:
        if sensor_file.data is None:
            continue
        origin = sensor_file.origins.get(("name",))
        file = origin.file if origin else str(sensor_file.path)
        if not _NAME.fullmatch(sensor_file.name):
            out.append(Diagnostic(file, 1, 1, "bad-name",
                                  f"the file name {sensor_file.name!r} breaks the sensor-name rule {NAME_PATTERN} "
                                  "(lower-case letters, digits, _ and -)"))
        given = sensor_file.data.get("name")
        if "name" not in sensor_file.data or not isinstance(given, str) or origin is None:
            continue
        if not _NAME.fullmatch(given):
            out.append(Diagnostic(file, origin.line, origin.col, "bad-name",
                                  f"name {given!r} breaks the rule {NAME_PATTERN} (lower-case letters, digits, _ and -)"))
        elif given != sensor_file.name:
            out.append(Diagnostic(file, origin.line, origin.col, "bad-name",
                                  f"name {given!r} differs from the file's stem {sensor_file.name!r}: "
                                  f"rename the file to {given}.yaml or set `name: {sensor_file.name}`"))
    return out


def _required_core(data: dict[str, Any], fallback: str) -> list[Diagnostic]:
    """`name` and `kind` must come from some file (an override file may leave them to a lower layer)."""
    missing = [f for f in ("name", "kind") if f not in data]
    if not missing:
        return []
    hints = {"name": "the sensor's name, equal to the file's stem", "kind": "crate, command or mcp"}
    return [Diagnostic(fallback, 1, 1, "required", f"missing required field `{f}`: {hints[f]}") for f in missing]


_RULE_CODES = {"allowed": "bad-value", "min": "bad-value", "max": "bad-value", "minlength": "bad-value",
               "empty": "bad-value", "regex": "bad-value", "required": "required"}


def _schema_errors(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """Cerberus's findings, each mapped to a stable code, a readable message and a position.

    Cerberus re-sorts its whole error list on every error, so thousands of errors in one call take
    minutes. So the floods are found here first, linearly (`_prune`: unknown fields, list items and map
    values of the wrong type), and left out of what cerberus sees; cerberus then checks the top level and
    each trigger in calls of their own, and the whole stops once MAX_ERRORS_PER_FILE errors are found.
    """
    out: list[Diagnostic] = []
    pruned = _prune(data, (), _SENSOR_RULES, loc, out)
    if len(out) >= MAX_ERRORS_PER_FILE:
        return [*out, _stopped(loc)]
    if not isinstance(pruned, dict):
        return out
    if not out and conforms(pruned, _SENSOR_RULES):
        return out  # cerberus would find nothing: it is neither imported nor run (spec/conform.py)
    triggers = pruned.pop("triggers", None)
    parts: list[dict[str, Any]] = [pruned]
    if isinstance(triggers, dict) and len(triggers) <= MAX_TRIGGERS:
        parts.extend({"triggers": {name: trigger}} for name, trigger in triggers.items())
    elif triggers is not None and not isinstance(triggers, dict):
        parts.append({"triggers": triggers})
    validator = _cerberus()
    for part in parts:
        if validator.validate(part, normalize=False):
            continue
        for error in _leaves(validator._errors):
            if _non_finite(error.value):
                continue  # `_finite_numbers` says what is wrong with .inf and .nan, once
            path = tuple(str(p) for p in error.document_path)
            out.append(_from_cerberus(error, path, loc))
        if len(out) >= MAX_ERRORS_PER_FILE:
            return [*out, _stopped(loc)]
    return out


def _stopped(loc: Locator) -> Diagnostic:
    return Diagnostic(loc.fallback_file, 1, 1, "too-many-errors",
                      f"validation of this file stopped after {MAX_ERRORS_PER_FILE} errors: fix these and check again")


def _prune(value: Any, path: KeyPath, rules: dict[str, Any], loc: Locator, out: list[Diagnostic]) -> Any:
    """`value` without its unknown fields and wrongly typed list items and map values, each reported.

    Only the mappings with a fixed set of fields, the lists of strings and the string → string maps are
    pruned (the shapes a hostile file can repeat thousands of times); the rest is left to cerberus.
    """
    if len(out) >= MAX_ERRORS_PER_FILE:
        return value
    schema = rules.get("schema")
    if isinstance(value, dict) and isinstance(schema, dict) and rules.get("type") != "list" \
            and not rules.get("allow_unknown"):
        kept = {}
        for key, item in value.items():
            if key in schema:
                kept[key] = _prune(item, (*path, key), schema[key], loc, out)
            elif len(out) < MAX_ERRORS_PER_FILE:
                out.append(_unknown_field((*path, key), loc))
        return kept
    if isinstance(value, dict) and "valuesrules" in rules:
        inner = rules["valuesrules"]
        if inner.get("type") == "string":  # a reported value is replaced by a string: reported once
            return {k: v if _string_or_report(v, (*path, k), loc, out) else "" for k, v in value.items()}
        return {k: _prune(v, (*path, k), inner, loc, out) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema, dict) and schema.get("type") == "string":
        return [v if _string_or_report(v, (*path, str(i)), loc, out) else "" for i, v in enumerate(value)]
    return value


def _string_or_report(value: Any, path: KeyPath, loc: Locator, out: list[Diagnostic]) -> bool:
    if isinstance(value, str):
        return True
    if len(out) < MAX_ERRORS_PER_FILE:
        out.append(loc.at_value(path, "wrong-type", f"`{_shown('.'.join(path))}` must be a string, not "
                                f"{_describe(value)}"))
    return False


def _unknown_field(path: KeyPath, loc: Locator) -> Diagnostic:
    from difflib import get_close_matches  # only on a typo: difflib is slow to import

    options = known_fields(path[:-1])
    close = get_close_matches(path[-1], options, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else (
        f" (known here: {', '.join(options)})" if options else "")
    return loc.at_key(path, "unknown-field", f"unknown field `{_shown('.'.join(path))}`{hint}")


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _finite_numbers(data: Any, loc: Locator) -> list[Diagnostic]:
    """Every number in a sensor is finite: `.inf`, `.nan` and literals past float's range (`1e400`) are
    refused wherever they stand (a field, a where operand, a crate or mcp argument)."""
    out = []
    stack: list[tuple[KeyPath, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, str(i)), v) for i, v in enumerate(value))
        elif _non_finite(value):
            out.append(loc.at_value(path, "bad-number", f"`{_shown('.'.join(path))}` is {_short(value)}: numbers in a "
                                    "sensor file must be finite (.inf, .nan and literals past 1.8e308 are not)"))
    return out


def _leaves(errors: Iterable[Any]) -> Iterable[Any]:
    for error in errors:
        if error.is_group_error and error.child_errors:
            yield from _leaves(error.child_errors)
        else:
            yield error


def _from_cerberus(error: Any, path: KeyPath, loc: Locator) -> Diagnostic:
    rule, value, constraint = error.rule, error.value, error.constraint
    field = _shown(".".join(path))
    bad_form = error.code == _CUSTOM and error.info and error.info[0] == _BAD_DURATION
    if bad_form or (rule == "type" and "duration" in _listed(constraint)):  # a malformed string, or not even one
        return loc.at_value(path, "bad-duration", f"`{field}`: {_short(value)} is not a duration: "
                            f"use {ACCEPTED_FORMS}")
    if error.code == _UNKNOWN_FIELD:
        return _unknown_field(path, loc)
    rules = field_rules(path) or {}
    if rule == "type":
        return loc.at_value(path, "wrong-type",
                            f"`{field}` must be {_a(type_name(rules) if rules else str(constraint))}, not {_describe(value)}")
    if rule == "nullable":
        return loc.at_value(path, "wrong-type",
                            f"`{field}` is empty: it must be {_a(type_name(rules) if rules else 'value')}")
    if rule == "required":
        return loc.at_key(path[:-1], "required", f"missing required field `{field}`"
                          + (f": {rules['meta']['description']}" if rules.get("meta") else ""))
    if rule == "allowed":
        return loc.at_value(path, "bad-value", f"`{field}`: {_short(value)} is not one of: "
                            + ", ".join(str(c) for c in constraint))
    if rule == "min":
        return loc.at_value(path, "bad-value", f"`{field}` must be at least {constraint}, not {_short(value)}")
    if rule == "max":
        return loc.at_value(path, "bad-value", f"`{field}` must be at most {_number(constraint)}, not {_short(value)}")
    if rule == "minlength":
        return loc.at_value(path, "bad-value", f"`{field}` must not be empty")
    if rule == "regex":
        return loc.at_key(path, "bad-value",
                          f"trigger name {path[-1]!r} breaks the rule {constraint} (letters, digits, _ and -)")
    return loc.at_value(path, _RULE_CODES.get(rule, "bad-value"), f"`{field}`: {_short(value)} breaks rule {rule}")


def _shown(name: str) -> str:
    """A key path as a message shows it: as written, or escaped when it holds control characters."""
    return name if name.isprintable() else repr(name)[1:-1]


#: How much of a value a message quotes before cutting it short.
_QUOTED_CHARS = 60


def _short(value: Any) -> str:
    """The value in YAML's words, cut short for a message."""
    return yaml_text(value, _QUOTED_CHARS)


def _number(value: float) -> str:
    """A bound as a message shows it: `1,000,000`, not `1000000.0`."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _listed(constraint: Any) -> list[Any]:
    return constraint if isinstance(constraint, list) else [constraint]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {_short(value)}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _kind_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """A command or mcp sensor needs its block; no sensor may carry another kind's block."""
    kind = data.get("kind")
    block = data.get("mcp")
    # an mcp block is checked unless the sensor is of another kind (then it is misplaced, said below)
    out = (_mcp_target_rules(block, loc) + _mcp_server_rules(block, loc)
           if isinstance(block, dict) and kind not in ("command", "crate") else [])
    if kind not in KINDS:
        return out
    if kind in ("command", "mcp") and kind not in data:
        need = "argv at least" if kind == "command" else "server and a tool or resource at least"
        out.append(loc.at_value(("kind",), "kind-block-missing",
                                f"{_a(kind)} sensor needs a `{kind}:` block ({need})"))
    for other in KINDS:
        if other != kind and other in data:
            out.append(loc.at_key((other,), "kind-block-mismatch",
                                  f"{_a(f'`{other}:`')} block in {_a(kind)} sensor: a sensor carries only its own kind's "
                                  f"block (`{kind}:`)"))
    return out


def _stream_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """The stream fields go with `output: stream` (a polled command would ignore them, as a tool sensor would
    `subscribe`), and an argv `{cursor}` with a `cursor` field (without one the argument is always left out)."""
    block = data.get("command")
    if data.get("kind") != "command" or not isinstance(block, dict):
        return []
    if block.get("output", "json") in ("json", "lines"):  # another value is bad-value already
        return [loc.at_key(("command", name), "bad-value",
                           f"`command.{name}` is for a streaming command (`output: stream`); this command is polled "
                           f"(output: {block.get('output', 'json')}): add `output: stream` or remove it")
                for name in (*STREAM_ONLY_FIELDS, "cursor") if name in block]
    if block.get("output") == "stream":
        unused = [loc.at_key(("command", name), "bad-value",
                             f"`command.{name}` is for a polled command; a streaming command runs for as long as the "
                             "daemon runs and reads lines of at most `max_line` bytes: remove it")
                  for name in POLL_ONLY_FIELDS if name in block]
        if unused:
            return unused
    argv = block.get("argv")
    if "cursor" not in block and isinstance(argv, list):
        for index, arg in enumerate(argv):
            if isinstance(arg, str) and CURSOR_PLACEHOLDER in arg:
                return [loc.at_value(("command", "argv", str(index)), "bad-value",
                                     f"`command.argv` holds {CURSOR_PLACEHOLDER} but the sensor names no `command.cursor` "
                                     "field: the argument would always be left out")]
    if block.get("cursor") == "":
        return [loc.at_value(("command", "cursor"), "bad-value", "`command.cursor` names no field: it is empty")]
    return []


def _mcp_target_rules(block: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """An mcp block names exactly one of `tool` (a call) and `resource` (a read); `args` goes with a tool."""
    if "tool" in block and "resource" in block:
        return [loc.at_key(("mcp", "resource"), "bad-value",
                           "an mcp block names either `tool` (a tool call) or `resource` (a resource read), not both")]
    if "tool" not in block and "resource" not in block:
        return [loc.at_key(("mcp",), "required",
                           "missing required field `mcp.tool` or `mcp.resource`: the tool to call or the resource to read")]
    if "tool" in block and block.get("subscribe"):
        return [loc.at_key(("mcp", "subscribe"), "bad-value",
                           "`mcp.subscribe` subscribes to a resource; a tool sensor has nothing to subscribe to")]
    if "resource" in block and block.get("args"):
        return [loc.at_key(("mcp", "args"), "bad-value",
                           "`mcp.args` are a tool call's arguments; a resource read takes none (put them in the URI)")]
    return []


def _mcp_server_rules(block: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """An inline server is a stdio one (`command`, with `args` and `env`) or a remote one (`type: http` or `sse`,
    with `url` and `headers`), never a mix."""
    server = block.get("server")
    if not isinstance(server, dict) or not isinstance(server.get("type", "stdio"), str):
        return []
    kind = server.get("type", "stdio")
    if kind not in MCP_TRANSPORTS:
        return []  # the schema reports the value
    here = ("mcp", "server")
    if kind == "stdio":
        out = [loc.at_key((*here, name), "bad-value",
                          f"`{name}` belongs to a remote server: add `type: http` or `type: sse` (and drop `command`)")
               for name in MCP_REMOTE_FIELDS if name in server]
        if "command" not in server:
            out.append(loc.at_key(here, "required", "missing required field `mcp.server.command`: the program of a "
                                                     "stdio server (or `type: http` or `sse` with `url` for a remote one)"))
        return out
    out = [loc.at_key((*here, name), "bad-value", f"`{name}` belongs to a stdio server; a `type: {kind}` server is "
                                                  "reached at its `url`")
           for name in MCP_STDIO_FIELDS if name in server]
    if "url" not in server:
        out.append(loc.at_key(here, "required", f"missing required field `mcp.server.url`: the endpoint of the "
                                                 f"`type: {kind}` server"))
    return out


def _a(word: str) -> str:
    """`word` with its indefinite article ("an mcp", "a command")."""
    return f"{'an' if word.strip('`').startswith(('mcp', 'a', 'e', 'i', 'o', 'u')) else 'a'} {word}"


def _positive_durations(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """Every duration must be above zero: `interval: 0` would poll back to back, `timeout: 0` always fails."""
    out = []
    for path in _duration_paths(data):
        value = _value_at(data, path)
        if path[-1] != "for" and is_duration(value) and parse_duration(value) <= 0:
            out.append(loc.at_value(path, "bad-value", f"`{'.'.join(path)}` must be above zero, not {_short(value)}"))
    return out


def _duration_paths(data: dict[str, Any]) -> list[KeyPath]:
    """Every key path of `data` that holds a duration: the fixed ones, the sensor's and each trigger's
    `flap.window`, and each trigger's `for` (the only one that may be zero: fire at once)."""
    paths: list[KeyPath] = [*DURATION_FIELDS, ("flap", "window")]
    triggers = data.get("triggers")
    if isinstance(triggers, dict):
        for name in triggers:
            paths += [("triggers", name, "for"), ("triggers", name, "flap", "window")]
    return paths


def _value_at(data: Any, path: KeyPath) -> Any:
    """The value at key path `path` of nested mappings, or None when some step is not a mapping or absent."""
    value = data
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _interval_order(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    interval, minimum = data.get("interval"), data.get("min_interval")
    if not (is_duration(interval) and is_duration(minimum)):
        return []
    if parse_duration(minimum) > parse_duration(interval):
        low, high = loc.origin(("min_interval",)), loc.origin(("interval",))
        where = f" set at {high.file}:{high.line}" if high and low and high.file != low.file else ""
        return [loc.at_value(("min_interval",), "interval-order",
                             f"min_interval ({minimum}) is above interval ({interval}{where}): the fastest "
                             "cadence cannot be slower than the slowest")]
    return []


def _size_limits(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """At most MAX_TRIGGERS triggers, each with at most MAX_WHERE_PROPERTIES where-properties."""
    triggers = data.get("triggers")
    if not isinstance(triggers, dict):
        return []
    if len(triggers) > MAX_TRIGGERS:
        return [loc.at_key(("triggers",), "bad-value",
                           f"{len(triggers)} triggers: a sensor may declare at most {MAX_TRIGGERS}")]
    out = []
    for name, trigger in triggers.items():
        where = trigger.get("where") if isinstance(trigger, dict) else None
        if isinstance(where, dict) and len(where) > MAX_WHERE_PROPERTIES:
            out.append(loc.at_key(("triggers", name, "where"), "bad-value",
                                  f"trigger {name!r} tests {len(where)} properties: a where may test at most "
                                  f"{MAX_WHERE_PROPERTIES}"))
    return out


def _crate_fields(data: dict[str, Any], files: tuple[SensorFile, ...], loc: Locator) -> list[Diagnostic]:
    """A crate sensor's `crate:` fields, as a higher layer sets them, against the shipped file's schema.

    The shipped file of a crate sensor sets every field its code reads (every default lives there, see
    sensors/base.py), so it declares the block's schema: the field names, and each one's kind by its
    shipped value (a whole number from 0 to MAX_COUNT, a number, a duration string, a boolean, a string,
    a list of strings or of numbers). `compile --check` and `settings set` check an override against it,
    so `dirty_limit: lots` is refused where it is written, not at poll time.
    """
    shipped = next((f for f in files if f.layer == "shipped" and isinstance(f.data, dict)), None)
    declared = shipped.data.get("crate") if shipped is not None and shipped.data is not None else None
    block = data.get("crate")
    if data.get("kind") != "crate" or not isinstance(declared, dict) or not isinstance(block, dict):
        return []
    out = []
    for key, value in block.items():
        origin = loc.origins.get(("crate", key))
        if origin is not None and origin.layer == "shipped":
            continue
        if key not in declared:
            from difflib import (
                get_close_matches,  # only on a typo: difflib is slow to import
            )

            close = get_close_matches(key, list(declared), n=1, cutoff=0.6)
            hint = f" (did you mean `{close[0]}`?)" if close else f" (known here: {', '.join(declared)})"
            out.append(loc.at_key(("crate", key), "unknown-field", f"unknown field `crate.{_shown(key)}`{hint}"))
            continue
        problem = _crate_value_problem(declared[key], value)
        if problem is not None:
            code, message = problem
            out.append(loc.at_value(("crate", key), code, f"`crate.{_shown(key)}` {message}"))
    return out


def _crate_value_problem(reference: Any, value: Any) -> tuple[str, str] | None:
    """Why `value` cannot replace the shipped `reference` value of a crate field: (code, message), or None."""
    if reference is None or _non_finite(value):
        return None  # no kind to hold it to; a non-finite number is `_finite_numbers`'
    if isinstance(reference, bool):
        return None if isinstance(value, bool) else ("wrong-type", f"must be true or false, not {_describe(value)}")
    if isinstance(reference, int):
        if isinstance(value, bool) or not isinstance(value, int):
            return "wrong-type", f"must be a whole number, not {_describe(value)}"
        return None if 0 <= value <= MAX_COUNT else ("bad-value", f"must be from 0 to {MAX_COUNT:,}, not {_short(value)}")
    if isinstance(reference, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "wrong-type", f"must be a number, not {_describe(value)}"
        return None if abs(value) <= MAX_COUNT else ("bad-value", f"must be at most {MAX_COUNT:,}, not {_short(value)}")
    if isinstance(reference, str) and is_duration(reference) and not reference.strip().replace(".", "").isdigit():
        return None if is_duration(value) else ("bad-duration", f"{_short(value)} is not a duration: use {ACCEPTED_FORMS}")
    if isinstance(reference, str):
        return None if isinstance(value, str) else ("wrong-type", f"must be a string, not {_describe(value)}")
    if isinstance(reference, list):
        if not isinstance(value, list):
            return "wrong-type", f"must be a list, not {_describe(value)}"
        for item_reference in reference[:1]:
            for item in value:
                problem = _crate_value_problem(item_reference, item)
                if problem is not None:
                    return problem[0], f"items: {problem[1]}"
        return None
    if isinstance(reference, dict) and not isinstance(value, dict):
        return "wrong-type", f"must be a mapping, not {_describe(value)}"
    return None


#: The code of a sensor that asks for more work than a sensor may: its expressions are not compiled.
OVER_BUDGET = "over-budget"


def _pattern_budget(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """The `matches` patterns of a sensor together stay within MAX_PATTERN_EXPANSION_PER_SENSOR.

    Each pattern is bounded on its own by the compiler (`regex-syntax`); this bounds their sum, so a file
    of 65,536 where-properties cannot make `compile --check` or the daemon compile 65,536 costly patterns.
    """
    triggers = data.get("triggers")
    if not isinstance(triggers, dict):
        return []
    total = 0
    for name, trigger in triggers.items():
        for block in ("where", "clear_where"):
            where = trigger.get(block) if isinstance(trigger, dict) else None
            if not isinstance(where, dict):
                continue
            for prop, condition in where.items():
                pattern = condition.get("matches") if isinstance(condition, dict) else None
                if not isinstance(pattern, str):
                    continue
                total += pattern_shape(pattern).expansion
                if total > MAX_PATTERN_EXPANSION_PER_SENSOR:
                    return [loc.at_value(("triggers", name, block, prop, "matches"), OVER_BUDGET,
                                         f"the sensor's regular expressions together pass the bound of "
                                         f"{MAX_PATTERN_EXPANSION_PER_SENSOR:,} elements (counted repetitions "
                                         "expanded): split the sensor or simplify its patterns; its "
                                         "expressions are not compiled")]
    return []


def _trigger_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """DESIGN.md: `on` is required; added/removed need a key; enters/leaves need a where; `key` and
    `author` are field names; `clear_where` holds a condition and only on enters/leaves; `flap` is not `true`."""
    triggers = data.get("triggers")
    out = _flap_rules(data, loc)
    if not isinstance(triggers, dict):
        return out
    for name, trigger in triggers.items():
        if not isinstance(trigger, dict):
            continue
        on = trigger.get("on")
        if "on" not in trigger:
            out.append(loc.at_key(("triggers", name), "on-rules",
                                  f"trigger {name!r} needs `on:` (added, removed, changed, enters or leaves)",
                                  fault=("triggers", name, "on")))
        elif on in ("added", "removed") and "key" not in trigger:
            out.append(loc.at_value(("triggers", name, "on"), "on-rules",
                                    f"trigger {name!r}: `on: {on}` needs a `key` that identifies items across polls",
                                    fault=("triggers", name, "key")))
        elif on in ("enters", "leaves") and "where" not in trigger:
            out.append(loc.at_value(("triggers", name, "on"), "on-rules",
                                    f"trigger {name!r}: `on: {on}` needs a `where` condition to {on[:-1]}",
                                    fault=("triggers", name, "where")))
        for field in ("key", "author"):
            value = trigger.get(field)
            if isinstance(value, str) and (not value or "" in value.split(".")):
                out.append(loc.at_value(("triggers", name, field), "bad-value",
                                        f"`triggers.{_shown(str(name))}.{field}` must be a field name (dotted "
                                        f"allowed), not {_short(value)}"))
        if trigger.get("clear_where") == {}:
            out.append(loc.at_value(("triggers", name, "clear_where"), "bad-value",
                                    f"`triggers.{_shown(str(name))}.clear_where` is empty: it needs at least one "
                                    "condition (leave it out for no hysteresis)"))
        if "clear_where" in trigger and on in ON_VALUES and on not in ("enters", "leaves"):
            out.append(loc.at_key(("triggers", name, "clear_where"), "on-rules",
                                  f"trigger {name!r}: `clear_where` is hysteresis for `on: enters` or `on: leaves` "
                                  f"(an item stays inside `where` until `clear_where` holds); `on: {on}` has no "
                                  f"inside to stay in"))
    return out


def _flap_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """`flap` is `false` or a mapping {limit, window}: `true` says nothing the defaults do not."""
    paths: list[KeyPath] = [("flap",)]
    triggers = data.get("triggers")
    if isinstance(triggers, dict):
        paths += [("triggers", str(name), "flap") for name, t in triggers.items() if isinstance(t, dict)]
    return [loc.at_value(path, "bad-value", f"`{_shown('.'.join(path))}` must be false or a mapping {{limit, window}}, "
                         "not true (leave it out for the defaults)")
            for path in paths if _value_at(data, path) is True]


def _lane_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """A message-lane trigger needs `author`, unless a shipped file records the exception."""
    out = []
    exception = loc.origins.get(("lane_exception",))
    if exception is not None and exception.layer != LANE_EXCEPTION_LAYER:
        out.append(loc.at_key(("lane_exception",), "lane-author",
                              "`lane_exception` is honoured only in sensor files attend ships; "
                              "give each trigger an `author` instead"))
        exception = None
    if data.get("lane") != "message" or exception is not None:
        return out
    triggers = data.get("triggers")
    if not isinstance(triggers, dict):
        return out
    for name, trigger in triggers.items():
        if isinstance(trigger, dict) and "author" not in trigger:
            out.append(loc.at_key(("triggers", name), "lane-author",
                                  f"trigger {name!r} is on the message lane but has no `author` (the item field "
                                  "naming who composed it); without it the daemon runs the sensor on the event lane"))
    return out


class _Faults(Locator):
    """A Locator that also keeps, for each diagnostic it makes, the key path of the field at fault."""

    def __init__(self, origins: Mapping[KeyPath, Origin], fallback_file: str) -> None:
        super().__init__(origins, fallback_file)
        self.faults: dict[int, KeyPath] = {}

    def at_value(self, path: Iterable[Any], code: str, message: str,
                 severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        path = tuple(str(p) for p in path)
        found = super().at_value(path, code, message, severity)
        self.faults[id(found)] = fault or path
        return found

    def at_key(self, path: Iterable[Any], code: str, message: str,
               severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        path = tuple(str(p) for p in path)
        found = super().at_key(path, code, message, severity)
        self.faults[id(found)] = fault or path
        return found


#: The file name a trigger given on its own is reported under (`attend.compile_trigger`).
API_FILE = "<trigger>"
#: The value types a YAML document holds (`spec.loading` builds nothing else).
_PLAIN = (str, int, float, bool, type(None))


def trigger_problems(definition: Any, name: str = "trigger",
                     origins: Mapping[KeyPath, Origin] | None = None) -> list[tuple[str, Diagnostic]]:
    """The spec's problems of one trigger given on its own (`attend.compile_trigger`), each with the
    trigger field at fault ("" for the trigger as a whole).

    The trigger is checked as a sensor file's trigger is: inside a document `{triggers: {name: ...}}`,
    by the same rules (`validate_sensor`'s), so a problem reads the same words and bounds as in a file.
    What a YAML file cannot hold is refused first, in the loader's words: a key that is not a string, a
    value that is not null, a boolean, a number, a string, a list or a mapping, nesting deeper than
    MAX_DEPTH, an integer of more than MAX_INTEGER_DIGITS digits. The trigger's name is the caller's
    label here, so the file's trigger-name rule is not applied to it.

    Args:
        definition: the trigger's fields as a sensor file writes them (durations as `5m` or seconds).
        name: the trigger's name.
        origins: optional positions keyed by key path inside the trigger.
    """
    try:
        definition = plain_trigger(definition, name)
    except _NotPlain as refused:
        return [(refused.field, refused.diagnostic)]
    prefix: KeyPath = ("triggers", name)
    moved = {(*prefix, *path): origin for path, origin in (origins or {}).items()}
    loc = _Faults(moved, API_FILE)
    found = _trigger_checks({"triggers": {name: definition}}, loc)
    out = []
    for diagnostic in found:
        fault = loc.faults.get(id(diagnostic), ())
        if fault == prefix and diagnostic.message.startswith("trigger name"):
            continue  # the file's name rule; a name given to the API is only a label
        out.append((fault[2] if len(fault) > 2 and fault[:2] == prefix else "", diagnostic))
    return out


class _NotPlain(Exception):
    """A value no YAML document holds, at `field`, said as `diagnostic`."""

    def __init__(self, field: str, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.field, self.diagnostic = field, diagnostic


def plain_trigger(definition: Any, name: str = "trigger") -> dict[str, Any]:
    """A copy of `definition` made of dicts, lists and YAML's scalars (see `trigger_problems`).

    Raises:
        _NotPlain: the first thing a YAML file cannot hold, with the field it stands in.
    """
    return _plain((), definition, 1, f"triggers.{_shown(name)}")


def _plain(path: KeyPath, value: Any, depth: int, prefix: str) -> Any:
    from attend.bounds import MAX_DEPTH, MAX_INTEGER_DIGITS

    field = path[0] if path else ""
    where = f"`{prefix}.{_shown('.'.join(path))}`" if path else f"`{prefix}`"

    def refuse(code: str, message: str) -> _NotPlain:
        return _NotPlain(field, Diagnostic(API_FILE, 1, 1, code, message))

    if depth > MAX_DEPTH:
        raise refuse("too-deep", f"the document nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise refuse("wrong-type", f"{where} has the key {_short_key(key)}: a mapping key must be a string")
            out[key] = _plain((*path, key), item, depth + 1, prefix)
        return out
    if isinstance(value, list):
        return [_plain((*path, str(i)), item, depth + 1, prefix) for i, item in enumerate(value)]
    if not isinstance(value, _PLAIN):
        raise refuse("wrong-type", f"{where} is {_a(type(value).__name__)}: a trigger holds only what YAML and JSON "
                     "hold (null, booleans, numbers, strings, lists and mappings)")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** MAX_INTEGER_DIGITS:
        raise refuse("bad-number", f"{where} is an integer of more than {MAX_INTEGER_DIGITS:,} digits: attend reads "
                     f"integers of at most {MAX_INTEGER_DIGITS:,} digits")
    return value


def _short_key(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:39] + "…"


def normalise_trigger(definition: Mapping[str, Any], name: str = "trigger") -> dict[str, Any]:
    """One trigger that `trigger_problems` passed, normalised as `normalise` does a file's: defaults
    filled in, durations as float seconds, `magnitude` a float."""
    return normalise({"triggers": {name: plain_trigger(definition, name)}})["triggers"][name]


def _supersedes_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """`supersedes` names triggers of the same sensor, and no trigger supersedes itself through a cycle."""
    triggers = data.get("triggers")
    if not isinstance(triggers, dict):
        return []
    out = []
    graph: dict[str, list[str]] = {}
    for name, trigger in triggers.items():
        names = trigger.get("supersedes") if isinstance(trigger, dict) else None
        if not isinstance(names, list):
            continue
        graph[name] = []
        for index, other in enumerate(names):
            if not isinstance(other, str):
                continue  # the schema reports the type
            if other not in triggers:
                from difflib import (
                    get_close_matches,  # only on a typo: difflib is slow to import
                )

                close = get_close_matches(other, [t for t in triggers if t != name], n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else f" (its triggers: {', '.join(triggers)})"
                out.append(loc.at_value(("triggers", name, "supersedes", index), "supersedes",
                                        f"trigger {name!r} supersedes {other!r}, which is no trigger of this sensor{hint}"))
            else:
                graph[name].append(other)
    for name in graph:
        cycle = _cycle_from(name, graph)
        if cycle is not None:
            out.append(loc.at_key(("triggers", name, "supersedes"), "supersedes",
                                  f"trigger {name!r} supersedes itself through {' → '.join(cycle)}: a trigger can "
                                  "replace only triggers that do not replace it"))
    return out


def _cycle_from(start: str, graph: Mapping[str, list[str]]) -> list[str] | None:
    """The path `start → … → start` through `graph`, or None when `start` is on no cycle."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    visited: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in graph.get(node, ()):
            if nxt == start:
                return [*path, start]
            if nxt not in visited:
                visited.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


#: The `command:` fields that only an `output: stream` command uses (their defaults fill only its block).
STREAM_ONLY_FIELDS = ("stream_format", "max_line")

#: The `command:` fields that only a polled command uses (a stream runs for as long as the daemon runs and
#: reads lines of at most `max_line`): a stream's block gets no defaults for them.
POLL_ONLY_FIELDS = ("timeout", "max_output")

#: The `mcp:` fields that only a tool call uses (a resource sensor gets no defaults for them).
TOOL_ONLY_FIELDS = ("args", "allow_unannotated")

#: The `mcp:` fields that only a resource read uses (a tool sensor gets no defaults for them).
RESOURCE_ONLY_FIELDS = ("subscribe",)


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
