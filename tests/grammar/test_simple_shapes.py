"""The lark-free readers of the plain expression shapes build exactly what the grammar builds.

`attend.grammar.simple` reads `$.items[*]`, `wind_*` and `item {id}` without lark (start-up and
large-file speed); lark stays the authority. Every expression here goes through both, and the two IR
trees must agree field by field, spans included (IR equality ignores spans, so they are walked here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from attend.errors import AttendSyntaxError, PathSyntaxError, Span
from attend.grammar import expressions
from attend.grammar.simple import READERS
from attend.records import fields
from property_examples import examples

HERE = Path(__file__).parent
ERRORS = {"path": (PathSyntaxError, "path-syntax"), "template": (AttendSyntaxError, "template-syntax"),
          "property": (AttendSyntaxError, "pattern-syntax")}
BASES = [None, Span("f.yaml", 7, 11, 120)]


def _with_spans(node: Any) -> Any:
    """`node` as nested plain values, every span included."""
    if hasattr(type(node), "__record_fields__"):
        return (type(node).__name__, {f.name: _with_spans(getattr(node, f.name)) for f in fields(node)})
    if isinstance(node, tuple):
        return tuple(_with_spans(n) for n in node)
    return node


def _by_lark(text: str, start: str, base: Span | None) -> Any:
    error, code = ERRORS[start]
    try:
        return _with_spans(expressions._parse_with_lark(text, start, base, error, code))
    except AttendSyntaxError:
        return "error"


def _agree(text: str, start: str) -> bool:
    """True when the simple reader took `text`; fails when it read it differently from lark."""
    took = False
    for base in BASES:
        simple = READERS[start](text, base)
        if simple is None:
            continue
        took = True
        assert _with_spans(simple) == _by_lark(text, start, base), (start, text, base)
    return took


def _case_texts(name: str) -> list[str]:
    cases = yaml.safe_load((HERE / name).read_text())
    return [c["expr"] if isinstance(c, dict) else c for c in (cases if isinstance(cases, list) else cases.get("cases", []))
            if isinstance(c, str) or (isinstance(c, dict) and isinstance(c.get("expr"), str))]


PLAIN = {
    "path": ["$", "$.items", "$.items[*]", "$.a.b.c", "$[0]", "$[-3].x", "$.*", "$.a.*[2]", "$.é-x_1[10]",
             "$.items[*].labels[*].name", "$['a']", "$..a", "$.a[ 1]", "$.1a", "$[01]", "$.a-", "$x"],
    "property": ["a", "wind_speed_*", "author.login", "tags.[ab]*", "a?b.c*", "é.ü", "a..b", ".a", "a b", "$x.{y}"],
    "template": ["", "plain", "new item {id}: {title}", "{id}", "{a.b.c} end", "{value}", "{key}", "{previous.state}",
                 "{value.x}", "{{literal}}", "{id}}", "x {a}{b} y", "{ id }", "{}", "line\nbreak {x}", "{a.}"],
}


@pytest.mark.parametrize("start", sorted(PLAIN))
def test_the_simple_reader_agrees_with_lark_on_plain_and_tricky_expressions(start: str) -> None:
    took = [text for text in PLAIN[start] if _agree(text, start)]
    assert len(took) >= 4, took  # the readers do take the plain shapes


@pytest.mark.parametrize(("start", "file"), [("path", "path_cases.yaml"), ("property", "property_cases.yaml"),
                                             ("template", "template_cases.yaml")])
def test_the_simple_reader_agrees_with_lark_on_every_grammar_case_file(start: str, file: str) -> None:
    for text in _case_texts(file):
        _agree(text, start)


def test_a_name_holding_a_surrogate_is_left_to_lark_which_refuses_it() -> None:
    for text in ("$.a\ud800b", "$.\udfff", "$.ok.b\udc00[0]", "$.é\ud83d"):
        assert READERS["path"](text, None) is None, text
        assert _by_lark(text, "path", None) == "error", text
    assert READERS["path"]("$.é\U0001f600", None) is not None  # a character past the BMP is a NAME character


ALPHABET = {"path": "$.[]*'\"a1-0é_ \\\ud800", "property": "a.*?[]!b é\t_", "template": "{}a. b\né_"}


@pytest.mark.parametrize("start", sorted(ALPHABET))
@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_the_simple_reader_agrees_with_lark_on_random_text(start: str, data: st.DataObject) -> None:
    text = data.draw(st.text(alphabet=ALPHABET[start], max_size=14))
    if start == "path" and data.draw(st.booleans()):
        text = "$" + text
    _agree(text, start)
