"""How `settings set|add|remove` read VALUE: a string key takes it as typed, other keys read YAML, and a
value YAML would read as less than was typed is refused (issue 27, items 1 and 2)."""

from __future__ import annotations

import json


def _get(home, key):
    done = home.attend("settings", "get", key, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["value"]


def test_a_string_key_keeps_a_hash_after_a_space_instead_of_cutting_the_value_there(home, weather):
    key = "attend.sensors.weather.triggers.high-wind.description"
    result = home.attend("settings", "set", key, "PR #{id} needs review")
    assert result.returncode == 0, result.stderr
    assert _get(home, key) == "PR #{id} needs review"


def test_a_string_key_takes_a_template_starting_with_a_brace_without_quoting(home, weather):
    key = "attend.sensors.weather.triggers.high-wind.description"
    result = home.attend("settings", "set", key, "{wind_speed_10m} is new")
    assert result.returncode == 0, result.stderr
    assert _get(home, key) == "{wind_speed_10m} is new"


def test_yaml_flag_reads_a_string_key_as_yaml(home, weather):
    key = "attend.sensors.weather.description"
    result = home.attend("settings", "set", key, "'quoted'", "--yaml")
    assert result.returncode == 0, result.stderr
    assert _get(home, key) == "quoted"
    assert home.attend("settings", "set", key, "'quoted'").returncode == 0
    assert _get(home, key) == "'quoted'"


def test_a_yaml_comment_in_a_non_string_value_is_refused_and_nothing_is_written(home, weather, files):
    before = files()
    result = home.attend("settings", "set", "attend.sensors.weather.triggers.high-wind.where.city", "a #b")
    assert result.returncode == 3
    assert "comment" in result.stderr and "'\"a #b\"'" in result.stderr
    assert files() == before


def test_a_value_starting_with_a_brace_that_is_not_yaml_gets_the_quoting_hint(home, weather, files):
    before = files()
    result = home.attend("settings", "set", "attend.sensors.weather.triggers.high-wind.where.city", "{x} y")
    assert result.returncode == 3
    assert "must be quoted inside the value" in result.stderr
    assert files() == before


def test_add_to_a_list_of_strings_takes_the_item_as_typed(home, weather):
    key = "attend.sensors.weather.requires"
    result = home.attend("settings", "add", key, "Bash(curl #x)")
    assert result.returncode == 0, result.stderr
    assert _get(home, key) == ["Bash(curl #x)"]


def test_removing_the_last_added_value_deletes_the_override_file_it_leaves_empty(home):
    key = "attend.sensors.git.requires"
    shipped = _get(home, key)
    assert home.attend("settings", "add", key, "Bash(ls:*)").returncode == 0
    assert (home.user_sensors / "git.yaml").is_file()
    result = home.attend("settings", "remove", key, "Bash(ls:*)")
    assert result.returncode == 0, result.stderr
    assert not (home.user_sensors / "git.yaml").exists()  # not `requires: [the shipped list]`
    assert _get(home, key) == shipped


def test_removing_the_only_value_of_a_list_no_layer_under_sets_unsets_the_key(home, weather):
    key = "attend.sensors.weather.requires"
    assert home.attend("settings", "add", key, "Bash(curl:*)").returncode == 0
    result = home.attend("settings", "remove", key, "Bash(curl:*)")
    assert result.returncode == 0, result.stderr
    assert "requires" not in weather.read_text()  # not `requires: []`


def test_removing_the_last_trusted_project_unsets_the_key_in_config_yaml(home, tmp_path):
    key = "attend.project_sensors"
    assert home.attend("settings", "add", key, str(tmp_path)).returncode == 0
    result = home.attend("settings", "remove", key, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "project_sensors" not in home.config_file.read_text()
