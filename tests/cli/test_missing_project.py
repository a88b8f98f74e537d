"""A `--project DIR` that names no directory is refused by every command, in one line, exit 2 (issue 27,
item 6): never `doctor` saying all is well, nor `sensors` listing the shipped set as if DIR were a project."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [
    ("doctor",), ("sensors",), ("sensors", "list", "--json"), ("settings", "get", "attend.sensors.git.interval"),
    ("settings", "set", "attend.sensors.git.interval", "2m"), ("compile", "--check"), ("explain", "git"),
    ("peers", "whoami"), ("tui",),
])
def test_a_project_that_does_not_exist_is_refused_with_one_line_and_exit_2(home, command):
    missing = home.root / "no-such-dir"
    out = home.attend(*command, "--project", str(missing))
    assert out.returncode == 2, out.stdout
    assert out.stderr == f"attend: the project directory {missing} does not exist (or is not a directory)\n"
    assert out.stdout == ""
    assert not missing.exists() and not (home.config / "attend" / "sensors").exists()


def test_a_project_that_is_a_file_is_refused_too(home):
    afile = home.root / "a-file"
    afile.write_text("")
    out = home.attend("doctor", f"--project={afile}")
    assert out.returncode == 2
    assert "is not a directory" in out.stderr


def test_the_stop_hooks_drain_for_a_missing_project_says_so_and_never_blocks(home):
    out = home.attend("drain", "--format", "hook", "--project", str(home.root / "gone"))
    assert out.returncode == 0
    assert "does not exist" in out.stderr and out.stdout == ""
