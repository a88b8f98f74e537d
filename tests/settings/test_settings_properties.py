"""Properties: keys print and parse back; any value `set` writes is read back by the loader as itself."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from attend.settings.document import EditableDocument
from attend.settings.keys import format_key, split_segments
from attend.spec.loading import parse_yaml
from property_examples import examples

segments = st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=6)

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(
    ["on", "yes", "no", "true", "null", "~", "1.5", "0x1f", "1e3", "5m", "*glob", "a: b", "- x", "#x", "", " x "])
scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False,
                                                                                  allow_infinity=False) | texts
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4), max_leaves=12)

BASE = "spec: 1  # keep\nname: x\ntriggers:\n  t:\n    on: changed\n"


@given(segments)
def test_any_segments_survive_formatting_and_parsing(parts):
    assert split_segments(format_key(parts)) == parts


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3), values, st.booleans())
@example(path=["0"], value={":0": None}, flow=True)  # issue 14 item 15: the writer emitted `{:0: null}`
@example(path=[":0"], value=[":0", "a, b", "[x"], flow=True)
def test_any_value_set_into_a_document_reads_back_as_itself(path, value, flow):
    doc = EditableDocument(BASE)
    key = ("triggers", "t", "where", *path)
    doc.set(key, value, flow=flow)
    parsed = parse_yaml(doc.text(), "<test>")
    assert not parsed.diagnostics, doc.text()
    node = parsed.data
    for segment in key:
        node = node[segment]
    assert node == value
    assert doc.text().startswith("spec: 1  # keep\nname: x\ntriggers:\n  t:\n    on: changed\n")
