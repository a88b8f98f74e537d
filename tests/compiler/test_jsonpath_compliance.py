"""attend's paths against the whole JSONPath Compliance Test Suite (RFC 9535), vendored in tests/data/jsonpath-cts.

Every case of `cts.json` is run, none skipped:

- a selector the suite calls invalid raises `attend.PathSyntaxError`;
- a valid selector inside attend's path subset (`IN_SUBSET` below, the same forms docs/triggers.md
  lists) compiles and selects the suite's result (one of its `results` where the order is not fixed);
- a valid selector outside the subset (filters, slices, several selectors in one bracket, ...) raises
  `PathSyntaxError` whose message starts with "unsupported", and is listed in `test_the_suite_is_run_whole`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import attend

CTS = json.loads((Path(__file__).parents[1] / "data" / "jsonpath-cts" / "cts.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = CTS["tests"]

# attend's path subset, written as RFC 9535's ABNF restricted to the forms attend implements:
#   query     = "$" *(B segment)
#   segment   = "." (name / "*")  /  ".." (name / "*" / bracket)  /  bracket
#   bracket   = "[" B (string-literal / int / "*") B "]"          ; ONE selector per bracket
#   name      = RFC member-name-shorthand (ALPHA / "_" / non-ASCII first, then also DIGIT)
#   B         = *(" " / TAB / LF / CR)
# Validity of string literals and integers is the suite's call (it names the invalid ones); this
# pattern only decides which VALID selectors are inside the subset.
_B = r"[ \t\n\r]*"
_NAME = "[A-Za-z_\u0080-\ud7ff\ue000-\U0010ffff][A-Za-z0-9_\u0080-\ud7ff\ue000-\U0010ffff]*"
_STRING = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_BRACKET = rf"\[{_B}(?:{_STRING}|-?[0-9]+|\*){_B}\]"
_SEGMENT = rf"(?:\.\.(?:{_NAME}|\*|{_BRACKET})|\.(?:{_NAME}|\*)|{_BRACKET})"
IN_SUBSET = re.compile(rf"\$(?:{_B}{_SEGMENT})*", re.DOTALL)

INVALID = [c for c in CASES if c.get("invalid_selector")]
VALID = [c for c in CASES if not c.get("invalid_selector")]
SUPPORTED = [c for c in VALID if IN_SUBSET.fullmatch(c["selector"])]
UNSUPPORTED = [c for c in VALID if not IN_SUBSET.fullmatch(c["selector"])]


def _id(case: dict[str, Any]) -> str:
    return case["name"]


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_a_selector_the_suite_calls_invalid_raises_path_syntax_error(case: dict[str, Any]) -> None:
    with pytest.raises(attend.PathSyntaxError):
        attend.compile_path(case["selector"])


@pytest.mark.parametrize("case", SUPPORTED, ids=_id)
def test_a_valid_selector_inside_the_subset_selects_the_suites_result(case: dict[str, Any]) -> None:
    got = attend.compile_path(case["selector"])(case["document"])
    expected = [case["result"]] if "result" in case else case["results"]
    assert got in expected


@pytest.mark.parametrize("case", UNSUPPORTED, ids=_id)
def test_a_valid_selector_outside_the_subset_is_refused_as_unsupported(case: dict[str, Any]) -> None:
    with pytest.raises(attend.PathSyntaxError) as info:
        attend.compile_path(case["selector"])
    assert info.value.message.startswith("unsupported: "), info.value.message


def test_the_suite_is_run_whole() -> None:
    """Every case lands in exactly one of the three groups above; the counts are the report's figures."""
    assert len(INVALID) + len(SUPPORTED) + len(UNSUPPORTED) == len(CASES)
    # the 365 out-of-subset selectors: 288 filters, 56 slices, 21 bracket lists (see the message test)
    assert (len(INVALID), len(SUPPORTED), len(UNSUPPORTED)) == (247, 91, 365)
