"""diagnose: every expression problem of a sensor, at the character inside its YAML scalar."""

from __future__ import annotations

from pathlib import Path

import pytest

from attend.compiler import compile_sensor, diagnose
from attend.errors import CompileError
from attend.spec import merge_sensor, read_sensor_file

SENSOR = """\
spec: 1
name: wx
kind: command
command:
  argv: [echo, "{}"]
triggers:
  high:
    path: "$.current[*"
    on: enters
    where:
      wind..x: {above: ten}
      name: {matches: 'ab(c'}
      ok: {like: "*"}
      "a b": 1
    description: >-
      wind {speed
  low:
    path: $.a]
    on: changed
    description: "x } y"
  fine:
    path: $.items[*]
    key: id
    on: added
    description: |
      new {id}
      and { oops
"""


def _sensor(tmp_path: Path, text: str = SENSOR):
    path = tmp_path / "wx.yaml"
    path.write_text(text)
    return merge_sensor([read_sensor_file(path, "user")]), str(path)


def test_every_expression_problem_is_reported_at_the_character_inside_the_scalar(tmp_path: Path) -> None:
    sensor, file = _sensor(tmp_path)
    got = [(d.line, d.col, d.code) for d in diagnose(sensor)]
    assert got == [
        (8, 23, "path-syntax"),       # after the opening quote: "$.current[* ends before ']'
        (11, 12, "pattern-syntax"),   # the empty part between the dots of the key
        (11, 24, "operator"),         # the operand of above
        (12, 26, "regex-syntax"),     # inside the single-quoted regex, at the '(' never closed
        (14, 9, "pattern-syntax"),    # the space inside a quoted key
        (16, 18, "template-syntax"),  # inside the folded block scalar, on its content line
        (18, 14, "path-syntax"),      # a plain scalar: the stray bracket
        (20, 21, "template-syntax"),  # the lone brace inside the double-quoted scalar
        (27, 12, "template-syntax"),  # second line of a literal block scalar
    ]
    assert all(d.file == file for d in diagnose(sensor))


def test_each_diagnostic_carries_a_caret_under_the_offending_character(tmp_path: Path) -> None:
    sensor, _ = _sensor(tmp_path)
    low = [d for d in diagnose(sensor) if d.line == 18][0]
    assert low.detail == "18 |     path: $.a]\n   |              ^"
    assert "expected '.', '..' or '['" in low.message


def test_a_regex_error_points_at_the_construct_left_open_not_at_the_closing_quote(tmp_path: Path) -> None:
    # `regex` positions "unterminated" at the pattern's end; the caret goes under the `[` (issue 27, item 10)
    text = SENSOR.split("  high:")[0] + "  ok:\n    path: $.a\n    on: enters\n    where:\n      n: {matches: '([a-z'}\n"
    sensor, _ = _sensor(tmp_path, text)
    (problem,) = diagnose(sensor)
    assert problem.code == "regex-syntax" and "unterminated character set" in problem.message
    assert problem.detail.splitlines()[1].index("^") == problem.detail.splitlines()[0].index("[")


def test_a_sensor_without_expression_problems_has_no_diagnostics(tmp_path: Path) -> None:
    sensor, _ = _sensor(tmp_path, SENSOR.split("  high:")[0] + "  ok:\n    path: $.a\n    on: changed\n")
    assert diagnose(sensor) == []
    assert list(compile_sensor(sensor).triggers) == ["ok"]


def test_compile_sensor_raises_the_first_problem_positioned_in_the_file(tmp_path: Path) -> None:
    sensor, file = _sensor(tmp_path)
    with pytest.raises(CompileError) as info:
        compile_sensor(sensor)
    assert (info.value.file, info.value.line, info.value.col, info.value.field) == (file, 8, 23, "path")


def test_positions_inside_quoted_scalars_count_escapes_as_written(tmp_path: Path) -> None:
    text = SENSOR.split("  high:")[0] + (
        "  esc:\n"
        "    path: $.a\n"
        "    on: changed\n"
        '    description: "caf\\u00e9 \\"x\\" } y"\n'
        "  sq:\n"
        "    path: $.a\n"
        "    on: changed\n"
        "    description: 'it''s } z'\n"
    )
    sensor, _ = _sensor(tmp_path, text)
    got = [(d.line, d.col) for d in diagnose(sensor)]
    lines = text.splitlines()
    assert got == [(10, lines[9].index("} y") + 1), (14, lines[13].index("} z") + 1)]


def test_origins_are_grouped_by_trigger_and_keyed_inside_the_trigger() -> None:
    from attend.compiler.diagnostics import origins_by_trigger

    origins = {("name",): "n", ("triggers",): "t", ("triggers", "a"): "a", ("triggers", "a", "path"): "a.path",
               ("triggers", "b", "where", "x"): "b.x", ("command", "argv"): "c"}
    assert origins_by_trigger(origins) == {
        "a": {(): "a", ("path",): "a.path"},
        "b": {("where", "x"): "b.x"},
    }


def test_many_errors_in_one_file_each_get_their_own_line_and_caret(tmp_path: Path) -> None:
    # the file's lines are split once per diagnose; each excerpt must still show its own line
    where = "\n".join(f"      p{i}[: {i}" for i in range(40))
    path = tmp_path / "many.yaml"
    path.write_text(f"spec: 1\nname: many\nkind: command\ncommand:\n  argv: [echo, '{{}}']\ntriggers:\n"
                    f"  t:\n    path: $.items[*]\n    key: id\n    on: added\n    where:\n{where}\n")
    found = diagnose(merge_sensor([read_sensor_file(path, "user")]))
    assert [(d.line, d.col, d.code) for d in found] == [(12 + i, 7 + len(f"p{i}"), "pattern-syntax") for i in range(40)]
    assert [d.detail.splitlines()[0] for d in found] == [f"{12 + i} |       p{i}[: {i}" for i in range(40)]
