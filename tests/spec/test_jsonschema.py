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
