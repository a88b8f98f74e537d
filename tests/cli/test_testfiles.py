"""`attend test` through the real CLI: passing and failing test files, malformed ones, discovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

from attend.compiler.testfiles import match_fires

GIT = """\
spec: 1
name: gitwatch
kind: command
command:
  argv: [git, status]
triggers:
  branch-changed:
    path: $.branch
    on: changed
    magnitude: 3.0
    description: "branch changed: {previous} → {value}"
  new-file:
    path: $.files[*]
    key: name
    on: added
    magnitude: 1
    description: "new file {name}"
"""

PASSING = """\
polls:
  - result: {branch: main, files: []}
  - result: {branch: dev, files: []}
    expect:
      - {trigger: branch-changed, description: "branch changed: main → dev", magnitude: 3.0}
  - result_file: fixtures/two-files.json
    expect:
      - {description: "new file b.txt"}
      - {trigger: new-file, description: "new file a.txt"}
  - result: {branch: dev, files: [{name: a.txt}, {name: b.txt}]}
"""

LINES = """\
spec: 1
name: build
kind: command
command:
  argv: [make]
  output: lines
"""


def _write(home, name: str, sensor: str, test: str) -> Path:
    sensor_path = home.write_user_sensor(name, sensor)
    test_path = sensor_path.with_name(f"{name}.test.yaml")
    test_path.write_text(test)
    return test_path


def test_a_passing_test_file_exits_zero(home) -> None:
    test_path = _write(home, "gitwatch", GIT, PASSING)
    (test_path.parent / "fixtures").mkdir()
    (test_path.parent / "fixtures" / "two-files.json").write_text(
        json.dumps({"branch": "dev", "files": [{"name": "a.txt"}, {"name": "b.txt"}]}))
    run = home.attend("test")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout and "gitwatch.test.yaml" in run.stdout and "4 polls" in run.stdout


def test_a_failing_test_file_shows_expected_against_got_and_exits_one(home) -> None:
    test_path = _write(home, "gitwatch", GIT, """\
polls:
  - result: {branch: main, files: []}
  - result: {branch: dev, files: []}
    expect:
      - {description: "branch changed: main → prod"}
  - result: {branch: dev, files: [{name: x}]}
""")
    run = home.attend("test", str(test_path))
    assert run.returncode == 1
    assert "FAIL" in run.stdout
    assert "poll 2 (line 3):" in run.stdout
    assert '- {description: "branch changed: main → prod"}' in run.stdout
    assert '- {trigger: "branch-changed", magnitude: 3.0, description: "branch changed: main → dev"}' in run.stdout
    assert "poll 3 (line 6):" in run.stdout and "expected: nothing" in run.stdout


def test_json_output_reports_each_poll(home) -> None:
    test_path = _write(home, "gitwatch", GIT, "polls:\n  - result: {branch: a}\n  - result: {branch: b}\n")
    run = home.attend("test", "--json", str(test_path))
    assert run.returncode == 1
    report = json.loads(run.stdout)
    (file,) = report["files"]
    assert [p["ok"] for p in file["polls"]] == [True, False]
    assert file["polls"][1]["got"][0]["description"] == "branch changed: a → b"


def test_a_lines_sensor_without_triggers_fires_each_valid_line(home) -> None:
    _write(home, "build", LINES, """\
polls:
  - lines: "2.5|build finished\\n  1 | tests passed  \\nnot a line\\n"
    expect:
      - {trigger: lines, description: "build finished", magnitude: 2.5}
      - {description: "tests passed", magnitude: 1}
""")
    run = home.attend("test")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_malformed_test_file_is_a_positioned_test_file_error(home) -> None:
    test_path = _write(home, "gitwatch", GIT, "polls:\n  - result: {branch: a}\n    expct: []\n")
    run = home.attend("test", str(test_path))
    assert run.returncode == 1
    assert f"{test_path}:3:5: error: [test-file] unknown poll field `expct`" in run.stdout


def test_a_test_file_for_an_unknown_sensor_says_so(home, tmp_path: Path) -> None:
    orphan = tmp_path / "ghost.test.yaml"
    orphan.write_text("polls:\n  - result: {}\n")
    run = home.attend("test", str(orphan))
    assert run.returncode == 1
    assert "[test-file] no sensor named 'ghost'" in run.stdout


def test_a_test_file_overrides_through_the_layers(home) -> None:
    home.write_user_sensor("gitwatch", GIT)
    home.write_project_sensor("gitwatch", "triggers:\n  branch-changed:\n    magnitude: 5\n")
    test_path = home.project_sensors / "gitwatch.test.yaml"
    test_path.write_text("polls:\n  - result: {branch: a}\n  - result: {branch: b}\n"
                         "    expect: [{trigger: branch-changed, magnitude: 5}]\n")
    run = home.attend("test", str(test_path))
    assert run.returncode == 0, run.stdout + run.stderr


def test_no_test_files_is_not_a_failure(home) -> None:
    run = home.attend("test")
    assert run.returncode == 0


def test_expectations_match_fires_regardless_of_order_one_to_one() -> None:
    fires = [{"trigger": "a", "description": "x", "magnitude": 1.0}, {"trigger": "b", "description": "x", "magnitude": 2.0}]
    assert match_fires([{"description": "x", "magnitude": 2}, {"trigger": "a"}], fires)
    assert not match_fires([{"description": "x"}], fires)
    assert not match_fires([{"trigger": "a"}, {"trigger": "a"}], fires)
    assert match_fires([], [])


def test_a_result_file_that_is_not_a_regular_file_or_too_large_is_a_positioned_test_file_error(home) -> None:
    test = _write(home, "gitwatch", GIT, "polls:\n  - result_file: /dev/zero\n")
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "not a regular file" in run.stdout and "[test-file]" in run.stdout
    (test.parent / "big.json").write_text("[" + "0," * (1 << 20) + "0]")
    test.write_text("polls:\n  - result_file: big.json\n")
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "larger than 1048576 bytes" in run.stdout
    assert "Traceback" not in run.stderr


def test_a_result_file_name_holding_a_nul_byte_is_a_positioned_test_file_error(home) -> None:
    test = _write(home, "gitwatch", GIT, 'polls:\n  - result_file: "a\\0b"\n')
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "[test-file]" in run.stdout and "cannot read result_file a\\x00b" in run.stdout
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_a_sensor_name_that_is_a_path_is_a_positioned_test_file_error(home) -> None:
    test = _write(home, "gitwatch", GIT, "sensor: ../../etc/passwd\npolls:\n  - result: {}\n")
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert ":1:9: error: [test-file] `sensor` must be a sensor name" in run.stdout


def test_hostile_results_in_a_test_file_are_test_file_errors_not_crashes(home) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    test = _write(home, "gitwatch", GIT, "polls:\n  - result_file: deep.json\n")
    (test.parent / "deep.json").write_text(deep)
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "nested deeper than 256 levels" in run.stdout
    test.write_text("polls:\n  - result: {branch: .nan, files: []}\n")
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_a_failure_under_an_override_names_every_file_merged_into_the_tested_sensor(home) -> None:
    home.write_user_sensor("gitwatch", GIT)
    home.write_project_sensor("gitwatch", "triggers:\n  branch-changed:\n    magnitude: 2\n")
    test_path = home.project_sensors / "gitwatch.test.yaml"
    test_path.write_text("polls:\n  - result: {branch: a}\n  - result: {branch: b}\n"
                         "    expect: [{trigger: branch-changed, magnitude: 5}]\n")
    run = home.attend("test", str(test_path))
    assert run.returncode == 1
    merged = next(line for line in run.stdout.splitlines() if "tested the sensor as merged from" in line)
    assert f"user {home.user_sensors / 'gitwatch.yaml'}" in merged
    assert f"project {home.project_sensors / 'gitwatch.yaml'}" in merged
    [result] = json.loads(home.attend("test", "--json", str(test_path)).stdout)["files"]
    assert [entry.split(" ")[0] for entry in result["layers"]] == ["user", "project"]


def test_a_missing_or_undecodable_result_file_is_reported_in_the_os_s_words_not_pythons(home) -> None:
    test = _write(home, "gitwatch", GIT, "polls:\n  - result_file: nope.json\n")
    run = home.attend("test", str(test))
    assert run.returncode == 1 and "cannot read result_file nope.json: No such file or directory" in run.stdout
    assert "Errno" not in run.stdout and "FileNotFoundError" not in run.stdout
    (test.parent / "latin.json").write_bytes(b'{"a": "caf\xe9"}')
    test.write_text("polls:\n  - result_file: latin.json\n")
    run = home.attend("test", str(test))
    assert "cannot read result_file latin.json: not UTF-8 text (byte 0xe9 at offset 10)" in run.stdout


def test_a_fifo_as_result_file_is_a_positioned_test_file_error_at_once(home) -> None:
    # Opening a FIFO for reading waits for a writer; the result file is refused as no regular file instead.
    test = _write(home, "gitwatch", GIT, "polls:\n  - result_file: result.fifo\n")
    os.mkfifo(test.parent / "result.fifo")
    run = home.attend_process("test", str(test), timeout=30)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "cannot read result_file result.fifo: not a regular file" in run.stdout and "[test-file]" in run.stdout
