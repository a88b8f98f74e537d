"""The data-driven edit cases of data/edits.yaml: one edit, and the exact file text after it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from attend.settings.document import EditableDocument
from attend.spec.loading import parse_yaml

DATA = Path(__file__).parent / "data"

CASES = yaml.safe_load((DATA / "edits.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_an_edit_changes_only_what_it_names(case):
    doc = EditableDocument(case["before"])
    if "set" in case:
        value_text = str(case["value"])
        doc.set(tuple(case["set"]), parse_yaml(value_text, "VALUE").data, flow=value_text.startswith(("{", "[")))
    else:
        assert doc.delete(tuple(case["unset"]))
    assert doc.text() == case["after"]
