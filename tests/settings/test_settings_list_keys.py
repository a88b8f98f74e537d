"""`attend settings add|remove KEY VALUE`: one value in or out of a list key, the others kept (issue 14.16)."""

from __future__ import annotations

import json
import shlex

import yaml


def _trusted(home) -> list:
    return (yaml.safe_load(home.config_file.read_text()) or {}).get("project_sensors", [])


def test_settings_add_trusts_one_more_project_and_keeps_the_projects_already_trusted(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("# mine\nproject_sensors: [/srv/other]\n")
    result = home.attend("settings", "add", "attend.project_sensors", str(home.project))
    assert result.returncode == 0, result.stderr
    assert _trusted(home) == ["/srv/other", str(home.project)]
    assert home.config_file.read_text().startswith("# mine\n")


def test_settings_add_of_a_value_already_listed_changes_no_byte(home, files):
    home.attend("settings", "add", "attend.project_sensors", "/srv/a")
    before = files()
    result = home.attend("settings", "add", "attend.project_sensors", "/srv/a", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["change"] == "none"
    assert "already in attend.project_sensors" in result.stderr
    assert files() == before


def test_settings_remove_takes_one_value_out_and_keeps_the_others(home):
    for project in ("/srv/a", "/srv/b", "/srv/c"):
        assert home.attend("settings", "add", "attend.project_sensors", project).returncode == 0
    result = home.attend("settings", "remove", "attend.project_sensors", "/srv/b")
    assert result.returncode == 0, result.stderr
    assert _trusted(home) == ["/srv/a", "/srv/c"]
    absent = home.attend("settings", "remove", "attend.project_sensors", "/srv/b")
    assert absent.returncode == 0 and "not in attend.project_sensors" in absent.stderr


def test_settings_add_to_a_sensor_list_extends_the_list_a_lower_layer_sets(home):
    home.write_user_sensor("tool", 'spec: 1\nname: tool\nkind: command\ncommand: {argv: [echo, "{}"]}\n'
                                   "requires: ['Bash(echo:*)']\n")
    result = home.attend("settings", "add", "attend.sensors.tool.requires", "Bash(git:*)", "--project")
    assert result.returncode == 0, result.stderr
    got = json.loads(home.attend("settings", "get", "attend.sensors.tool.requires", "--json").stdout)
    assert got["value"] == ["Bash(echo:*)", "Bash(git:*)"] and got["layer"] == "project"


def test_settings_add_to_a_key_that_is_not_a_list_exits_2_and_writes_nothing(home, files):
    before = files()
    result = home.attend("settings", "add", "attend.governor.event.limit", "3")
    assert result.returncode == 2
    assert "not a list" in result.stderr and "settings set" in result.stderr
    assert files() == before


def test_settings_add_keeps_set_s_checks(home, files):
    before = files()
    result = home.attend("settings", "add", "attend.project_sensors", "relative/dir")
    assert result.returncode == 3 and "absolute" in result.stderr
    assert files() == before


def test_the_trust_refusal_suggests_a_command_that_adds_and_keeps_the_other_projects(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("project_sensors: [/srv/other]\n")
    home.write_project_sensor("lint", 'spec: 1\nname: lint\nkind: command\ncommand: {argv: [echo, "{}"]}\n')
    [row] = [r for r in json.loads(home.attend("sensors", "list", "--json").stdout) if r["name"] == "lint"]
    assert row["state"] == "refused"
    suggested = row["message"].split("(attend settings ", 1)[1].rsplit(")", 1)[0]
    assert suggested.startswith("add attend.project_sensors ")
    result = home.attend("settings", *shlex.split(suggested))
    assert result.returncode == 0, result.stderr
    assert _trusted(home) == ["/srv/other", str(home.project)]
    [row] = [r for r in json.loads(home.attend("sensors", "list", "--json").stdout) if r["name"] == "lint"]
    assert row["state"] == "ok"


def test_settings_set_project_refusal_suggests_the_add_command(home):
    home.write_user_sensor("tool", 'spec: 1\nname: tool\nkind: command\ncommand: {argv: [echo, "{}"]}\n')
    result = home.attend("settings", "set", "attend.sensors.tool.command.timeout", "20s", "--project")
    assert result.returncode == 3
    assert f"attend settings add attend.project_sensors {shlex.quote(str(home.project))}" in result.stderr
