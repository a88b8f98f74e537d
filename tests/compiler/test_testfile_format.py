"""Malformed sensor test files are positioned `test-file` errors (cases in testfile_errors.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from attend.compiler.testfiles import run_test_file

CASES = yaml.safe_load((Path(__file__).parent / "testfile_errors.yaml").read_text())

SENSOR = "spec: 1\nname: s\nkind: command\ncommand:\n  argv: [\"true\"]\ntriggers:\n  t:\n    path: $.v\n    on: changed\n"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["message"] or c["code"])
def test_a_malformed_test_file_is_reported_at_its_position(home, case: dict) -> None:
    sensor = home.write_user_sensor("s", SENSOR)
    (sensor.parent / "bad.json").write_text("{nope")
    test_file = sensor.with_name("s.test.yaml")
    test_file.write_text(case["text"])
    result = run_test_file(test_file, home.project)
    assert not result.ok
    (problem,) = result.problems
    assert (problem.file, problem.line, problem.col) == (str(test_file), *case["at"])
    assert problem.code == case.get("code", "test-file")
    assert case["message"] in problem.message
