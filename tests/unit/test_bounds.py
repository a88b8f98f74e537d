"""Every bound a sensor file is held to has a name, a documented value and a test (issue 17)."""

from __future__ import annotations

import re
from pathlib import Path

import attend.bounds as bounds

SPEC_MD = Path(__file__).resolve().parents[2] / "docs" / "spec.md"
_UNITS = {"MiB": 1 << 20, "days": 24 * 3600}


def _documented() -> dict[str, float]:
    rows = re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", SPEC_MD.read_text(), re.MULTILINE)
    values = {}
    for name, shown in rows:
        number, _, unit = shown.strip().partition(" ")
        values[name] = float(number.replace(",", "")) * _UNITS.get(unit, 1)
    return values


def test_every_bound_is_listed_in_spec_md_with_its_value() -> None:
    documented = _documented()
    names = [name for name in bounds.__all__ if name.isupper()]
    assert sorted(documented) == sorted(names)
    for name in names:
        assert documented[name] == getattr(bounds, name), name


import pytest  # noqa: E402

from attend.bounds import pattern_shape  # noqa: E402
from attend.errors import caret_excerpt, line_col  # noqa: E402


@pytest.mark.parametrize(("pattern", "problem"), [
    ("(?:a|bc){1000000}", "repetition count of 1,000,000"),
    ("(?:(?:a|bc){1000}){1000}", "expand it past"),
    ("(?:a|b){1000}" * 20, "expand it past"),
    ("(" * 400 + "a" + ")" * 400, "nest deeper than 32"),
    ("a" * 1001, "1,001 characters"),
    ("x{e<=99999}", "repetition count of 99,999"),
])
def test_a_pattern_past_a_bound_is_refused_before_compiling(pattern: str, problem: str) -> None:
    shape = pattern_shape(pattern)
    assert shape.problem is not None and problem in shape.problem


@pytest.mark.parametrize("pattern", [r"^\d{4}-\d{2}-\d{2}$", "(?i)error|fail", "[{]{3}", "a{1,1000}", "(?:ab){999}",
                                     r"\p{L}+", "(?P<x>a)(?#comment)"])
def test_ordinary_patterns_are_within_bounds_and_linear(pattern: str) -> None:
    shape = pattern_shape(pattern)
    assert shape.problem is None and not shape.special


@pytest.mark.parametrize("pattern", ["{{", "a{", "{", "x{{1}", "a{}b{"])
def test_an_unclosed_brace_is_a_literal_and_measuring_it_ends(pattern: str) -> None:
    # "{{" looped forever (found by test_check_fuzz's random profile): the shape walk went back to offset 0.
    shape = pattern_shape(pattern)
    assert shape.problem is None and shape.expansion >= 1


@pytest.mark.parametrize("pattern", ["(?b)x{e<=2}", "a{e<=1}", "(?=x)y", "(?<!x)y", r"(a)\1", "(?(1)a|b)", "(?r)abc"])
def test_fuzzy_lookaround_backreference_and_special_flags_are_not_provably_linear(pattern: str) -> None:
    from attend.compiler.ops import regex_needs_timeout

    assert pattern_shape(pattern).special and regex_needs_timeout(pattern)


@pytest.mark.parametrize(("pattern", "expected"), [
    ("(?a)(?u)", "mutually incompatible"),
    ("(" * 400 + "a" + ")" * 400, "nest deeper"),
    ("(?:a|bc){1000000}", "at most 1,000"),
])
def test_every_regex_failure_is_the_patterns_positioned_error(pattern: str, expected: str) -> None:
    from attend import CompileError, compile_trigger

    with pytest.raises(CompileError) as caught:
        compile_trigger({"on": "enters", "where": {"f": {"matches": pattern}}})
    assert caught.value.code == "regex-syntax" and expected in str(caught.value)


def test_a_huge_template_is_refused_at_its_bound() -> None:
    from attend import compile_trigger
    from attend.errors import AttendError

    for description, expected in (("{a}" * 50000, "150,000 characters"), ("{a}" * 65, "more than 64 placeholders")):
        with pytest.raises(AttendError) as caught:
            compile_trigger({"on": "changed", "description": description})
        assert expected in str(caught.value)
    compile_trigger({"on": "changed", "description": "{a}" * 64 + "{{literal}}" * 100})


@pytest.mark.parametrize("text", ["a: 1\rb: 2\rc: X", "a: 1\x85b: 2\x85c: X", "a: 1\r\nb: 2\r\nc: X",
                                  "a: 1\u2028b: 2\u2029c: X"])
def test_positions_count_line_breaks_as_the_yaml_reader_does(text: str) -> None:
    assert line_col(text, text.index("X")) == (3, 4)


def test_an_encoding_or_reader_error_after_cr_or_nel_breaks_is_at_its_line(tmp_path: Path) -> None:
    from attend.spec.loading import read_sensor_file

    for breaks in ("\r", "\x85", "\u2028"):
        path = tmp_path / "odd.yaml"
        path.write_bytes(f"spec: 1{breaks}name: odd{breaks}x: \x07".encode())
        [diagnostic] = read_sensor_file(path, "user").diagnostics
        assert (diagnostic.line, diagnostic.col) == (3, 4), (breaks, diagnostic)
        path.write_bytes(f"spec: 1{breaks}name: odd{breaks}x: ".encode() + b"\xff")
        [diagnostic] = read_sensor_file(path, "user").diagnostics
        assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("encoding", 3, 4), (breaks, diagnostic)


def test_a_caret_excerpt_of_a_long_line_is_a_window_around_the_column() -> None:
    line = "x" * 30_000 + "HERE" + "y" * 30_000
    excerpt = caret_excerpt(line, 1, 30_001)
    source, marker = excerpt.split("\n")
    assert len(source) < 100 and "HERE" in source
    assert source.index("HERE") == marker.index("^")
