"""Round-trip editing: one key changes, every other byte of the file stays (attend.settings.document)."""

import pytest

from attend.settings.document import DocumentError, EditableDocument, PathIntoScalar, WouldNotReadBack

COMMENTED = """\
spec: 1   # the version
name: weather
# how often it polls
interval: 5m
triggers:
  high-wind:
    on: enters   # a transition
    where:
      wind_speed_*: {above: 40}
    magnitude: 3.0
    description: "wind {wind_speed_10m} km/h"
requires:
  - "Bash(curl:*)"
"""


def test_an_untouched_document_comes_back_byte_for_byte():
    assert EditableDocument(COMMENTED).text() == COMMENTED


def test_changing_one_value_keeps_comments_order_quoting_and_indentation():
    doc = EditableDocument(COMMENTED)
    doc.set(("interval",), "30s")
    assert doc.text() == COMMENTED.replace("interval: 5m", "interval: 30s")


def test_a_key_added_inside_a_flow_mapping_stays_in_that_mapping():
    doc = EditableDocument(COMMENTED)
    doc.set(("triggers", "high-wind", "where", "wind_speed_*", "below"), 90)
    assert "wind_speed_*: {above: 40, below: 90}" in doc.text()
    assert doc.text().replace(", below: 90", "") == COMMENTED


def test_a_new_nested_key_creates_its_parents_at_the_end():
    doc = EditableDocument("interval: 5m  # keep\n")
    doc.set(("triggers", "t", "magnitude"), 2.5)
    assert doc.text() == "interval: 5m  # keep\ntriggers:\n  t:\n    magnitude: 2.5\n"


def test_four_space_files_keep_their_indentation():
    text = "triggers:\n    t:\n        on: changed\n        magnitude: 1\n"
    doc = EditableDocument(text)
    doc.set(("triggers", "t", "magnitude"), 2)
    assert doc.text() == text.replace("magnitude: 1", "magnitude: 2")


def test_a_string_the_loader_would_read_as_another_type_is_quoted():
    doc = EditableDocument("")
    doc.set(("description",), "true")
    doc.set(("lane",), "event")
    assert doc.text() == "description: 'true'\nlane: event\n"
    assert doc.plain() == {"description": "true", "lane": "event"}


def test_on_and_yes_stay_strings_as_the_yaml_1_2_loader_reads_them():
    doc = EditableDocument("")
    doc.set(("triggers", "t", "on"), "changed")
    doc.set(("note",), "yes")
    assert doc.plain() == {"triggers": {"t": {"on": "changed"}}, "note": "yes"}


def test_flow_values_are_written_inline_when_asked():
    doc = EditableDocument("")
    doc.set(("where",), {"a": {"above": 1}}, flow=True)
    assert doc.text() == "where: {a: {above: 1}}\n"


def test_deleting_a_key_removes_the_parents_it_leaves_empty():
    doc = EditableDocument("a: 1\ntriggers:\n  t:\n    where:\n      x: 1\n")
    assert doc.delete(("triggers", "t", "where", "x"))
    assert doc.text() == "a: 1\n"


def test_deleting_a_key_that_is_not_there_reports_false_and_changes_nothing():
    doc = EditableDocument(COMMENTED)
    assert not doc.delete(("triggers", "nope", "magnitude"))
    assert not doc.delete(("interval", "deeper"))
    assert doc.text() == COMMENTED


def test_a_document_left_empty_says_so():
    doc = EditableDocument("interval: 5m\n")
    doc.delete(("interval",))
    assert doc.is_empty()


def test_a_key_path_through_a_scalar_is_refused():
    doc = EditableDocument(COMMENTED)
    with pytest.raises(PathIntoScalar):
        doc.set(("interval", "deeper"), 1)
    assert doc.text() == COMMENTED


def test_a_comment_only_file_keeps_its_comment_above_new_keys():
    doc = EditableDocument("# my overrides\n")
    doc.set(("interval",), "5s")
    assert doc.text() == "# my overrides\ninterval: 5s\n"


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "a: [1,\n"])
def test_a_document_that_is_not_a_mapping_cannot_be_edited(text):
    with pytest.raises(DocumentError):
        EditableDocument(text)


@pytest.mark.parametrize(
    ("text", "kind"), [("- a\n- b\n", "a list"), ("just a string\n", "a string"), ("42\n", "a number")]
)
def test_a_document_that_is_not_a_mapping_is_named_in_yaml_words_not_python_class_names(text, kind):
    with pytest.raises(DocumentError) as caught:
        EditableDocument(text)
    assert str(caught.value) == f"the document is {kind}, not a mapping"


def test_a_key_path_through_a_list_names_it_a_list():
    doc = EditableDocument("requires:\n  - a\n")
    with pytest.raises(PathIntoScalar) as caught:
        doc.set(("requires", "x"), 1)
    assert str(caught.value) == "requires holds a list, not a mapping"


def test_an_edit_the_loader_would_not_read_back_as_the_value_is_refused():
    # `.nan` is what the writer emits for NaN, and the loader refuses it: the edit must not be written.
    doc = EditableDocument(COMMENTED)
    with pytest.raises(WouldNotReadBack, match=r"interval: the file as written would not read back"):
        doc.set(("interval",), float("nan"))


def test_a_refused_read_back_is_exit_3_with_its_reason(capsys):
    from attend.commands.settings import run_refusable

    doc = EditableDocument(COMMENTED)
    assert run_refusable(lambda: doc.set(("interval",), float("nan"))) == 3
    assert "would not read back" in capsys.readouterr().err


def test_a_key_that_breaks_a_flow_mapping_when_plain_is_written_quoted():
    doc = EditableDocument("spec: 1\nwhere: {a: 1}\n")
    doc.set(("where", ":0"), None)
    assert doc.text() == "spec: 1\nwhere: {a: 1, ':0': null}\n"
