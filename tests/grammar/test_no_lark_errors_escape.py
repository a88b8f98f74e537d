"""Whatever the text, parsing either succeeds or raises attend's own positioned syntax error."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from attend.errors import AttendSyntaxError
from attend.grammar import parse_path, parse_property, parse_template
from property_examples import examples

# text built from the characters that matter to the grammar, plus anything else
TEXT = st.one_of(
    st.text(alphabet="$.[]*'\"\\{}?-_ a0é\n", max_size=16),
    st.text(max_size=12),
)


@settings(max_examples=examples(500), deadline=None)
@given(TEXT)
def test_any_text_parses_or_raises_a_positioned_attend_error(text: str) -> None:
    for parse in (parse_path, parse_template, parse_property):
        try:
            parse(text)
        except AttendSyntaxError as exc:
            assert exc.code in ("path-syntax", "template-syntax", "pattern-syntax")
            assert 1 <= exc.line and 1 <= exc.col
            assert exc.message and "Unexpected" not in exc.message
