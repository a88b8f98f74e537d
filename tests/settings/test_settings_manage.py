"""`attend sensors copy|rename|delete` through the real CLI: the rules for each layer."""

from __future__ import annotations

import json

import pytest


def _effective(home, name):
    result = home.attend("settings", "get", f"attend.sensors.{name}", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_shipped_sensor_copies_to_the_user_layer_as_its_file_with_the_new_name(home):
    from attend.spec import layer_paths

    shipped = layer_paths(home.project).shipped / "git.yaml"
    result = home.attend("sensors", "copy", "git", "git-fast")
    assert result.returncode == 0, result.stderr
    copied = home.user_sensors / "git-fast.yaml"
    assert copied.read_text() == shipped.read_text().replace("name: git\n", "name: git-fast\n")
    assert _effective(home, "git-fast")["layer"] == "user"


def test_a_layered_sensor_copies_as_its_effective_merged_definition(home, weather):
    home.write_project_sensor("weather", "threshold: 4  # louder here\n")
    # A command sensor in the project layer runs only in a trusted project: refused until it is listed.
    refused = home.attend("sensors", "copy", "weather", "wind", "--project")
    assert refused.returncode == 3
    assert "project_sensors" in refused.stderr
    assert not (home.project_sensors / "wind.yaml").exists()
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"project_sensors: [{home.project}]\n")
    result = home.attend("sensors", "copy", "weather", "wind", "--project")
    assert result.returncode == 0, result.stderr
    text = (home.project_sensors / "wind.yaml").read_text()
    assert text.startswith("spec: 1\nname: wind\ndescription: Wind at the office\nkind: command\n")
    assert "threshold: 4\n" in text and "interval: 5m\n" in text
    assert "high-wind:" in text


def test_copy_refuses_a_destination_that_exists_in_any_layer(home, weather, files):
    before = files()
    result = home.attend("sensors", "copy", "weather", "git")
    assert result.returncode == 3
    assert "already exists" in result.stderr
    assert files() == before


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "x/y", ".hidden", "Upper"])
def test_names_that_could_escape_the_layer_folder_are_refused_with_exit_2(home, weather, files, name):
    before = files()
    for args in (("copy", "weather", name), ("rename", "weather", name), ("delete", name)):
        result = home.attend("sensors", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert "not a sensor name" in result.stderr
    assert files() == before


def test_copy_of_an_unknown_sensor_suggests_the_closest(home, weather):
    result = home.attend("sensors", "copy", "wether", "wind")
    assert result.returncode == 2
    assert "did you mean weather" in result.stderr


def test_a_user_sensor_renames_with_its_comments_and_the_new_name(home, weather):
    before = weather.read_text()
    result = home.attend("sensors", "rename", "weather", "wind")
    assert result.returncode == 0, result.stderr
    assert not weather.exists()
    assert (home.user_sensors / "wind.yaml").read_text() == before.replace("name: weather\n", "name: wind\n")


def test_a_shipped_sensor_cannot_be_renamed_or_deleted(home, files):
    before = files()
    rename = home.attend("sensors", "rename", "git", "git2")
    assert rename.returncode == 3
    assert "shipped sensor" in rename.stderr and "copy" in rename.stderr
    delete = home.attend("sensors", "delete", "git")
    assert delete.returncode == 3
    assert "shipped sensor" in delete.stderr and "enabled false" in delete.stderr
    assert files() == before


def test_renaming_a_user_override_moves_the_merged_definition_and_restores_the_shipped_one(home):
    home.write_user_sensor("git", "interval: 7s\n")
    result = home.attend("sensors", "rename", "git", "git-mine")
    assert result.returncode == 0, result.stderr
    assert not (home.user_sensors / "git.yaml").exists()
    mine = (home.user_sensors / "git-mine.yaml").read_text()
    assert "name: git-mine\n" in mine and "interval: 7s\n" in mine and "kind: crate\n" in mine
    assert _effective(home, "git")["layer"] == "shipped"


def test_rename_refuses_an_existing_destination(home, weather, files):
    home.write_user_sensor("wind", (home.user_sensors / "weather.yaml").read_text().replace("weather", "wind"))
    before = files()
    result = home.attend("sensors", "rename", "weather", "wind")
    assert result.returncode == 3
    assert files() == before


def test_deleting_a_user_sensor_removes_its_file(home, weather):
    result = home.attend("sensors", "delete", "weather")
    assert result.returncode == 0, result.stderr
    assert not weather.exists()
    assert home.attend("settings", "get", "attend.sensors.weather.interval").returncode == 2


def test_deleting_a_project_override_falls_back_to_the_lower_layer(home, weather):
    override = home.write_project_sensor("weather", "interval: 1m\n")
    result = home.attend("sensors", "delete", "weather", "--project")
    assert result.returncode == 0, result.stderr
    assert not override.exists()
    assert "now runs its user definition" in result.stdout
    assert weather.exists()


def test_delete_without_a_file_in_that_layer_is_refused(home, weather, files):
    before = files()
    result = home.attend("sensors", "delete", "weather", "--project")
    assert result.returncode == 3
    assert "no project file" in result.stderr
    assert files() == before


def test_a_project_sensor_renames_and_deletes_in_the_project_layer(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"project_sensors: [{home.project}]\n")
    text = "spec: 1\nname: build  # ours\nkind: command\ncommand:\n  argv: [make, status]\n"
    home.write_project_sensor("build", text)
    result = home.attend("sensors", "rename", "build", "ci", "--project")
    assert result.returncode == 0, result.stderr
    # The comment keeps its column.
    assert (home.project_sensors / "ci.yaml").read_text() == text.replace("name: build  #", "name: ci     #")
    assert not (home.project_sensors / "build.yaml").exists()
    user_side = home.attend("sensors", "delete", "ci")
    assert user_side.returncode == 3
    assert "no user file" in user_side.stderr
    result = home.attend("sensors", "delete", "ci", "--project")
    assert result.returncode == 0, result.stderr
    assert not (home.project_sensors / "ci.yaml").exists()


def test_a_shipped_sensor_copied_into_an_untrusted_project_is_refused_with_the_way_to_trust_it(home, files):
    before = files()
    result = home.attend("sensors", "copy", "git", "git-here", "--project")
    assert result.returncode == 3
    assert "project_sensors" in result.stderr
    assert files() == before


ITEMS = """\
spec: 1
name: items
kind: command
command: {argv: [echo, '{"items": []}']}
triggers:
  new:
    path: $.items[*]
    key: id
    on: added
    magnitude: 3
    description: "new item {id}"
"""

ITEMS_TEST = """\
sensor: items   # named: the file also works away from items.yaml
polls:
  - result: {items: []}
  - result: {items: [{id: 1}]}
    expect: [{description: new item 1}]
"""


def test_rename_moves_the_sensors_test_file_and_the_test_still_passes(home):
    home.write_user_sensor("items", ITEMS)
    (home.user_sensors / "items.test.yaml").write_text(ITEMS_TEST)
    result = home.attend("sensors", "rename", "items", "things")
    assert result.returncode == 0, result.stderr
    assert not (home.user_sensors / "items.test.yaml").exists()
    moved = home.user_sensors / "things.test.yaml"
    assert moved.read_text() == ITEMS_TEST.replace("sensor: items", "sensor: things")
    assert "things.test.yaml" in result.stdout
    run = home.attend("test", str(moved))
    assert run.returncode == 0, run.stdout + run.stderr


def test_delete_removes_the_sensors_test_file(home):
    home.write_user_sensor("items", ITEMS)
    (home.user_sensors / "items.test.yaml").write_text(ITEMS_TEST)
    result = home.attend("sensors", "delete", "items")
    assert result.returncode == 0, result.stderr
    assert not (home.user_sensors / "items.yaml").exists()
    assert not (home.user_sensors / "items.test.yaml").exists()
    assert "items.test.yaml" in result.stdout


def test_rename_onto_an_existing_test_file_is_refused_and_moves_nothing(home, files):
    home.write_user_sensor("items", ITEMS)
    (home.user_sensors / "items.test.yaml").write_text(ITEMS_TEST)
    (home.user_sensors / "things.test.yaml").write_text("polls: []\n")
    before = files()
    result = home.attend("sensors", "rename", "items", "things")
    assert result.returncode == 3
    assert "things.test.yaml already exists" in result.stderr
    assert files() == before
