"""compile_path agrees with python-jsonpath (an independent RFC 9535 implementation) on the subset.

Random documents and random paths of attend's subset (`.name`, `['name']`, `[n]` incl. negative, `[*]`,
`.*`, `..name`, `..*`). Results are compared exactly, order included: both put a node before its
descendants and follow member order. Names are drawn from a small alphabet so paths often hit.
"""

from __future__ import annotations

import json

import jsonpath
from hypothesis import given, settings
from hypothesis import strategies as st

import attend
from property_examples import examples

NAMES = st.sampled_from(["a", "b", "c", "x-y", "odd key", "é"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", "s", "a"]))
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(NAMES, children, max_size=4)),
    max_leaves=25,
)


def _name_segment(name: str, bracket: bool) -> str:
    if bracket or not name.replace("-", "").replace("_", "").isalnum() or not name[0].isalpha():
        return "['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return "." + name


SEGMENTS = st.one_of(
    st.builds(_name_segment, NAMES, st.booleans()),
    st.integers(-4, 4).map(lambda i: f"[{i}]"),
    st.sampled_from(["[*]", ".*", "..*"]),
    NAMES.filter(lambda n: n.isalpha()).map(lambda n: ".." + n),
)
PATHS = st.lists(SEGMENTS, max_size=4).map(lambda segments: "$" + "".join(segments))


def _canonical(values: list) -> str:
    return json.dumps(values, sort_keys=False)


@settings(max_examples=examples(400), deadline=None)
@given(DOCUMENTS, PATHS)
def test_compile_path_selects_what_python_jsonpath_selects(doc: object, path: str) -> None:
    ours = attend.compile_path(path)(doc)
    theirs = jsonpath.findall(path, doc)
    assert _canonical(ours) == _canonical(theirs), path


@settings(max_examples=examples(200), deadline=None)
@given(PATHS)
def test_every_generated_path_round_trips_through_its_canonical_form(path: str) -> None:
    from attend.grammar import parse_path

    parsed = parse_path(path)
    assert parse_path(str(parsed)) == parsed
