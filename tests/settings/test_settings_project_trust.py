"""`settings set|unset --project` on an untrusted project's file that already chooses what runs (`kind`):
the trust gate judges what the write changes, so a tuning field is written (docs/settings.md: tuning
fields need no trust) with a note that the file stays refused, while a write that adds or changes
`kind`, `command…` or `mcp…` is still refused, exit 3, nothing written (newuser item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_COMMAND = """\
spec: 1
name: proj-cmd
kind: command   # chooses what runs: the daemon refuses this file until the project is trusted
interval: 1m
command:
  argv: [echo, "{}"]
triggers:
  any:
    path: $
    on: changed
    magnitude: 1.0
"""


@pytest.fixture
def project_command(home) -> Path:
    return home.write_project_sensor("proj-cmd", PROJECT_COMMAND)


@pytest.mark.parametrize(("key", "value", "old_line", "new_line"), [
    ("interval", "5m", "interval: 1m\n", "interval: 5m\n"),
    ("triggers.any.magnitude", "2.5", "    magnitude: 1.0\n", "    magnitude: 2.5\n"),
])
def test_tuning_a_field_of_an_untrusted_projects_command_sensor_is_written_and_notes_the_file_stays_refused(
        home, project_command, key, value, old_line, new_line):
    result = home.attend_process("settings", "set", f"attend.sensors.proj-cmd.{key}", value, "--project")
    assert result.returncode == 0, result.stderr
    assert project_command.read_text() == PROJECT_COMMAND.replace(old_line, new_line)
    assert "would set" not in result.stderr
    assert result.stderr.startswith("note: project sensor 'proj-cmd' runs code chosen by the repository (`kind`)")
    assert f"attend settings add attend.project_sensors {home.project}" in result.stderr


def test_unsetting_a_tuning_field_of_an_untrusted_projects_command_sensor_is_written(home, project_command):
    result = home.attend_process("settings", "unset", "attend.sensors.proj-cmd.interval", "--project")
    assert result.returncode == 0, result.stderr
    assert project_command.read_text() == PROJECT_COMMAND.replace("interval: 1m\n", "")


@pytest.mark.parametrize(("key", "value", "named"), [
    ("command.timeout", "5s", "command.timeout"),
    ("command.argv", "[ls]", "command.argv"),
    ("kind", "mcp", "kind"),
])
def test_a_write_that_adds_or_changes_what_an_untrusted_project_file_runs_is_still_refused(
        home, project_command, files, key, value, named):
    before = files()
    result = home.attend_process("settings", "set", f"attend.sensors.proj-cmd.{key}", value, "--project")
    assert result.returncode == 3
    assert result.stderr.startswith(f"attend: the project file would set `{named}`, which chooses what runs"), \
        result.stderr
    assert files() == before


def test_a_tuning_write_to_a_project_file_that_chooses_nothing_adds_no_note(home, files):
    home.write_user_sensor("proj-cmd", PROJECT_COMMAND)
    result = home.attend_process("settings", "set", "attend.sensors.proj-cmd.interval", "5m", "--project")
    assert result.returncode == 0, result.stderr
    assert (home.project_sensors / "proj-cmd.yaml").read_text() == "interval: 5m\n"
    assert result.stderr == ""
