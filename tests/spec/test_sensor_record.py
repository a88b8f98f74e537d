"""One road for each sensor field (issue 38): `spec.reader.read_sensor` reads the merged document into `ir.Sensor`
(`MergedSensor.ir`), the record covers every field of the schema, and no module outside `spec/` reads a sensor's
fields from the document's dict."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attend import ir
from attend.records import fields
from attend.spec import schema
from attend.spec.reader import read_sensor

SRC = Path(__file__).resolve().parents[2] / "src" / "attend"

#: Schema fields a record keeps under another name, or that another record holds.
RENAMED = {("trigger", "for"): "hold", ("trigger", "match"): "where"}
#: Record attributes derived from a schema field rather than being one.
DERIVED = {"crate_timeout"}


def _names(record: type) -> set[str]:
    return {f.name for f in fields(record)}


@pytest.mark.parametrize(("block", "table", "records"), [
    ("sensor", schema.SENSOR_SCHEMA, (ir.Sensor,)),
    ("command", schema.COMMAND_SCHEMA, (ir.CommandBlock,)),
    ("mcp", schema.MCP_SCHEMA, (ir.McpBlock,)),
    ("digest", schema.DIGEST_SCHEMA, (ir.DigestBlock,)),
    ("flap", schema.FLAP_SCHEMA, (ir.Flap,)),
    ("trigger", schema.TRIGGER_SCHEMA, (ir.Trigger, ir.SensorTrigger)),
])
def test_every_schema_field_has_its_attribute_in_the_record_and_every_attribute_its_field(block, table, records) -> None:
    attributes = set().union(*(_names(r) for r in records))
    missing = [f for f in table if RENAMED.get((block, f), f) not in attributes]
    assert not missing, f"{block}: the schema's {missing} have no attribute in {[r.__name__ for r in records]}"
    if block != "trigger":  # ir.Trigger also holds what the grammar parsed (span, name)
        extra = attributes - set(table) - DERIVED
        assert not extra, f"{block}: {sorted(extra)} are in the record but not in the schema (spec/schema.py)"


#: A value other than the default for each top-level field, as the normaliser leaves it (durations in seconds).
SET = {
    "spec": 1, "name": "s", "description": "d", "kind": "command", "enabled": False, "source": "git", "version": "2",
    "interval": 5.0, "min_interval": 1.0, "decay_threshold": 7, "wake_on": ["a"], "threshold": 9.0,
    "lane": "message", "scope": "session", "lane_exception": "ADR-1", "requires": ["Bash(git:*)"],
    "flap": {"limit": 2, "window": 60.0}, "digest": {"over": 3, "description": "{count}"},
    "triggers": {"t": {"on": "added", "supersedes": ["u"], "enabled": False}},
    "command": {"argv": ["x"], "output": "stream", "cursor": "c"}, "mcp": {"server": "m", "tool": "t"},
    "crate": {"field": 1},
}


@pytest.mark.parametrize("field", list(schema.SENSOR_SCHEMA))
def test_the_reader_reads_every_field_of_the_document(field) -> None:
    assert set(SET) == set(schema.SENSOR_SCHEMA), "give SET a value for each schema field"
    unset = read_sensor({})
    read = read_sensor({field: SET[field]})
    assert getattr(read, field) != getattr(unset, field), f"read_sensor leaves `{field}` at its default"


def test_the_reader_fills_the_schemas_defaults_and_a_value_of_the_wrong_type_reads_as_its_default() -> None:
    empty = read_sensor({})
    assert (empty.interval, empty.decay_threshold, empty.threshold, empty.lane, empty.scope) == (
        schema.DEFAULT_INTERVAL, 3, 2.0, "event", "project")
    wrong = read_sensor({"interval": "soon", "triggers": ["t"], "command": {"argv": "x", "timeout": True}})
    assert (wrong.interval, wrong.triggers, wrong.command.argv, wrong.command.timeout) == (
        schema.DEFAULT_INTERVAL, (), (), schema.DEFAULT_COMMAND_TIMEOUT)


#: Modules outside spec/ that read the document as written, and why (each says so where it does).
DOCUMENT_READERS = {
    "commands/explain.py": "explain's field rows show the document as written",
    "compiler/check.py": "compile --check refuses a document for its size before compiling it",
    "runtime/daemon.py": "a sensor's fingerprint is its whole document: any change to it reloads the sensor",
    "settings/edits.py": "an edit is checked as a document",
    "settings/resolve.py": "settings shows and edits the document by key path",
}

#: The names a merged sensor goes by: `<name>.data` is its document.
SENSOR_NAMES = ("sensor", "loaded", "merged", "s")


def _document_reads(path: Path) -> list[int]:
    """Lines where `<x>.data` is read as a mapping (`.data.get(...)`, `.data[...]`, `.data.items()` and the like),
    or a sensor's document is handed on (`sensor.data`, `compiled.sensor.data`) for another function to read."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in ("get", "items", "keys", "values")) or isinstance(
                node, ast.Subscript):
            inner = node.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            base = node.value
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            if name in SENSOR_NAMES:
                out.append(node.lineno)
            continue
        else:
            continue
        if isinstance(inner, ast.Attribute) and inner.attr == "data":
            out.append(node.lineno)
    return sorted(set(out))


def test_no_module_outside_spec_reads_a_sensor_field_from_the_document() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith("spec/") or relative in DOCUMENT_READERS:
            continue
        found += [f"src/attend/{relative}:{line}" for line in _document_reads(path)]
    assert not found, ("read the sensor's fields from its typed record (`MergedSensor.ir`, spec/reader.py), "
                       f"not from `.data`: {found}")


def test_each_document_reader_still_reads_the_document() -> None:
    for relative in DOCUMENT_READERS:
        assert _document_reads(SRC / relative), f"{relative} no longer reads `.data`: take it off DOCUMENT_READERS"
