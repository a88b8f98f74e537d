"""Positions and diagnostics: the one offset → line:col conversion and the printed forms."""

from pathlib import Path

from attend.errors import CompileError, Diagnostic, PathSyntaxError, Severity, Span, caret_excerpt, line_col


def test_line_col_counts_from_one_on_the_first_line():
    assert line_col("$.a.b", 0) == (1, 1)
    assert line_col("$.a.b", 4) == (1, 5)


def test_line_col_moves_to_later_lines_after_a_newline():
    text = "first\nsecond\nthird"
    assert line_col(text, text.index("second")) == (2, 1)
    assert line_col(text, text.index("h")) == (3, 2)


def test_line_col_clamps_offsets_past_the_end():
    assert line_col("ab", 99) == (1, 3)


def test_a_span_shifted_into_a_quoted_scalar_skips_the_quote():
    scalar = Span("s.yaml", 7, 11, 120)
    assert scalar.shifted("$.a[", 3, quote=1) == Span("s.yaml", 7, 15, 124)


def test_a_span_shifted_past_a_newline_lands_on_the_later_line():
    scalar = Span("s.yaml", 3, 9, 40)
    shifted = scalar.shifted("ab\ncd", 4)
    assert (shifted.line, shifted.col) == (4, 2)


def test_a_diagnostic_prints_as_file_line_col_severity_code_message():
    d = Diagnostic("a.yaml", 3, 5, "unknown-field", "unknown field 'intervall'", Severity.WARNING)
    assert str(d) == "a.yaml:3:5: warning: [unknown-field] unknown field 'intervall'"
    assert d.to_json()["severity"] == "warning"


def test_errors_print_with_their_code_and_position():
    err = PathSyntaxError("unexpected end", file="x.yaml", line=2, col=9)
    assert str(err) == "x.yaml:2:9: error: [path-syntax] unexpected end"
    assert err.column == 9
    assert CompileError("bad", field="where").field == "where"


def test_caret_excerpt_points_under_the_column():
    out = caret_excerpt("$[1,2", 1, 5, "unexpected end of segment")
    assert out.splitlines() == ["1 | $[1,2", "  |     ^ unexpected end of segment"]


def test_every_refusal_is_one_base_carrying_its_message_and_exit_code():
    from attend.errors import EXIT_FAILED, EXIT_USAGE, Refusal
    from attend.peers.identity import SessionError
    from attend.peers.mailbox import PeerError
    from attend.runtime.mcp.probe import ProbeRefused
    from attend.runtime.noise.shelving import ShelfRefused
    from attend.runtime.store import StoreUnavailable
    from attend.settings.policy import SettingsRefusal

    cases = [
        (SettingsRefusal("no such key", 3), 3),
        (ShelfRefused("x is not shelved", EXIT_FAILED), EXIT_FAILED),
        (ProbeRefused("no sensor named 'x'"), EXIT_USAGE),
        (PeerError("the message is empty"), EXIT_FAILED),
        (SessionError("a session id is empty"), EXIT_USAGE),
    ]
    for refusal, code in cases:
        assert isinstance(refusal, Refusal)
        assert (str(refusal), refusal.code) == (refusal.message, code)
    unusable = StoreUnavailable(Path("/x"), "it exists and is not a folder")
    assert isinstance(unusable, Refusal) and unusable.code == EXIT_FAILED
    assert unusable.message == "cannot use the state store /x: it exists and is not a folder"
    assert isinstance(PeerError("m"), ValueError) and isinstance(SessionError("m"), ValueError)
