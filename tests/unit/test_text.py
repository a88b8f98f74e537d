"""Terminal-safe text (attend.text): the one escaping and line-folding policy, pinned byte for byte."""

import pytest

from attend.compiler.check import format_diagnostics
from attend.errors import Diagnostic
from attend.runtime.delivery import format_line
from attend.text import LINE_BREAKS, escaped_lines, fold_lines, one_line, printable, printable_path


def test_printable_escapes_controls_and_bidi_keeps_newlines_and_tabs_and_replaces_lone_surrogates():
    assert printable("a\x1b[31mb\tc\nd\x7f\x9b\u202e\u2066e\ud800") == "a\\x1b[31mb\tc\nd\\x7f\\x9b\\u202e\\u2066e\ufffd"


def test_a_one_line_form_folds_each_run_of_line_breaks_and_tabs_to_one_space():
    assert printable("a\r\n\tb\nc", one_line=True) == "a b c"
    assert printable("a" + LINE_BREAKS + "b", one_line=True) == "a b"
    assert one_line("  first\nsecond  ", 100) == "first second"
    assert one_line("abcdef", 4) == "abc…"


def test_a_path_is_one_token_with_its_tabs_and_newlines_escaped():
    assert printable_path("/tmp/a\tb\nc\x1b") == "/tmp/a\\x09b\\x0ac\\x1b"


def test_folding_keeps_tabs_and_leaves_escaping_to_printable():
    assert fold_lines("a\r\n\u2028b\tc\x0b\x0cd") == "a b\tc d"


@pytest.mark.parametrize(
    ("text", "shown"),
    [("a\nb", "a\\nb"), ("a\rb", "a\\rb"), ("a\x0bb\x0cc", "a\\x0bb\\x0cc"), ("a\x1cb\x1dc\x1ed", "a\\x1cb\\x1dc\\x1ed"),
     ("a\x85b", "a\\x85b"), ("a\u2028b\u2029c", "a\\u2028b\\u2029c"), ("tab\tkept", "tab\tkept")],
)
def test_escaped_lines_shows_each_line_break_as_the_escape_it_always_printed(text, shown):
    assert escaped_lines(text) == shown


def test_a_notification_line_folds_every_line_break_and_escapes_the_rest():
    assert format_line("s", "low", " new\u2028item\r\n\x1b[2J\tx \t") == "[attend sensor=s priority=low] new item \\x1b[2J\tx"


def test_a_diagnostic_quoting_an_escape_sequence_prints_it_escaped_on_one_line():
    # The file name comes from the file system: a terminal escape in it must not reach the terminal.
    d = Diagnostic("evil\x1b]0;owned\x07.yaml", 1, 1, "io", "cannot read\nthe file", detail="1 | a\x1b[2J\n  | ^")
    text = format_diagnostics([d], "text")
    assert "\x1b" not in text and "\x07" not in text
    assert text == ("evil\\x1b]0;owned\\x07.yaml:1:1: error: [io] cannot read\\nthe file\n"
                    "    1 | a\\x1b[2J\n"
                    "      | ^\n")
