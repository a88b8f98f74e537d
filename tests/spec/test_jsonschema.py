"""`attend spec schema`: a draft 2020-12 JSON Schema that accepts valid sensor files and rejects invalid ones."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from attend.spec.jsonschema import json_schema
from attend.spec.loading import read_yaml_file

DATA = Path(__file__).parent.parent / "data" / "spec"
SHIPPED = Path(__file__).parent.parent.parent / "src" / "attend" / "sensors.d"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def sensor_files() -> list[Path]:
    shipped = [p for p in SHIPPED.glob("*.yaml") if not p.name.endswith(".test.yaml")]
    return sorted((DATA / "valid").glob("*.yaml")) + sorted(shipped)


@pytest.mark.parametrize("path", sensor_files(), ids=lambda p: p.name)
def test_valid_and_shipped_sensor_files_satisfy_the_json_schema(validator, path: Path) -> None:
    data = read_yaml_file(path).data
    assert list(validator.iter_errors(data)) == []


@pytest.mark.parametrize("name", ["unknown-field", "bad-value", "wrong-type", "kind-block-missing", "bad-duration"])
def test_invalid_corpus_files_break_the_json_schema(validator, name: str) -> None:
    data = read_yaml_file(DATA / "cases" / f"{name}.yaml").data
    assert list(validator.iter_errors(data)) != []


def test_every_field_in_the_schema_carries_a_description() -> None:
    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                assert sub.get("description"), f"{where}.{name} has no description"
                walk(sub, f"{where}.{name}")
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                walk(extra, f"{where}.*")

    walk(json_schema(), "$")


def test_the_cli_prints_the_schema_as_json(home) -> None:
    result = home.attend("spec", "schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["triggers"]["additionalProperties"]["properties"]["on"]["enum"][0] == "added"


#: Strings on both sides of the duration syntax, all within the 30-day bound (a pattern cannot count
#: seconds; the schema's `maxLength` and the number's `maximum` carry the bounds it can state).
DURATION_STRINGS = [
    "90", "2.5", ".5", "500ms", "30s", "5m", "1h", " 5m ", "\t5m\t", "5 m", "0", "0s", "720h",
    "", " ", "5", "5.", "-5s", "+5s", "1e3", "5min", "5M", "5 mm", "ms", "5d", "1_0s", "0x10",
    "٣s", "５s", "5s\n", "\n5s", "5\u00a0s", "5\u2003s", "5\x0bs", "5\rs", "5s\x00", "1.2.3s", "5ms ",
]


@pytest.mark.parametrize("text", DURATION_STRINGS, ids=repr)
def test_the_json_schema_duration_pattern_and_parse_duration_agree(text: str) -> None:
    from attend.spec.durations import is_duration
    from attend.spec.jsonschema import DURATION_PATTERN

    schema = {"type": "string", "pattern": DURATION_PATTERN}
    by_schema = jsonschema.Draft202012Validator(schema).is_valid(text)
    assert by_schema == is_duration(text), f"schema says {by_schema}, parse_duration says {is_duration(text)}"


def test_the_json_schema_states_the_duration_bounds_parse_duration_keeps() -> None:
    from attend.bounds import MAX_DURATION_CHARS, MAX_DURATION_SECONDS
    from attend.spec.durations import is_duration

    validator = jsonschema.Draft202012Validator(json_schema()["properties"]["interval"])
    for value in (MAX_DURATION_SECONDS, MAX_DURATION_SECONDS + 1, " " * MAX_DURATION_CHARS + "5s"):
        assert validator.is_valid(value) == is_duration(value), value


def test_the_json_schema_wants_exactly_one_of_tool_and_resource_in_an_mcp_block(validator) -> None:
    def errors(block: dict) -> list:
        return list(validator.iter_errors({"spec": 1, "name": "x", "kind": "mcp", "mcp": {"server": "s", **block}}))

    assert errors({"tool": "list"}) == [] and errors({"resource": "repo://issues"}) == []
    assert errors({}) != [] and errors({"tool": "list", "resource": "repo://issues"}) != []


def test_the_json_schema_takes_an_inline_server_as_a_stdio_program_or_a_remote_endpoint(validator) -> None:
    def errors(server: dict) -> list:
        return list(validator.iter_errors({"spec": 1, "name": "x", "kind": "mcp",
                                           "mcp": {"server": server, "tool": "list"}}))

    assert errors({"command": "srv", "args": ["-x"], "env": {"K": "v"}}) == []
    assert errors({"type": "http", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${T}"}}) == []
    assert errors({"type": "sse", "url": "https://mcp.example/sse"}) == []
    assert errors({"type": "sse"}) != [] and errors({"url": "https://mcp.example/mcp"}) != []
    assert errors({"type": "http", "url": "https://mcp.example/mcp", "command": "srv"}) != []
    assert errors({"type": "ws", "url": "ws://mcp.example"}) != [] and errors({"args": ["-x"]}) != []
