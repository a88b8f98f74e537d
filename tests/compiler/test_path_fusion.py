"""Fused path closures (compiler/jsonpath.py): one loop nest per run of child segments, RFC 9535 exactly."""

from __future__ import annotations

import jsonpath
from hypothesis import given, settings
from hypothesis import strategies as st

import attend
from attend.compiler.jsonpath import FUSED_RUN_LIMIT, path_stages
from attend.grammar import parse_path
from property_examples import examples


def _stages(expr: str) -> list[tuple[str, str]]:
    return [(kind, "".join(str(s) for s in run)) for kind, run in path_stages(parse_path(expr))]


def test_a_path_without_descendants_is_one_fused_stage_and_the_common_shapes_keep_theirs() -> None:
    assert _stages("$.items[*].meta.owner.id") == [("fused", ".items[*].meta.owner.id")]
    assert _stages("$.items[*]") == [("walk", ".items"), ("copy", "[*]")]
    assert _stages("$.a[0].b") == [("walk", ".a[0].b")]
    assert _stages("$.a..b[*].c") == [("walk", ".a"), ("descendant", "..b"), ("fused", "[*].c")]
    assert _stages("$") == []


def test_fused_selection_keeps_order_and_skips_missing_members_and_non_containers() -> None:
    doc = {"items": [
        {"meta": {"owner": {"id": 1}}},
        {"meta": {"owner": {}}},  # missing member: skipped
        {"meta": [{"owner": {"id": "no"}}]},  # a list where a mapping is needed: skipped
        "text",  # not a container: skipped
        {"meta": {"owner": {"id": None}}},  # null is a value, kept
        {"meta": {"owner": {"id": 2}}},
    ]}
    assert attend.compile_path("$.items[*].meta.owner.id")(doc) == [1, None, 2]
    assert attend.compile_path("$.items[*].meta.*")({"items": {"x": {"meta": {"b": 1, "a": 2}}, "y": 3}}) == [1, 2]
    assert attend.compile_path("$[*][-1][0]")([[[1], [2, 3]], [], [[4]], {"k": [[5]]}, ["xy"]]) == [2, 4]
    # A string is not a list to index nor a mapping to look a name up in, and a list has no names.
    assert attend.compile_path("$[*].a.b")([{"a": "text"}, {"a": ["b"]}, {"a": {"b": 0}}, None, 1.5]) == [0]


def test_member_names_with_quotes_and_backslashes_are_data_not_code() -> None:
    name = "a'\"\\n); import os; ('"
    expr = "$[*]['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']"
    assert attend.compile_path(expr)([{name: 1}, {"a": 2}]) == [1]


def test_a_run_longer_than_one_loop_nest_is_split_and_selects_the_same() -> None:
    depth = FUSED_RUN_LIMIT * 2 + 3
    expr = "$" + "[*]" * depth
    doc: object = 7
    for level in range(depth):
        doc = [doc, "leaf"] if level % 2 else {"k": doc}
    assert [kind for kind, _ in _stages(expr)] == ["fused", "fused", "fused"]
    assert attend.compile_path(expr)(doc) == jsonpath.compile(expr).findall(doc)
    assert 7 in attend.compile_path(expr)(doc)


NAMES = st.sampled_from(["a", "b", "c"])
DOCS = st.recursive(st.integers(0, 3), lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                              st.dictionaries(NAMES, kids, max_size=3)), max_leaves=30)
CHILD = st.one_of(NAMES.map(lambda n: "." + n), st.integers(-2, 2).map(lambda i: f"[{i}]"), st.just("[*]"))
LONG_PATHS = st.lists(st.one_of(CHILD, CHILD, NAMES.map(lambda n: ".." + n)), min_size=2, max_size=20).map(
    lambda segments: "$" + "".join(segments))


@settings(max_examples=examples(300), deadline=None)
@given(DOCS, LONG_PATHS)
def test_long_fused_paths_agree_with_python_jsonpath_in_order(doc, expr) -> None:
    assert attend.compile_path(expr)(doc) == jsonpath.compile(expr).findall(doc)
