"""CompiledSensor: output reading (json and legacy lines), the lines pseudo-trigger, lanes, stepping by hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from attend.compiler import Fire, MalformedOutput, compile_sensor
from attend.compiler.sensors import parse_lines
from attend.spec import merge_sensor, read_sensor_file

BASE = """\
spec: 1
name: s
kind: command
command:
  argv: ["true"]
"""


def _compiled(tmp_path: Path, extra: str = "", layer: str = "user"):
    path = tmp_path / "s.yaml"
    path.write_text(BASE + extra)
    sensor = merge_sensor([read_sensor_file(path, layer)])
    assert sensor.status == "ok", sensor.diagnostics
    return compile_sensor(sensor)


def test_json_output_is_the_poll_result(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path)
    assert compiled.output == "json" and compiled.kind == "command"
    assert compiled.result_from_output('{"a": [1, 2]}') == ({"a": [1, 2]}, [])


def test_invalid_json_output_is_malformed_with_a_position(tmp_path: Path) -> None:
    with pytest.raises(MalformedOutput) as info:
        _compiled(tmp_path).result_from_output('{"a": \n oops}')
    assert info.value.code == "malformed"
    assert "not valid JSON at line 2 column 2" in info.value.message


def test_lines_are_trimmed_and_bad_lines_are_reported_with_their_number() -> None:
    items, errors = parse_lines("2.5|build finished\n\n 1 |  spaced  \nno pipe\n-1|negative\nx|bad\n0|zero|with pipe\n")
    assert items == [
        {"magnitude": 2.5, "description": "build finished"},
        {"magnitude": 1.0, "description": "spaced"},
        {"magnitude": 0.0, "description": "zero|with pipe"},
    ]
    assert [n for n, _ in errors] == [4, 5, 6]
    assert "line 4" in errors[0][1] and "not a number" in errors[2][1]


def test_a_lines_sensor_without_triggers_fires_each_valid_line(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "  output: lines\n")
    result, errors = compiled.result_from_output("3|deploy done\nbroken\n")
    step = compiled.step(None, result)
    assert step.fires == [Fire("lines", None, 3.0, "deploy done", {"magnitude": 3.0, "description": "deploy done"}, None)]
    assert errors == ["line 2: expected `magnitude|description`, got 'broken'"] and step.states == {}


def test_a_lines_sensor_with_triggers_evaluates_the_lines_as_items(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, """\
  output: lines
triggers:
  loud:
    path: $[*]
    key: description
    on: enters
    where: {magnitude: {above: 2}}
    description: "loud: {description}"
""")
    first = compiled.step(None, compiled.result_from_output("1|a\n")[0])
    second = compiled.step(first.states, compiled.result_from_output("3|a\n5|b\n1|c\n")[0])
    assert first.fires == []
    assert [f.description for f in second.fires] == ["loud: a", "loud: b"]


def test_step_keys_states_by_definition_hash_and_drops_states_of_edited_triggers(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "triggers:\n  t:\n    path: $.v\n    on: changed\n")
    (trigger,) = compiled.triggers.values()
    stale = {"0" * 64: {"v": 1, "present": True, "value": 1, "holding": True}}
    step = compiled.step(stale, {"v": 2})
    assert step.fires == [] and list(step.states) == [trigger.definition_hash]
    step = compiled.step(step.states, {"v": 3})
    assert [f.description for f in step.fires] == ["t: changed"] and [f.trigger for f in step.fires] == ["t"]


def test_a_trigger_without_description_says_trigger_key_and_transition(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "triggers:\n  prs:\n    path: $[*]\n    key: id\n    on: added\n"
                                   "  blank:\n    path: $[*]\n    key: id\n    on: added\n    description: '  '\n")
    step = compiled.step(None, [{"id": 7}, {"id": "x"}], test=True)
    assert [f.description for f in step.fires] == ["prs: 7 added", "prs: x added", "blank: 7 added", "blank: x added"]


def test_step_warnings_name_their_trigger(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, "triggers:\n  t:\n    path: $[*]\n    key: id\n    on: added\n")
    step = compiled.step(None, [{"id": 1}, {"x": 2}], test=True)
    assert [f.key for f in step.fires] == [1]
    assert step.warnings == ["t: 1 selected item(s) have no `id` field and were skipped"]


def test_the_message_lane_needs_author_in_every_trigger(tmp_path: Path) -> None:
    both = _compiled(tmp_path, "lane: message\ntriggers:\n  a:\n    path: $[*]\n    key: id\n    on: added\n    author: by\n")
    assert (both.lane, both.lane_note) == ("message", "")
    (fire,) = both.step(None, [{"id": 1, "by": "ada"}], test=True).fires
    assert fire.author == "ada"


def test_a_shipped_lane_exception_keeps_the_message_lane_without_author(tmp_path: Path) -> None:
    shipped = _compiled(tmp_path, "lane: message\nlane_exception: ADR-182\ntriggers:\n  a:\n    path: $\n    on: changed\n",
                        layer="shipped")
    assert shipped.lane == "message" and "ADR-182" in shipped.lane_note


def test_a_trigger_turned_off_is_not_compiled_and_the_others_still_fire(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path, """\
triggers:
  off:
    on: added
    key: id
    path: $[*]
    enabled: false
  on:
    on: added
    key: id
    path: $[*]
    description: "new {id}"
""")
    assert list(compiled.triggers) == ["on"]
    states = compiled.step({}, [{"id": 1}]).states
    assert [f.description for f in compiled.step(states, [{"id": 1}, {"id": 2}]).fires] == ["new 2"]


def test_a_lines_sensor_with_every_trigger_off_fires_nothing_rather_than_every_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("spec: 1\nname: s\nkind: command\ncommand: {argv: [\"true\"], output: lines}\n"
                    "triggers:\n  t: {on: added, key: description, path: '$[*]', enabled: false}\n")
    compiled = compile_sensor(merge_sensor([read_sensor_file(path, "user")]))
    result, _ = compiled.result_from_output("3|build failed\n")
    assert compiled.triggers == {}
    assert compiled.step({}, result).fires == []
