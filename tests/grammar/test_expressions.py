"""Path, template and property parsing: canonical forms and positioned, friendly errors (data files beside)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from attend import PathSyntaxError, ir
from attend.errors import AttendSyntaxError, Span
from attend.grammar import parse_path, parse_property, parse_template

HERE = Path(__file__).parent
PATHS = yaml.safe_load((HERE / "path_cases.yaml").read_text())
TEMPLATES = yaml.safe_load((HERE / "template_cases.yaml").read_text())
PROPERTIES = yaml.safe_load((HERE / "property_cases.yaml").read_text())


@pytest.mark.parametrize("case", PATHS["valid"], ids=lambda c: c["expr"])
def test_a_valid_path_parses_to_its_canonical_form_and_round_trips(case: dict) -> None:
    path = parse_path(case["expr"])
    assert str(path) == case["canonical"]
    assert parse_path(str(path)) == path


@pytest.mark.parametrize("case", PATHS["invalid"], ids=lambda c: c["expr"] or "empty")
def test_an_invalid_path_names_what_was_expected_and_the_column(case: dict) -> None:
    with pytest.raises(PathSyntaxError) as info:
        parse_path(case["expr"])
    assert info.value.column == case["column"]
    assert case["message"] in info.value.message
    assert info.value.code == "path-syntax"


@pytest.mark.parametrize("case", TEMPLATES["valid"], ids=lambda c: c["text"] or "empty")
def test_a_template_parses_into_literal_and_field_parts(case: dict) -> None:
    template = parse_template(case["text"])
    shown = [("L:" + p.text) if isinstance(p, ir.Literal_) else ("F:" + str(p)) for p in template.parts]
    assert shown == case["parts"]
    assert parse_template(str(template)) == template


@pytest.mark.parametrize("case", TEMPLATES["invalid"], ids=lambda c: c["text"])
def test_an_invalid_template_says_what_is_wrong_and_where(case: dict) -> None:
    with pytest.raises(AttendSyntaxError) as info:
        parse_template(case["text"])
    assert (info.value.column, info.value.code) == (case["column"], "template-syntax")
    assert case["message"] in info.value.message


@pytest.mark.parametrize("case", PROPERTIES["valid"], ids=lambda c: c["text"])
def test_a_property_pattern_splits_into_parts_marking_globs(case: dict) -> None:
    prop = parse_property(case["text"])
    assert list(prop.parts) == case["parts"]
    assert list(prop.globbed) == case["globbed"]
    assert str(prop) == case["text"]


@pytest.mark.parametrize("case", PROPERTIES["invalid"], ids=lambda c: c["text"])
def test_an_invalid_property_pattern_is_a_positioned_pattern_error(case: dict) -> None:
    with pytest.raises(AttendSyntaxError) as info:
        parse_property(case["text"])
    assert (info.value.column, info.value.code) == (case["column"], "pattern-syntax")
    assert case["message"] in info.value.message


def test_field_references_know_their_root() -> None:
    parts = parse_template("{a.b}{value}{key}{previous.c}").parts
    assert [(p.root, p.fields) for p in parts] == [
        ("item", ("a", "b")), ("value", ()), ("key", ()), ("previous", ("c",))
    ]


def test_a_path_error_with_a_span_points_into_the_file() -> None:
    with pytest.raises(PathSyntaxError) as info:
        parse_path("$.a b", Span("s.yaml", 7, 11))
    err = info.value
    assert (err.file, err.line, err.col, err.offset) == ("s.yaml", 7, 15, 4)
    assert str(err) == "s.yaml:7:15: error: [path-syntax] unexpected 'b' in the path; expected '.', '..' or '['"


def test_spans_of_parsed_nodes_stay_outside_equality() -> None:
    a, b = parse_path("$.x"), parse_path("$['x']")
    assert a == b and hash(a) == hash(b)
    assert a.segments[0].span is not None and a.segments[0].span.col == 2
    assert b.segments[0].span.col == 2


def test_a_non_string_path_is_a_path_error_not_a_crash() -> None:
    with pytest.raises(PathSyntaxError):
        parse_path(42)  # type: ignore[arg-type]
