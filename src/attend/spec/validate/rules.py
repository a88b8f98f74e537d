"""The spec v1 rules cerberus cannot say (spec version, name, kind blocks, interval order, on/key/where,
message lane, supersedes), and `validate_sensor`, which runs them with the shape check on a merged sensor.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.bounds import MAX_COUNT, MAX_PATTERN_EXPANSION_PER_SENSOR, MAX_TRIGGERS, MAX_WHERE_PROPERTIES, pattern_shape
from attend.errors import Diagnostic
from attend.spec.durations import ACCEPTED_FORMS, is_duration, parse_duration
from attend.spec.loaded import KeyPath, Origin, SensorFile
from attend.spec.schema import (
    CURSOR_PLACEHOLDER,
    KINDS,
    MCP_REMOTE_FIELDS,
    MCP_STDIO_FIELDS,
    MCP_TRANSPORTS,
    NAME_PATTERN,
    NAME_RE,
    ON_VALUES,
    POLL_ONLY_FIELDS,
    SPEC_VERSION,
    STREAM_ONLY_FIELDS,
)
from attend.spec.validate.locate import Locator, _duration_paths, _value_at
from attend.spec.validate.shape import _finite_numbers, _non_finite, _schema_errors
from attend.spec.validate.wording import _a, _describe, _short, _shown

#: Where `lane_exception` is honoured: only a file attend itself ships may waive `author`.
LANE_EXCEPTION_LAYER = "shipped"


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
    out.extend(_process_text_rules(data, loc))
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
        if not NAME_RE.fullmatch(sensor_file.name):
            out.append(Diagnostic(file, 1, 1, "bad-name",
                                  f"the file name {sensor_file.name!r} breaks the sensor-name rule {NAME_PATTERN} "
                                  "(lower-case letters, digits, _ and -)"))
        given = sensor_file.data.get("name")
        if "name" not in sensor_file.data or not isinstance(given, str) or origin is None:
            continue
        if not NAME_RE.fullmatch(given):
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


def _process_text_rules(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """What a process is started with cannot hold a NUL character (the kernel takes C strings), nor an
    environment variable's name an `=`: said here, not as a failed start at the first poll."""
    block = data.get("command")
    if data.get("kind") != "command" or not isinstance(block, dict):
        return []
    out = []
    argv, env, cwd = block.get("argv"), block.get("env"), block.get("cwd")
    for index, arg in enumerate(argv if isinstance(argv, list) else []):
        if isinstance(arg, str) and "\0" in arg:
            out.append(loc.at_value(("command", "argv", str(index)), "bad-value",
                                    f"`command.argv` item {index} holds a NUL character, which no command line can carry"))
    for name, value in (env if isinstance(env, dict) else {}).items():
        if isinstance(name, str) and ("\0" in name or "=" in name):
            out.append(loc.at_key(("command", "env", name), "bad-value",
                                  f"environment variable name {name!r} holds {'an `=`' if '=' in name else 'a NUL character'}, "
                                  "which no environment can carry"))
        elif isinstance(value, str) and "\0" in value:
            out.append(loc.at_value(("command", "env", name), "bad-value",
                                    f"`command.env.{name}` holds a NUL character, which no environment can carry"))
    if isinstance(cwd, str) and "\0" in cwd:
        out.append(loc.at_value(("command", "cwd"), "bad-value", "`command.cwd` holds a NUL character, which no path "
                                "can carry"))
    return out


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


def _positive_durations(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """Every duration must be above zero: `interval: 0` would poll back to back, `timeout: 0` always fails."""
    out = []
    for path in _duration_paths(data):
        value = _value_at(data, path)
        if path[-1] != "for" and is_duration(value) and parse_duration(value) <= 0:
            out.append(loc.at_value(path, "bad-value", f"`{'.'.join(path)}` must be above zero, not {_short(value)}"))
    return out


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
