"""One validator of trigger rules for sensor files and `attend.compile_trigger` (issue 24; issue 28 items
18 and 19): the same trigger is refused with the same code, bound and words by `attend compile --check`
and by the API, and no value a trigger can hold makes either raise anything but a positioned error."""

from __future__ import annotations

import json
import re

import pytest

import attend

SENSOR = """\
spec: 1
name: one
kind: command
command: {{argv: [echo, "[]"]}}
triggers:
  t:
    path: $[*]
{fields}
"""


def file_errors(home, fields: str) -> list[tuple[str, str]]:
    """(code, message) of each error `compile --check` reports for a sensor whose trigger `t` has `fields`."""
    home.write_user_sensor("one", SENSOR.format(fields=fields))
    done = home.attend("compile", "--check")
    return re.findall(r"one\.yaml:\d+:\d+: error: \[([a-z-]+)\] (.*)", done.stdout)


def api_error(definition: dict) -> attend.CompileError:
    with pytest.raises(attend.CompileError) as info:
        attend.compile_trigger({"path": "$[*]", **definition}, name="t")
    return info.value


def test_one_magnitude_bound_and_one_wording_for_a_file_and_the_api(home) -> None:
    assert file_errors(home, "    on: changed\n    magnitude: 1000000") == []
    attend.compile_trigger({"on": "changed", "magnitude": 1_000_000}, name="t")
    found = file_errors(home, "    on: changed\n    magnitude: 1e12")
    error = api_error({"on": "changed", "magnitude": 1e12})
    assert found == [("bad-value", "`triggers.t.magnitude` must be at most 1,000,000, not 1000000000000.0")]
    assert (error.code, error.message, error.field, error.column) == (*found[0], "magnitude", 1)


@pytest.mark.parametrize(("yaml_fields", "definition", "field"), [
    ("    on: changed\n    flap: true", {"on": "changed", "flap": True}, "flap"),
    ("    on: enters\n    where: {a: 1}\n    clear_where: {}", {"on": "enters", "where": {"a": 1}, "clear_where": {}},
     "clear_where"),
    ("    on: added\n    key: a..b", {"on": "added", "key": "a..b"}, "key"),
    ("    on: added", {"on": "added"}, "key"),
    ("    key: id", {"key": "id"}, "on"),
    ("    on: changed\n    for: soon", {"on": "changed", "for": "soon"}, "for"),
    ("    on: changed\n    flap: {window: 0}", {"on": "changed", "flap": {"window": 0}}, "flap"),
    ("    on: changed\n    match: some", {"on": "changed", "match": "some"}, "match"),
    ("    on: changed\n    colour: red", {"on": "changed", "colour": "red"}, "colour"),
])
def test_a_trigger_the_spec_refuses_is_refused_in_the_same_words_by_a_file_and_the_api(
        home, yaml_fields: str, definition: dict, field: str) -> None:
    found = file_errors(home, yaml_fields)
    error = api_error(definition)
    assert len(found) == 1 and (error.code, error.message) == found[0]
    assert error.field == field


@pytest.mark.parametrize("field", ["magnitude", "for", "flap.window"])
@pytest.mark.parametrize("digits", [309, 400, 1000])
def test_an_integer_past_float_range_is_a_positioned_error_in_a_file_and_through_the_api(
        home, field: str, digits: int) -> None:
    number = int("9" * digits)
    definition: dict = {"on": "changed", "flap": {"window": number}} if field == "flap.window" else \
        {"on": "changed", field: number}
    error = api_error(definition)
    assert error.field == field.split(".")[0] and error.code in ("bad-value", "bad-duration")
    home.write_user_sensor("one", SENSOR.format(fields="    " + json.dumps(definition)[1:-1].replace(", ", "\n    ")))
    done = home.attend("compile", "--check")
    assert done.returncode == 1 and "check-failed" not in done.stdout and f"triggers.t.{field}" in done.stdout
    explained = home.attend("explain", "one")
    assert explained.returncode == 1 and "internal error" not in explained.stderr


@pytest.mark.parametrize(("definition", "code"), [
    ({"on": "changed", 1: "x"}, "wrong-type"),
    ({"on": "enters", "where": {"a": {2.5: 1}}}, "wrong-type"),
    ({"on": "enters", "where": {"a": {"in": {1, 2}}}}, "wrong-type"),
    ({"on": "changed", "magnitude": 10 ** 1000}, "bad-number"),
])
def test_what_no_yaml_file_holds_is_a_compile_error_through_the_api(definition: dict, code: str) -> None:
    assert api_error(definition).code == code


def test_a_trigger_nested_past_the_loader_depth_is_a_compile_error_through_the_api() -> None:
    deep: list = []
    node = deep
    for _ in range(10_000):
        node.append([])
        node = node[0]
    error = api_error({"on": "enters", "where": {"a": {"in": deep}}})
    assert (error.code, error.field) == ("too-deep", "where")
