"""One place for each default and vocabulary (issue 38): spec/schema.py holds them, and the JSON Schema, the
docs' tables, the IR and the runtime read them from there. These tests say each copy agrees with the schema."""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest

from attend import ir
from attend.spec import schema
from attend.spec.durations import parse_duration
from attend.spec.jsonschema import json_schema

SPEC_MD = (Path(__file__).resolve().parents[2] / "docs" / "spec.md").read_text(encoding="utf-8")


def _docs_default(block: str, field: str) -> str:
    """The default column of `field`'s row in docs/spec.md's table of the `block:` fields."""
    section = SPEC_MD[SPEC_MD.index(f"`{block}:`"):]
    row = re.search(rf"^\| `{field}` \| [^|]+ \| ([^|]+) \|", section, re.MULTILINE)
    assert row is not None, f"docs/spec.md has no row for {block}.{field}"
    return row.group(1).strip()


@pytest.mark.parametrize(("block", "field", "default", "docs"), [
    ("command", "timeout", schema.DEFAULT_COMMAND_TIMEOUT, lambda text: parse_duration(text.strip("`"))),
    ("mcp", "timeout", schema.DEFAULT_MCP_TIMEOUT, lambda text: parse_duration(text.strip("`"))),
    ("command", "max_output", schema.DEFAULT_MAX_OUTPUT, lambda text: int(text.split("`")[1])),
])
def test_a_default_is_the_same_in_the_schema_the_json_schema_and_the_docs_table(block, field, default, docs) -> None:
    assert schema.describe((block, field)).default == default
    assert json_schema()["properties"][block]["properties"][field]["default"] == default
    assert docs(_docs_default(block, field)) == default


def test_the_runtime_reads_the_spec_defaults() -> None:
    from attend.runtime.kinds import PollContext, process
    from attend.runtime.kinds.command import run_command
    from attend.runtime.mcp import servers

    assert process.DEFAULT_TIMEOUT == schema.DEFAULT_COMMAND_TIMEOUT
    assert servers.DEFAULT_TIMEOUT == schema.DEFAULT_MCP_TIMEOUT
    assert PollContext.__dataclass_fields__["stdout_cap"].default == schema.DEFAULT_MAX_OUTPUT
    assert inspect.signature(run_command).parameters["max_output"].default == schema.DEFAULT_MAX_OUTPUT
    assert inspect.signature(run_command).parameters["timeout"].default == schema.DEFAULT_COMMAND_TIMEOUT


def test_the_where_operators_are_one_list_in_the_ir_the_schema_the_json_schema_and_the_docs() -> None:
    assert tuple(schema.OPERATORS) == ir.OPERATORS
    assert ir.Test.__annotations__["op"] == "Operator"  # the alias of ir.py's TYPE_CHECKING block, whose words:
    alias = re.search(r"^    Operator: TypeAlias = (Literal\[.*\])$", Path(ir.__file__).read_text(), re.MULTILINE)
    assert alias is not None and typing.get_args(eval(alias.group(1), {"Literal": typing.Literal})) == ir.OPERATORS
    where = json_schema()["properties"]["triggers"]["additionalProperties"]["properties"]["where"]
    assert where["additionalProperties"]["anyOf"][1]["propertyNames"]["enum"] == list(ir.OPERATORS)
    row = re.search(r"^\| `where` \|.*$", SPEC_MD, re.MULTILINE)
    assert row is not None and re.findall(r"`(\w+)`", row.group(0).split("operator mapping with")[1]) == list(ir.OPERATORS)


def test_the_sensor_name_rule_is_the_schema_s_in_the_json_schema() -> None:
    assert json_schema()["properties"]["name"]["pattern"] == schema.NAME_PATTERN
