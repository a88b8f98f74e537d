"""compile_path, where conditions and templates, driven by the data files beside this test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import attend
from attend.compiler import ops
from attend.compiler.conditions import compile_where
from attend.compiler.templates import compile_template
from attend.grammar import parse_template, parse_trigger

HERE = Path(__file__).parent
SELECTION = yaml.safe_load((HERE / "path_selection.yaml").read_text())
CONDITIONS = yaml.safe_load((HERE / "condition_cases.yaml").read_text())
RENDERS = yaml.safe_load((HERE / "template_render_cases.yaml").read_text())


@pytest.mark.parametrize("case", SELECTION["cases"], ids=lambda c: c["path"])
def test_compile_path_selects_values_in_document_order(case: dict) -> None:
    select = attend.compile_path(case["path"])
    assert select(SELECTION["documents"][case["doc"]]) == case["expect"]


def test_compile_path_returns_a_fresh_list_that_callers_may_change() -> None:
    doc = {"items": [1, 2]}
    selected = attend.compile_path("$.items[*]")(doc)
    selected.append(3)
    assert doc == {"items": [1, 2]}


def test_compile_path_raises_path_syntax_error_with_the_column() -> None:
    with pytest.raises(attend.PathSyntaxError) as info:
        attend.compile_path("$.items[*")
    assert info.value.column == 10


def _where(case: dict) -> Any:
    trigger = parse_trigger({"on": "enters", "where": case["where"], "match": case.get("match", "all")})
    return compile_where(trigger.where)


def _ids(case: dict) -> str:
    return yaml.safe_dump(case["where"], default_flow_style=True).strip() + (" any" if case.get("match") else "")


@pytest.mark.parametrize("case", CONDITIONS, ids=_ids)
def test_where_holds_exactly_for_the_matching_items(case: dict) -> None:
    pred = _where(case)
    for item in case["holds"]:
        warnings: list[str] = []
        assert pred(item, warnings.append), item
        assert warnings == []
    for item in case["fails"]:
        warnings = []
        assert not pred(item, warnings.append), item
        assert warnings == [], item
    for item in case.get("warns", []):
        warnings = []
        assert not pred(item, warnings.append), item
        assert len(warnings) == 1 and "is not a number" in warnings[0]


@pytest.mark.parametrize("case", RENDERS, ids=lambda c: c["template"])
def test_a_template_renders_fields_and_warns_for_missing_ones(case: dict) -> None:
    render = compile_template(parse_template(case["template"]))
    warnings: list[str] = []
    previous = case.get("previous", ops.MISSING)
    assert render(case["item"], case.get("key"), previous, warnings.append) == case["expect"]
    assert len(warnings) == case.get("warns", 0)


def test_a_catastrophic_regex_times_out_as_no_match_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ops, "REGEX_TIMEOUT", 0.05)
    pred = _where({"where": {"s": {"matches": "^(a|aa)+$"}}})
    warnings: list[str] = []
    assert not pred({"s": "a" * 35 + "!"}, warnings.append)
    assert len(warnings) == 1 and "timed out" in warnings[0]


@pytest.mark.parametrize(
    ("pattern", "guarded"),
    [
        (r"^(fix|feat)\b", False),
        (r"a*b", False),
        (r"[*+]+x", False),
        (r"\*\*", False),
        (r"x{2,5}", False),
        (r"^(a|aa)+$", True),
        (r"(a+)+", True),
        (r".*x.*", True),
        (r"x{2,}y{3,}", True),
        (r"(\w)\1", True),
        (r"(?P<n>a)(?P=n)", True),
    ],
)
def test_only_patterns_that_cannot_backtrack_catastrophically_skip_the_timeout(pattern: str, guarded: bool) -> None:
    assert ops.regex_needs_timeout(pattern) is guarded
