"""Hostile poll data through the public API (issue 16): each class of input the hostile-input campaign
found escaping as an exception now gives a result, a recorded `malformed` reason, or a syntax error.

Property tests draw random JSON with the hostile values mixed in (lone surrogates, NaN, integers past
Python's conversion limit, deep nesting, non-ASCII digits, mixed-type keys) and accept only those
outcomes; they are derandomized in CI like every property test here.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attend
from attend.bounds import DATA_BYTES_PER_VALUE, MAX_DATA_DEPTH, MAX_DESCRIPTION_CHARS
from attend.compiler import ops
from attend.compiler.results import MalformedResult, admit, read_json
from property_examples import examples


def _nested(depth: int, leaf: Any = None) -> Any:
    """A list nested `depth` deep, built without recursion."""
    node: Any = leaf
    for _ in range(depth):
        node = [node]
    return node


# ------------------------------------------------------------------------------- 0: lone surrogates

def test_a_lone_surrogate_in_output_text_is_replaced_with_u_fffd_in_values_and_keys() -> None:
    got = read_json('{"who": "\\ud800x", "\\udc00k": ["\\ud834\\udd1e", "ok"]}')
    assert got == {"who": "\ufffdx", "\ufffdk": ["\U0001d11e", "ok"]}
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # now encodable: the store and stdout can take it
    assert admit({"a": ["\udfff"]}) == {"a": ["\ufffd"]}


# ------------------------------------------------------------------------------------ 1: deep nesting

@pytest.mark.parametrize("depth", [MAX_DATA_DEPTH + 1, 10_000])
def test_a_result_nested_past_the_bound_is_malformed_never_a_recursion_error(depth: int) -> None:
    with pytest.raises(MalformedResult, match="nested deeper than"):
        read_json("[" * depth + "]" * depth)
    with pytest.raises(MalformedResult, match="nested deeper than"):
        admit(_nested(depth))
    assert read_json("[" * MAX_DATA_DEPTH + "]" * MAX_DATA_DEPTH) == _nested(MAX_DATA_DEPTH - 1, [])


def test_descendant_paths_walk_a_document_deeper_than_the_recursion_limit() -> None:
    doc = _nested(5000, {"name": "deep"})
    assert attend.compile_path("$..name")(doc) == ["deep"]
    assert len(attend.compile_path("$..[0]")(doc)) == 5000


def test_rendering_a_deep_value_is_bounded_and_never_recurses() -> None:
    text = ops.render_value(_nested(10_000))
    assert len(text) == MAX_DESCRIPTION_CHARS and text.startswith("[[[[") and text.endswith("…")


# ----------------------------------------------------------------------------------- 2: huge numbers

def test_nan_infinity_and_integers_past_the_limit_make_a_result_malformed() -> None:
    for text in ("NaN", '{"a": [Infinity]}', "-Infinity", "1" * 5000):
        with pytest.raises(MalformedResult):
            read_json(text)
    for value in (math.nan, [math.inf], {"n": 10**5000}):
        with pytest.raises(MalformedResult):
            admit(value)
    big = int("9" * 4000)
    assert read_json(str(big)) == big  # long but within the limit: kept exactly


def test_a_number_past_float_range_makes_a_result_malformed_however_small_the_document() -> None:
    # json.loads reads `1e999` as inf; only a document deep enough to be walked used to refuse it.
    for text in ("[1e999]", '{"a": -1e999}', "9" * 400 + ".5"):
        with pytest.raises(MalformedResult, match="past a float's range"):
            read_json(text)
    assert read_json("[1e308, 2.5e-400]") == [1e308, 0.0]


# ------------------------------------------------------------- 2b: values per byte of the output cap

def test_an_output_with_more_values_than_its_cap_allows_is_malformed_naming_the_cap() -> None:
    cap = 50 * DATA_BYTES_PER_VALUE  # 50 values and keys
    text = "[" + ",".join(["{}"] * 30) + "]"  # 1 + [ + 30 { + 29 , = 61 counted (31 values, 30 of them empty)
    assert len(text) < cap
    with pytest.raises(MalformedResult, match=f"holds 61 JSON values and keys: a max_output of {cap:,} bytes reads "
                                              f"at most 50 \\(one per {DATA_BYTES_PER_VALUE} bytes"):
        read_json(text, cap=cap)
    assert len(read_json("[" + ",".join(["{}"] * 20) + "]", cap=cap)) == 20
    assert len(read_json(text)) == 30  # no cap (a store row, a peers file): no count


@pytest.mark.parametrize("text", [
    '{"log": "' + "a,b:[c{d," * 100 + '"}',
    '["' + '\\",:[{' * 100 + '"]',  # an escaped quote inside a string does not end it
    '["' + "\\\\" * 50 + '", "' + ",:" * 100 + '"]',  # nor does an escaped backslash start one
])
def test_punctuation_inside_strings_does_not_count_against_the_cap(text: str) -> None:
    assert read_json(text, cap=10 * DATA_BYTES_PER_VALUE) == json.loads(text)


def test_a_5000_digit_index_in_a_path_or_a_template_field_is_an_error_or_missing_never_a_crash() -> None:
    with pytest.raises(attend.PathSyntaxError, match="out of range"):
        attend.compile_path("$[" + "1" * 5000 + "]")
    assert ops.get_dotted([1, 2], ("9" * 5000,)) is ops.MISSING


# ---------------------------------------------------------------------------------- 3: unicode digits

@pytest.mark.parametrize("part", ["²", "٣", "-٣", "1²"])
def test_a_non_ascii_digit_in_a_dotted_key_is_a_mapping_key_not_a_list_index(part: str) -> None:
    assert ops.get_dotted({"tags": [1, 2, 3]}, ("tags", part)) is ops.MISSING
    assert ops.get_dotted({"tags": {part: "x"}}, ("tags", part)) == "x"
    trigger = attend.compile_trigger({"path": "$[*]", "key": f"tags.{part}", "on": "added", "initial": "fire"})
    evaluation = trigger.evaluate(None, [{"tags": [1, 2, 3]}, {"tags": {part: "k"}}])
    assert [f.key for f in evaluation.fires] == ["k"]
    assert ops.get_dotted({"tags": [1, 2, 3]}, ("tags", "-1")) == 3


# ------------------------------------------------------------------------------------ 7: slow templates

def test_a_description_over_a_huge_item_is_cut_to_the_bound() -> None:
    template = " ".join(["{value}"] * 64)
    trigger = attend.compile_trigger({"path": "$", "on": "changed", "description": template, "initial": "fire"})
    big = {"blob": "x" * (1 << 20), "list": list(range(100_000))}
    (fire,) = trigger.step(None, big)[0]
    assert len(fire.description) == MAX_DESCRIPTION_CHARS and fire.description.endswith("…")


# ------------------------------------------------------------------------------- everything at once

HOSTILE_SCALARS = st.one_of(
    st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=8), st.sampled_from(["\ud800", "x\udfffy", "²", "٣", "1", "-0", "\x1f1"]),
    st.builds(lambda: 10**5000),
)
JSON = st.recursive(
    HOSTILE_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["id", "a", "²", "\ud800", "1"]), inner, max_size=4),
    max_leaves=20,
)
PATHS = st.sampled_from(["$", "$[*]", "$..*", "$..id", "$..[0]", "$.a[*]", "$[*].a", "$..['\\u00e9']"])
KEYS = st.sampled_from(["id", "a.id", "id.0", "a.²", "a.1"])


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON, PATHS, KEYS, st.sampled_from(["added", "removed", "changed", "enters", "leaves"]),
       st.integers(0, 3))
def test_random_hostile_data_gives_a_result_or_a_malformed_reason_never_another_exception(
    doc: Any, path: str, key: str, on: str, wrap: int
) -> None:
    doc = _nested(wrap * (MAX_DATA_DEPTH // 2), doc)  # sometimes past the depth bound
    try:
        admitted = admit(doc)
    except MalformedResult:
        return
    text = json.dumps(admitted, ensure_ascii=False)
    text.encode("utf-8")  # what the store and stdout need
    assert read_json(text) == admitted
    attend.compile_path(path)(admitted)
    definition = {"path": path, "key": key, "on": on, "where": {"id": {"not": None}}, "initial": "fire",
                  "description": "{key} {value} {previous} {id} {a.²}"}
    if on in ("added", "removed", "changed"):
        definition.pop("where")
    trigger = attend.compile_trigger(definition)
    fires, state = trigger.step(None, admitted, now=0)
    for fire in fires:
        fire.description.encode("utf-8")
        assert len(fire.description) <= MAX_DESCRIPTION_CHARS
    state = json.loads(json.dumps(state))
    trigger.step(state, admitted, now=1)


def _values_and_keys(doc: Any) -> int:
    """What the value cap counts, from the parsed document: values and keys, and one more per empty list or
    mapping (the text's `[`/`{` and the `,`/`:` between its members)."""
    count, stack = 0, [doc]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            count += len(node) + (not node)
            stack.extend(node.values())
        elif isinstance(node, list):
            count += not node
            stack.extend(node)
    return count


TEXTS = st.text(st.sampled_from(['"', "\\", ",", ":", "[", "{", "a", "é", "\n", "\U0001f600"]), max_size=12)
DOCS = st.recursive(st.none() | st.integers() | TEXTS,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4), max_leaves=25)


@settings(max_examples=examples(300), deadline=None)
@given(DOCS, st.booleans(), st.booleans())
def test_the_value_cap_counts_values_and_keys_exactly_whatever_the_strings_hold(doc: Any, spaced: bool,
                                                                                ascii_only: bool) -> None:
    text = json.dumps(doc, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":"))
    values = _values_and_keys(doc)
    assert read_json(text, cap=values * DATA_BYTES_PER_VALUE) == doc
    if values > 1:
        with pytest.raises(MalformedResult, match=f"holds {values:,} JSON values and keys"):
            read_json(text, cap=(values - 1) * DATA_BYTES_PER_VALUE)
