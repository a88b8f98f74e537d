"""`--layer user|project` on every write: `--project DIR` alone keeps its documented meaning (it names
the project and picks its layer), `--layer` says the layer whatever DIR is, and each write's output
names the layer and the file it wrote (issue 27, item 8)."""

from __future__ import annotations

import json


def test_layer_user_with_project_dir_writes_the_user_file_not_a_project_override(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = home.attend("settings", "set", "attend.sensors.git.interval", "2m",
                         "--project", str(elsewhere), "--layer", "user")
    assert result.returncode == 0, result.stderr
    assert (home.user_sensors / "git.yaml").read_text() == "interval: 2m\n"
    assert not (elsewhere / ".claude").exists()
    assert f"(user: {home.user_sensors / 'git.yaml'})" in result.stdout


def test_project_alone_still_picks_the_project_layer(home):
    result = home.attend("settings", "set", "attend.sensors.git.interval", "2m", "--project")
    assert result.returncode == 0, result.stderr
    assert (home.project_sensors / "git.yaml").read_text() == "interval: 2m\n"


def test_layer_project_without_project_writes_the_working_directorys_project_layer(home):
    result = home.attend("settings", "set", "attend.sensors.git.interval", "2m", "--layer", "project", "--json")
    assert result.returncode == 0, result.stderr
    done = json.loads(result.stdout)
    assert (done["layer"], done["file"]) == ("project", str(home.project_sensors / "git.yaml"))


def test_unset_add_and_remove_take_layer_and_name_the_layer_and_file(home):
    key = "attend.sensors.git.requires"
    added = home.attend("settings", "add", key, "Bash(ls:*)", "--project", "--layer", "user")
    assert added.returncode == 0, added.stderr
    assert str(home.user_sensors / "git.yaml") in added.stdout and "user" in added.stdout
    removed = home.attend("settings", "remove", key, "Bash(ls:*)", "--layer", "user")
    assert removed.returncode == 0, removed.stderr
    assert "the user layer" in removed.stdout and str(home.user_sensors / "git.yaml") in removed.stdout


def test_sensors_copy_rename_delete_take_layer_and_name_the_layer_and_file(home):
    copied = home.attend("sensors", "copy", "git", "git-fast", "--project", "--layer", "user")
    assert copied.returncode == 0, copied.stderr
    mine = home.user_sensors / "git-fast.yaml"
    assert mine.is_file() and not (home.project_sensors / "git-fast.yaml").exists()
    assert f"in the user layer: {mine}" in copied.stdout
    renamed = home.attend("sensors", "rename", "git-fast", "git-quick", "--layer", "user")
    assert renamed.returncode == 0, renamed.stderr
    assert f"in the user layer: {home.user_sensors / 'git-quick.yaml'}" in renamed.stdout
    deleted = home.attend("sensors", "delete", "git-quick", "--layer", "user")
    assert deleted.returncode == 0, deleted.stderr
    assert f"deleted {home.user_sensors / 'git-quick.yaml'} (the user layer)" in deleted.stdout
