"""`attend compile --check` through the real CLI: bad input, output formats, exit codes, the trust gate."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

WEATHER = """\
spec: 1
name: weather
kind: command
command:
  argv: [curl, -sf, "https://example.invalid"]
triggers:
  high-wind:
    on: enters
    where: {wind: {above: 40}}
    description: "wind {wind} km/h"
"""


def write_bad_inputs(folder: Path) -> None:
    """The bad-input list of the issue, one file each, beside files that still need checking."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "garbage.yaml").write_bytes(bytes(range(256)) * 4)
    with open(folder / "huge.yaml", "wb") as handle:
        handle.write(b"spec: 1\n")
        handle.write((b"# padding " + b"x" * 1014 + b"\n") * (50 * 1024))
    (folder / "deep.yaml").write_text("spec: 1\ncrate: " + "[" * 10_000 + "]" * 10_000 + "\n")
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    (folder / "bomb.yaml").write_text("\n".join(lines) + "\n")
    (folder / "listed.yaml").write_text("spec: 1\nname: listed\nkind: command\ncommand:\n  - curl\n")
    (folder / "latin1.yaml").write_bytes(b"spec: 1\nname: latin1\ndescription: \xe9t\xe9\n")
    (folder / "weather.yaml").write_text(WEATHER)
    (folder / "typo.yaml").write_text("spec: 1\nname: typo\nkind: crate\nintervall: 5m\n")


def test_every_bad_input_gets_positioned_errors_and_the_other_files_are_still_checked(home) -> None:
    write_bad_inputs(home.project / "bad")
    result = home.attend("compile", "--check", "bad")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if not line.startswith("    ")]
    by_file = {line.split(":", 1)[0]: line for line in lines}
    expected = {
        "bad/garbage.yaml": "[encoding]",
        "bad/huge.yaml": "[file-too-large]",
        "bad/deep.yaml": "[too-deep]",
        "bad/bomb.yaml": "[alias-limit]",
        "bad/listed.yaml": "[wrong-type]",
        "bad/latin1.yaml": "[encoding]",
        "bad/typo.yaml": "[unknown-field]",
    }
    for file, code in expected.items():
        assert code in by_file[file], by_file[file]
        assert by_file[file].split(":")[1].isdigit() and by_file[file].split(":")[2].isdigit()
    assert "bad/weather.yaml" not in by_file
    assert "checked 8 files (8 sensors)" in result.stderr


def test_json_output_is_an_array_of_diagnostics(home) -> None:
    (home.project / "typo.yaml").write_text("spec: 1\nname: typo\nkind: crate\nintervall: 5m\n")
    result = home.attend("compile", "--check", "typo.yaml", "--format", "json")
    assert result.returncode == 1
    [entry] = json.loads(result.stdout)
    assert entry == {"file": "typo.yaml", "line": 4, "col": 1, "severity": "error", "code": "unknown-field",
                     "message": "unknown field `intervall` (did you mean `interval`?)"}


def test_github_output_is_one_annotation_per_diagnostic(home) -> None:
    (home.project / "typo.yaml").write_text("spec: 1\nname: typo\nkind: crate\nintervall: 5m\n")
    result = home.attend("compile", "--check", "typo.yaml", "--format", "github")
    assert result.stdout == ("::error file=typo.yaml,line=4,col=1,title=[unknown-field]::"
                             "unknown field `intervall` (did you mean `interval`?)\n")


def test_warnings_pass_unless_strict(home) -> None:
    home.write_project_sensor("weather", WEATHER)  # an untrusted project command sensor: a warning
    plain = home.attend("compile", "--check")
    strict = home.attend("compile", "--check", "--strict")
    assert plain.returncode == 0 and "warning: [project-refused]" in plain.stdout
    assert strict.returncode == 1


def test_strict_warns_about_a_trigger_without_description_and_names_the_default(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace('    description: "wind {wind} km/h"\n', ""))
    plain = home.attend("compile", "--check")
    strict = home.attend("compile", "--check", "--strict")
    assert (plain.returncode, plain.stdout) == (0, "")
    assert strict.returncode == 1
    (line,) = [x for x in strict.stdout.splitlines() if "[no-description]" in x]
    assert line.endswith('warning: [no-description] trigger `high-wind` has no description; its notifications read '
                         '"high-wind: enters" (add `description:` to say what happened)')
    assert ":7:3:" in line  # at the trigger's name


def test_listing_the_project_in_the_user_config_clears_the_refusal(home) -> None:
    home.write_project_sensor("weather", WEATHER)
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"project_sensors: ['{home.project}']\n")
    result = home.attend("compile", "--check", "--strict")
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_a_clean_project_exits_0_and_says_what_it_checked(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    result = home.attend("compile", "--check")
    assert (result.returncode, result.stdout) == (0, "")
    assert "0 errors" in result.stderr


@pytest.mark.parametrize("argv", [["compile"], ["compile", "--check", "--format", "xml"]])
def test_usage_errors_exit_2(home, argv: list[str]) -> None:
    assert home.attend(*argv).returncode == 2


def test_an_expression_error_from_the_compiler_is_reported_with_the_spec_errors(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("on: enters", "path: $.[\n    on: enters"))
    result = home.attend("compile", "--check")
    assert result.returncode == 1
    assert "[path-syntax]" in result.stdout


def test_a_named_layer_file_is_checked_merged_with_its_other_layers(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("kind: command", "kind: command\ninterval: 1m"))
    override = home.write_project_sensor("weather", "min_interval: 5m\n")
    result = home.attend("compile", "--check", str(override))
    assert result.returncode == 1
    assert f"{override}:1:15: error: [interval-order]" in result.stdout


def test_the_check_imports_neither_trio_nor_mcp(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    probe = ("import sys; from attend.cli import main; code = main(['compile', '--check']); "
             "bad = [m for m in sys.modules if m.split('.')[0] in ('trio', 'mcp', 'anyio')]; "
             "print(bad); sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe], cwd=home.project, env=home.env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_fifo_named_on_the_command_line_is_refused_instead_of_blocking(home) -> None:
    os.mkfifo(home.project / "pipe.yaml")
    result = home.attend("compile", "--check", "pipe.yaml", timeout=30)
    assert result.returncode == 1
    assert result.stdout.startswith("pipe.yaml:1:1: error: [io] not a regular file")


def test_spec_errors_in_a_sensor_do_not_hide_its_expression_errors(home) -> None:
    (home.project / "mixed.yaml").write_text(
        "spec: 1\nname: mixed\nkind: command\ncommand: {argv: [\"true\"]}\ntriggers:\n"
        "  wind:\n    path: $.a[\n    on: enters\n    where: {speed: {above: forty}}\n    magnitude: -1\n"
        "  gone:\n    on: removed\n"
    )
    result = home.attend("compile", "--check", "mixed.yaml")
    assert result.returncode == 1
    codes = [line.split("[", 1)[1].split("]", 1)[0] for line in result.stdout.splitlines() if line.startswith("mixed")]
    assert codes == ["path-syntax", "operator", "bad-value", "on-rules"]


def test_a_fifo_in_place_of_the_grammar_cache_is_no_cache_and_never_a_hang(home) -> None:
    cache = home.cache / "attend" / "grammar-lalr.cache"
    cache.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(cache)
    sensor = home.write_user_sensor("filtered", "spec: 1\nname: filtered\nkind: command\ncommand: {argv: [echo, '{}']}\n"
                                    "interval: 1m\ntriggers:\n  t: {path: \"$.items[?@.x > 1 && @.y == 'a']\", "
                                    "key: id, on: added, magnitude: 3, description: \"x {id}\"}\n")
    done = home.attend_process("compile", "--check", str(sensor), timeout=30)  # lark would wait for a writer
    assert done.returncode == 1 and ":7:22: error: [path-syntax]" in done.stdout, done.stdout + done.stderr
    assert stat.S_ISFIFO(os.lstat(cache).st_mode)  # left as it was: not attend's file


BOARD = """\
spec: 1
name: board
kind: mcp
interval: 1h
mcp:
  server:
    type: sse
    url: https://mcp.example/sse
    headers: {Authorization: "Bearer s3cret-token-x", X-Team: "${BOARD_TEAM}", X-Retries: [1]}
  resource: board://issues
"""
_FLOW = 'headers: {Authorization: "Bearer s3cret-token-x", X-Team: "${BOARD_TEAM}", X-Retries: [1]}'


@pytest.mark.parametrize(("text", "shown"), [
    (BOARD, '"Bearer <hidden: 14 characters>", X-Team: "${BOARD_TEAM}", X-Retries: [1]}'),
    (BOARD.replace("X-Retries: [1]}", "X-Retries: [1}"), 'X-Team: "${BOARD_TEAM}", X-Retries: [1}'),
    (BOARD.replace(_FLOW, "headers:\n      Authorization: Bearer s3cret-token-x: x\n      X-Team: ${BOARD_TEAM}"),
     "Authorization: Bearer <hidden: 17 characters>"),
], ids=["flow-wrong-type", "flow-yaml-syntax", "block-yaml-syntax"])
def test_a_diagnostic_excerpt_of_a_header_line_masks_a_literal_credential(home, text: str, shown: str) -> None:
    """`compile --check` shows a header value in its source excerpt as explain does (`shown_header`): a
    literal token hidden but for its scheme and length, a `${VAR}` reference as written; the caret still
    points where the problem is."""
    home.write_user_sensor("board", text)
    result = home.attend("compile", "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "s3cret" not in result.stdout + result.stderr
    source, caret = [line for line in result.stdout.splitlines() if line.startswith("    ")][:2]
    assert shown in source, result.stdout
    if text == BOARD:  # the caret stays under the value it is about, after the masked one before it
        assert source[caret.index("^")] == "["


def test_a_sensor_name_given_for_a_file_is_told_which_command_takes_a_name(home) -> None:
    # `attend compile --check git` reads a file called git: the message says where a name goes
    named = home.attend("compile", "--check", "git")
    assert named.returncode == 1
    assert named.stdout.startswith("git:1:1: error: [io] no such file or directory (compile --check takes files "
                                   "and folders; for the sensor named git: attend explain git)\n"), named.stdout
    path = home.attend("compile", "--check", "missing.yaml")  # a path stays the plain message
    assert path.stdout.startswith("missing.yaml:1:1: error: [io] no such file or directory\n"), path.stdout


def test_a_named_test_file_a_yml_file_and_a_folder_of_them_are_said_not_passed_over_in_silence(home) -> None:
    # each printed "checked 0 files: 0 errors" and exited 0; a .yml file was checked as if the daemon read it
    folder = home.root / "drafts"
    folder.mkdir()
    sensor = 'spec: 1\nname: net\ndescription: d\nkind: command\ncommand: {argv: [ip]}\n' \
             'triggers:\n  t: {path: $, on: changed, description: x}\n'
    (folder / "net.yml").write_text(sensor)
    (folder / "net.test.yaml").write_text("polls: []\n")
    named = home.attend("compile", "--check", str(folder / "net.test.yaml"))
    assert named.returncode == 0 and named.stdout.splitlines() == [
        f"{folder / 'net.test.yaml'}:1:1: warning: [ignored-file] a sensor test file: `attend test "
        f"{folder / 'net.test.yaml'}` runs it (compile --check checks sensor files)"]
    yml = home.attend("compile", "--check", "--strict", str(folder / "net.yml"))
    assert yml.returncode == 1  # checked, and its warning fails --strict: the daemon would never read it
    assert "warning: [ignored-file] attend reads only *.yaml sensor files: rename this to net.yaml" in yml.stdout
    assert "checked 1 file (1 sensor): 0 errors, 1 warning" in yml.stderr
    listed = home.attend("compile", "--check", str(folder))
    assert f"{folder / 'net.yml'}:1:1: warning: [ignored-file]" in listed.stdout, listed.stdout
