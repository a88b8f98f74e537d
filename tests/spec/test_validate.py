"""Validation rules and normalisation on merged sensors, called directly (no layers, no CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from attend.bounds import MAX_TRIGGERS
from attend.spec import merge_sensor
from attend.spec.loaded import SensorFile
from attend.spec.loading import parse_yaml
from attend.spec.validate import normalise


def sensor_from(text: str, *, layer: str = "user", name: str = "probe"):
    parsed = parse_yaml(text, f"{name}.yaml", layer)
    sensor_file = SensorFile(name=name, layer=layer, path=Path(f"{name}.yaml"), data=parsed.data,
                             origins=parsed.origins, diagnostics=parsed.diagnostics)
    return merge_sensor([sensor_file], name)


MESSAGE_LANE = "spec: 1\nname: probe\nkind: crate\nlane: message\nlane_exception: ADR-182\n" \
               "triggers:\n  wake: {on: changed}\n"


def test_the_shipped_layer_may_waive_author_on_the_message_lane() -> None:
    assert sensor_from(MESSAGE_LANE, layer="shipped").diagnostics == []


def test_any_other_layer_may_not() -> None:
    codes = [(d.code, d.line) for d in sensor_from(MESSAGE_LANE, layer="user").diagnostics]
    assert codes == [("lane-author", 5), ("lane-author", 7)]


def test_a_sensor_with_too_many_triggers_is_refused_before_the_compiler_sees_it() -> None:
    triggers = "".join(f"  t{i}: {{on: changed}}\n" for i in range(MAX_TRIGGERS + 1))
    sensor = sensor_from(f"spec: 1\nname: probe\nkind: crate\ntriggers:\n{triggers}")
    assert [(d.code, d.line) for d in sensor.diagnostics] == [("bad-value", 4)]
    assert sensor.status == "invalid"


def test_min_interval_defaults_to_15_seconds_capped_at_the_interval() -> None:
    assert normalise({"interval": "10s"})["min_interval"] == 10.0
    assert normalise({"interval": "5m"})["min_interval"] == 15.0
    assert normalise({})["interval"] == 60.0


def test_normalising_fills_block_and_trigger_defaults_but_invents_no_block() -> None:
    data = normalise({"kind": "mcp", "mcp": {"server": "github", "tool": "list"}, "triggers": {"t": {"on": "changed"}}})
    assert data["mcp"] == {"server": "github", "tool": "list", "args": {}, "allow_unannotated": False, "timeout": 30.0}
    assert data["triggers"]["t"] == {"on": "changed", "path": "$", "match": "all", "magnitude": 1.0,
                                     "initial": "baseline", "enabled": True}
    assert "command" not in data and "crate" not in data


def test_a_valid_sensor_is_ok_with_every_key_path_positioned() -> None:
    sensor = sensor_from("spec: 1\nname: probe\nkind: command\ncommand:\n  argv: [date]\n")
    assert (sensor.status, sensor.diagnostics) == ("ok", [])
    assert sensor.origin("command", "argv", "0").col == 10


def test_a_duration_of_zero_is_refused_where_it_would_spin_or_always_fail() -> None:
    sensor = sensor_from(
        "spec: 1\nname: probe\nkind: command\ninterval: 0\nmin_interval: 0s\n"
        "command: {argv: [echo, '{}'], timeout: 0ms}\n"
    )
    assert [(d.code, d.line, d.col) for d in sensor.diagnostics] == [
        ("bad-value", 4, 11), ("bad-value", 5, 15), ("bad-value", 6, 40)
    ]
    assert sensor.status == "invalid"


def test_a_duration_of_the_wrong_type_and_a_malformed_duration_string_both_say_bad_duration() -> None:
    sensor = sensor_from(
        "spec: 1\nname: probe\nkind: command\ninterval: [30]\nmin_interval: true\n"
        "command: {argv: [date], timeout: 5 minutes}\n"
    )
    found = sorted((d.line, d.code, d.message) for d in sensor.diagnostics)
    assert [(line, code) for line, code, _ in found] == [(4, "bad-duration"), (5, "bad-duration"), (6, "bad-duration")]
    assert found[0][2].startswith("`interval`: [30] is not a duration: use a number of seconds")
    assert found[1][2].startswith("`min_interval`: true is not a duration")
    assert found[2][2].startswith("`command.timeout`: '5 minutes' is not a duration")


def test_normalise_turns_every_duration_field_into_float_seconds_and_leaves_the_input_alone() -> None:
    given = {"interval": "2m", "min_interval": 30, "command": {"argv": ["date"], "timeout": "500ms"},
             "mcp": {"server": "s", "tool": "t", "timeout": "1h"}}
    data = normalise(given)
    assert (data["interval"], data["min_interval"]) == (120.0, 30.0)
    assert (data["command"]["timeout"], data["mcp"]["timeout"]) == (0.5, 3600.0)
    assert given["command"]["timeout"] == "500ms" and given["mcp"]["timeout"] == "1h"


@pytest.mark.parametrize(("written", "shown"), [
    ("true", "true"), ("false", "false"), ("null", "null"), ("~", "null"),
    ("[1, true, null]", "[1, true, null]"), ("{a: no}", "{'a': 'no'}"),
])
def test_a_bad_value_is_quoted_in_yaml_words_not_pythons(written: str, shown: str) -> None:
    sensor = sensor_from(f"spec: 1\nname: probe\nkind: command\ninterval: {written}\ncommand: {{argv: [date]}}\n")
    messages = [d.message for d in sensor.diagnostics if d.line == 4]
    assert any(m.startswith(f"`interval`: {shown} is not a duration") for m in messages), messages


def test_a_non_finite_number_is_shown_as_yaml_writes_it() -> None:
    sensor = sensor_from("spec: 1\nname: probe\nkind: command\ninterval: -.inf\ncommand: {argv: [date]}\n")
    assert any(d.message.startswith("`interval` is -.inf: numbers in a sensor file must be finite")
               for d in sensor.diagnostics)


MCP_HEAD = "spec: 1\nname: probe\nkind: mcp\nmcp:\n  server: github\n"


def test_an_mcp_sensor_names_a_tool_or_a_resource() -> None:
    for target in ("  tool: list\n", "  resource: repo://issues\n"):
        sensor = sensor_from(MCP_HEAD + target)
        assert (sensor.status, sensor.diagnostics) == ("ok", [])


def test_an_mcp_sensor_naming_both_a_tool_and_a_resource_or_neither_is_invalid() -> None:
    both = sensor_from(MCP_HEAD + "  tool: list\n  resource: repo://issues\n")
    assert [(d.code, d.line) for d in both.diagnostics] == [("bad-value", 7)]
    assert "either `tool`" in both.diagnostics[0].message
    neither = sensor_from(MCP_HEAD)
    assert [d.code for d in neither.diagnostics] == ["required"]
    assert "`mcp.tool` or `mcp.resource`" in neither.diagnostics[0].message


def test_a_resource_sensor_takes_no_tool_arguments() -> None:
    sensor = sensor_from(MCP_HEAD + "  resource: repo://issues\n  args: {state: open}\n")
    assert [(d.code, d.line) for d in sensor.diagnostics] == [("bad-value", 7)]


def test_normalising_a_resource_sensor_fills_no_tool_only_defaults() -> None:
    data = normalise({"kind": "mcp", "mcp": {"server": "github", "resource": "repo://issues"}})
    assert data["mcp"] == {"server": "github", "resource": "repo://issues", "subscribe": False, "timeout": 30.0}


def test_only_a_resource_sensor_subscribes() -> None:
    assert sensor_from(MCP_HEAD + "  resource: repo://issues\n  subscribe: true\n").diagnostics == []
    sensor = sensor_from(MCP_HEAD + "  tool: list\n  subscribe: true\n")
    assert [(d.code, d.line) for d in sensor.diagnostics] == [("bad-value", 7)]


INLINE_HEAD = "spec: 1\nname: probe\nkind: mcp\nmcp:\n  tool: list\n  server:\n"


def test_an_inline_server_is_a_stdio_program_or_a_remote_http_or_sse_endpoint() -> None:
    for server in ("    command: board-server\n    args: [--ro]\n",
                   "    type: http\n    url: https://mcp.example/mcp\n    headers: {Authorization: 'Bearer ${T}'}\n",
                   "    type: sse\n    url: https://mcp.example/sse\n"):
        sensor = sensor_from(INLINE_HEAD + server)
        assert (sensor.status, sensor.diagnostics) == ("ok", []), server


def test_an_inline_remote_server_needs_its_url_and_takes_no_program() -> None:
    sensor = sensor_from(INLINE_HEAD + "    type: sse\n    command: board-server\n")
    assert sorted((d.code, d.line) for d in sensor.diagnostics) == [("bad-value", 8), ("required", 6)]
    messages = " | ".join(d.message for d in sensor.diagnostics)
    assert "`command` belongs to a stdio server" in messages and "`mcp.server.url`" in messages


def test_an_inline_stdio_server_needs_its_command_and_a_url_needs_a_remote_type() -> None:
    sensor = sensor_from(INLINE_HEAD + "    url: https://mcp.example/mcp\n")
    assert sorted((d.code, d.line) for d in sensor.diagnostics) == [("bad-value", 7), ("required", 6)]
    messages = " | ".join(d.message for d in sensor.diagnostics)
    assert "add `type: http` or `type: sse`" in messages and "`mcp.server.command`" in messages
    unknown = sensor_from(INLINE_HEAD + "    type: ws\n    url: ws://mcp.example\n")
    assert [d.code for d in unknown.diagnostics] == ["bad-value"]


def _command(block: str) -> str:
    return f"spec: 1\nname: probe\nkind: command\ncommand:\n{block}triggers:\n  t: {{path: $.x, on: changed}}\n"


@pytest.mark.parametrize("field", ["cursor: id", "stream_format: lines", "max_line: 100"])
def test_a_stream_field_on_a_polled_command_is_bad_value_at_its_key(field: str) -> None:
    # it was accepted and ignored: a sensor meant as a stream (`output: stream` forgotten) ran as a polled command
    sensor = sensor_from(_command(f"  argv: [cat]\n  {field}\n"))
    (diagnostic,) = sensor.diagnostics
    name = field.split(":")[0]
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("bad-value", 6, 3)
    assert diagnostic.message.startswith(f"`command.{name}` is for a streaming command (`output: stream`); this "
                                         "command is polled (output: json)")
    assert sensor.status == "invalid"


def test_an_argv_cursor_placeholder_without_a_cursor_field_is_bad_value_at_the_argument() -> None:
    sensor = sensor_from(_command('  argv: [tail, "--after={cursor}"]\n  output: stream\n'))
    (diagnostic,) = sensor.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("bad-value", 5, 16)
    assert "holds {cursor} but the sensor names no `command.cursor` field" in diagnostic.message
    assert sensor_from(_command('  argv: [tail, "--after={cursor}"]\n  output: stream\n  cursor: seq\n')).diagnostics == []
    assert [d.code for d in sensor_from(_command('  argv: [cat]\n  output: stream\n  cursor: ""\n')).diagnostics] == ["bad-value"]


@pytest.mark.parametrize("field", ["timeout: 5s", "max_output: 100"])
def test_a_poll_field_on_a_streaming_command_is_bad_value_at_its_key(field: str) -> None:
    # accepted and ignored: a stream has no run timeout and no output cap (max_line bounds it)
    sensor = sensor_from(_command(f"  argv: [cat]\n  output: stream\n  {field}\n"))
    (diagnostic,) = sensor.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("bad-value", 7, 3)
    assert diagnostic.message.startswith(f"`command.{field.split(':')[0]}` is for a polled command; a streaming command")


def test_a_streaming_commands_block_gets_no_poll_defaults_and_a_polled_one_no_stream_defaults() -> None:
    stream = normalise(sensor_from(_command("  argv: [cat]\n  output: stream\n")).data)["command"]
    assert "timeout" not in stream and "max_output" not in stream and stream["max_line"] == 65536
    polled = normalise(sensor_from(_command("  argv: [cat]\n")).data)["command"]
    assert polled["timeout"] == 10.0 and "max_line" not in polled


def test_a_name_or_trigger_name_with_a_trailing_newline_breaks_its_rule() -> None:
    # cerberus matched `pattern + "$"` from the start and `$` also matches before a final newline, so
    # "probe\n" and "t\n" passed; so did the fast path that mirrors it (conform.py).
    from attend.spec.conform import conforms
    from attend.spec.schema import SENSOR_SCHEMA

    sensor = sensor_from('spec: 1\nname: "probe\\n"\nkind: crate\ntriggers:\n  "t\\n": {on: changed}\n')
    assert [(d.code, d.line) for d in sensor.diagnostics] == [("bad-name", 2), ("bad-value", 5)]
    assert "breaks the rule" in sensor.diagnostics[1].message
    document = {"spec": 1, "name": "probe", "kind": "crate", "triggers": {"t\n": {"on": "changed"}}}
    assert not conforms(document, {"type": "dict", "schema": SENSOR_SCHEMA})


@pytest.mark.parametrize(("block", "at", "said"), [
    ('  argv: [echo, "a\\0b"]\n', (5, 16), "`command.argv` item 1 holds a NUL character"),
    ('  argv: [echo]\n  cwd: "sub\\0"\n', (6, 8), "`command.cwd` holds a NUL character"),
    ('  argv: [echo]\n  env: {C: "d\\0"}\n', (6, 12), "`command.env.C` holds a NUL character"),
    ('  argv: [echo]\n  env: {"A=B": "1"}\n', (6, 9), "environment variable name 'A=B' holds an `=`"),
])
def test_what_no_process_can_be_started_with_is_refused_at_check_time_not_at_the_first_poll(
    block: str, at: tuple[int, int], said: str
) -> None:
    # it passed `compile --check` and failed every poll as exec_failed ("embedded null byte")
    sensor = sensor_from(_command(block))
    (diagnostic,) = sensor.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("bad-value", *at)
    assert diagnostic.message.startswith(said)
    assert sensor.status == "invalid"
