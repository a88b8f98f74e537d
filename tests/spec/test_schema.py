"""The schema's field documentation (`describe`) and durations: what `attend settings help` shows."""

from __future__ import annotations

import pytest

from attend.spec.durations import parse_duration
from attend.spec.schema import describe, known_fields


@pytest.mark.parametrize(("text", "seconds"), [(90, 90.0), (2.5, 2.5), ("500ms", 0.5), ("30s", 30.0),
                                               ("5m", 300.0), ("1h", 3600.0), ("45", 45.0), (" 2m ", 120.0)])
def test_durations_accept_seconds_and_unit_strings(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["5 minutes", "1d", "-3s", -1, True, None, [], "m", "1.5.2s", float("inf")])
def test_anything_else_is_refused_with_the_accepted_forms(text: object) -> None:
    with pytest.raises(ValueError, match="500ms, 30s, 5m or 1h"):
        parse_duration(text)


def test_describe_gives_type_default_and_allowed_values() -> None:
    doc = describe("lane")
    assert (doc.type, doc.default, doc.allowed) == ("string", "event", ("event", "message"))
    assert describe(("command", "timeout")).default == 10.0
    assert describe("interval").type == "duration"
    assert describe("requires").type == "list of strings"


def test_trigger_names_and_where_properties_are_wildcards() -> None:
    assert describe("triggers.high-wind.magnitude").default == 1.0
    assert describe("triggers.high-wind.on").allowed == ("added", "removed", "changed", "enters", "leaves")
    assert "above" in describe("triggers.t.where.wind_speed_*.above").description
    dotted = describe("triggers.t.where.user.login.equals")
    assert dotted is not None and "equals" in dotted.description
    assert describe(("triggers", "t", "where", "user.login")).type.startswith("string")


def test_unknown_keys_have_no_description() -> None:
    assert describe("intervall") is None
    assert describe("triggers.t.colour") is None
    assert describe("command.argv.0.x") is None


def test_crate_fields_are_open_and_every_documented_field_has_a_description() -> None:
    assert describe("crate.watch") is not None
    for path in [(), ("command",), ("mcp",), ("triggers", "t")]:
        for name in known_fields(path):
            assert describe((*path, name)).description, (*path, name)


def test_docs_spec_md_documents_every_field_of_the_schema() -> None:
    from pathlib import Path

    from attend.spec.schema import COMMAND_SCHEMA, MCP_SCHEMA, SENSOR_SCHEMA, TRIGGER_SCHEMA

    text = (Path(__file__).parent.parent.parent / "docs" / "spec.md").read_text()
    fields = [*SENSOR_SCHEMA, *COMMAND_SCHEMA, *MCP_SCHEMA, *TRIGGER_SCHEMA]
    assert [name for name in fields if f"| `{name}`" not in text and f"/ `{name}`" not in text] == []


def test_the_schema_the_validator_uses_passes_cerberus_own_schema_check_unchanged() -> None:
    # The validator takes SENSOR_SCHEMA pre-expanded and unchecked (start-up time); this is the check.
    from attend.spec.validate.shape import _cerberus, checked_schema

    validator_class = type(_cerberus())
    checked = validator_class(checked_schema().schema)  # cerberus validates it here, or raises SchemaError
    assert checked.schema.schema == _cerberus().schema.schema
    assert set(_cerberus().schema.schema) >= {"spec", "name", "kind", "triggers"}
