"""YAML loading: positions for every key path, duplicate keys, safe tags, size, depth and alias limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attend.spec.loading import MAX_FILE_BYTES, parse_yaml, read_sensor_file
from property_examples import examples


def codes(parsed) -> list[str]:
    return [d.code for d in parsed.diagnostics]


def test_every_key_path_records_the_position_of_its_key_and_value() -> None:
    parsed = parse_yaml("a: 1\nb:\n  c: 'x'\n  d: [p, q]\n", "f.yaml", "user")
    assert parsed.data == {"a": 1, "b": {"c": "x", "d": ["p", "q"]}}
    c = parsed.origins[("b", "c")]
    assert (c.line, c.col, c.key_line, c.key_col, c.style, c.layer) == (3, 6, 3, 3, "'", "user")
    assert c.quote == 1
    assert (parsed.origins[("b", "d", "1")].line, parsed.origins[("b", "d", "1")].col) == (4, 10)


def test_a_duplicate_key_is_an_error_at_the_second_key_naming_the_first_line() -> None:
    parsed = parse_yaml("interval: 5\nname: x\ninterval: 6\n", "f.yaml")
    [d] = parsed.diagnostics
    assert (d.code, d.line, d.col) == ("duplicate-key", 3, 1)
    assert "line 1" in d.message
    assert parsed.data["interval"] == 5


def test_on_yes_and_no_stay_strings_under_the_yaml_1_2_core_schema() -> None:
    parsed = parse_yaml("on: added\nx: yes\ny: no\nz: true\nn: ~\nh: 0x1f\n", "f.yaml")
    assert parsed.data == {"on": "added", "x": "yes", "y": "no", "z": True, "n": None, "h": 31}


def test_a_python_tag_is_refused_with_its_position() -> None:
    parsed = parse_yaml("a: !!python/object/apply:os.system ['true']\n", "f.yaml")
    [d] = parsed.diagnostics
    assert (d.code, d.line, d.col) == ("yaml-syntax", 1, 4)
    assert parsed.data is None


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    parsed = parse_yaml("\n".join(lines) + "\n", "bomb.yaml")
    assert codes(parsed) == ["alias-limit"]
    assert parsed.diagnostics[0].line > 1


def test_merge_keys_and_small_aliases_still_work() -> None:
    parsed = parse_yaml("base: &b {path: $, on: changed}\nt:\n  <<: *b\n  on: added\n", "f.yaml")
    assert parsed.diagnostics == []
    assert parsed.data["t"] == {"path": "$", "on": "added"}


@pytest.mark.parametrize("text", ["[" * 10_000 + "]" * 10_000, "".join("  " * i + "a:\n" for i in range(200))])
def test_deep_nesting_is_refused_as_too_deep(text: str) -> None:
    parsed = parse_yaml(text, "deep.yaml")
    assert codes(parsed) == ["too-deep"]


def test_a_syntax_error_carries_line_column_and_a_caret_excerpt() -> None:
    parsed = parse_yaml("a: 1\nb: [1, 2\n", "f.yaml")
    [d] = parsed.diagnostics
    assert d.code == "yaml-syntax" and d.line >= 2
    assert "^" in d.detail


def test_binary_invalid_utf8_and_oversized_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "bin.yaml").write_bytes(b"a: 1\n\x00\x01\x02")
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "big.yaml").write_bytes(b"# " + b"x" * MAX_FILE_BYTES + b"\n")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    found = {p: read_sensor_file(tmp_path / p, "user").diagnostics for p in
             ("bin.yaml", "latin.yaml", "big.yaml", "list.yaml")}
    assert [(d.code, d.line, d.col) for d in found["bin.yaml"]] == [("encoding", 2, 1)]
    assert [(d.code, d.line, d.col) for d in found["latin.yaml"]] == [("encoding", 1, 10)]
    assert [d.code for d in found["big.yaml"]] == ["file-too-large"]
    assert [d.code for d in found["list.yaml"]] == ["not-a-mapping"]


@pytest.mark.parametrize(("raw", "position", "message"), [
    (b'spec: 1\nname: c\ndescription: "\xe9"\nfoo: \x00\n', (3, 15),
     "invalid UTF-8 (byte 0xe9; the file also holds binary data, a NUL byte at 4:6): sensor files are UTF-8 text"),
    (b'spec: 1\nname: c\nfoo: \x00\ndescription: "\xe9"\n', (3, 6),
     "binary data (a NUL byte): sensor files are UTF-8 text"),
    (b"name: caf\xc3\xa9 \xff\n", (1, 12), "invalid UTF-8 (byte 0xff): sensor files are UTF-8 text"),
])
def test_an_encoding_error_is_positioned_at_the_first_bad_byte_and_names_it(tmp_path: Path, raw: bytes,
                                                                             position: tuple[int, int],
                                                                             message: str) -> None:
    (tmp_path / "c.yaml").write_bytes(raw)
    [d] = read_sensor_file(tmp_path / "c.yaml", "user").diagnostics
    assert (d.code, (d.line, d.col), d.message) == ("encoding", position, message)


def test_an_explicit_key_keeps_its_own_position_over_a_merge_key() -> None:
    parsed = parse_yaml("base: &b {on: changed, path: $.x}\nt:\n  on: added\n  <<: *b\n", "f.yaml")
    assert parsed.data["t"] == {"on": "added", "path": "$.x"}
    assert parsed.origins[("t", "on")].line == 3
    assert parsed.origins[("t", "path")].line == 1


@pytest.mark.parametrize(("text", "code"), [("a: 1\n---\nb: 2\n", "yaml-syntax"), ("a: *nope\n", "yaml-syntax"),
                                            ("a: &x [*x]\n", "alias-limit"), ("a: !!int twelve\n", "wrong-type"),
                                            ("? [a]\n: b\n", "wrong-type")])
def test_documents_attend_cannot_take_are_positioned_errors(text: str, code: str) -> None:
    assert codes(parse_yaml(text, "f.yaml")) == [code]


def test_an_empty_file_is_not_a_mapping(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    assert [d.code for d in read_sensor_file(tmp_path / "empty.yaml", "user").diagnostics] == ["not-a-mapping"]


def test_columns_count_characters_not_bytes_and_block_styles_are_kept() -> None:
    parsed = parse_yaml('a: [é, ü, x]\nd: |\n  text\ne: >\n  folded\nf: "q"\n', "f.yaml")
    assert parsed.origins[("a", "2")].col == 11
    assert [parsed.origins[(k,)].style for k in "def"] == ["|", ">", '"']
    assert [parsed.origins[(k,)].quote for k in "def"] == [0, 0, 1]


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=st.sampled_from("~nNtTfFaeilorsuxXyY-+._0123456789 é:"), max_size=8))
def test_a_plain_scalar_that_skips_type_resolution_by_its_first_character_is_a_string_either_way(text: str) -> None:
    # `_scalar` returns a plain scalar as a string at once when no core-schema type can start with its first
    # character; it must read every text as the full resolution does.
    from attend.spec.loading import _Builder, _Node, _resolve_plain

    got = _Builder("f.yaml", "", [])._scalar(_Node("scalar", 1, 1, text))
    expected = _resolve_plain(text)
    assert got == expected or (got != got and expected != expected)  # NaN is not equal to itself


def test_a_shipped_file_is_parsed_once_until_its_text_changes(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("spec: 1\nname: s\n")
    first, again = read_sensor_file(path, "shipped"), read_sensor_file(path, "shipped")
    assert first.data == {"spec": 1, "name": "s"} and again.data is first.data  # one parse, shared
    assert read_sensor_file(path, "user").data is not first.data  # other layers parse every read
    path.write_text("spec: 1\nname: s\ninterval: 5m\n")
    changed = read_sensor_file(path, "shipped")
    assert changed.data == {"spec": 1, "name": "s", "interval": "5m"}
    assert changed.origins[("interval",)].line == 3
