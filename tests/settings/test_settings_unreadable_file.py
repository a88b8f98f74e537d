"""Every settings action on a sensor whose file cannot be read says so: the loader's one-line positioned
error (`file:line:col: error: [yaml-syntax] ...`, as `compile --check` prints it) and exit 3, never the
defaults a missing file would give nor PyYAML's multi-line text (newuser items 1 and 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

#: The weather sensor with a stray code fence at its end (copied from a docs block): line 19 is "```".
FENCED = (DATA / "weather.yaml").read_text() + "```\n"


@pytest.fixture
def fenced(home) -> Path:
    return home.write_user_sensor("weather", FENCED)


def _positioned(path: Path) -> str:
    return f"attend: {path}:19:1: error: [yaml-syntax] "


@pytest.mark.parametrize("argv", [
    ("settings", "get", "attend.sensors.weather.interval"),
    ("settings", "get", "attend.sensors.weather.triggers.high-wind.magnitude"),
    ("settings", "set", "attend.sensors.weather.interval", "2m"),
    ("settings", "set", "attend.sensors.weather.triggers.high-wind.magnitude", "2"),
    ("settings", "set", "attend.sensors.weather.interval", "2m", "--project"),
    ("settings", "unset", "attend.sensors.weather.interval"),
    ("settings", "add", "attend.sensors.weather.command.argv", "verbose"),
    ("settings", "remove", "attend.sensors.weather.command.argv", "curl"),
    ("settings", "list", "attend.sensors.weather"),
    ("settings", "list", "attend.sensors.weather.interval"),
    ("sensors", "copy", "weather", "weather2"),
    ("sensors", "rename", "weather", "weather2"),
], ids=" ".join)
def test_a_settings_action_on_a_sensor_whose_file_is_not_yaml_prints_the_positioned_error_and_exits_3(
        home, fenced, files, argv):
    before = files()
    result = home.attend_process(*argv)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith(_positioned(fenced)), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line: no PyYAML excerpt
    assert "<unicode string>" not in result.stderr
    assert files() == before


def test_settings_list_of_every_key_lists_the_readable_sensors_and_names_the_unreadable_one(home, fenced, files):
    result = home.attend_process("settings", "list")
    assert result.returncode == 3, result.stderr
    assert "attend.sensors.weather" not in result.stdout  # no defaults shown as if the file set nothing
    assert "attend.sensors.git.interval" in result.stdout
    assert result.stderr.startswith(_positioned(fenced)) and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize(("text", "code"), [("name: weather\n\xff\n", "encoding"), ("- a list\n", "not-a-mapping")])
def test_a_settings_get_on_a_sensor_file_that_is_not_a_mapping_or_not_utf8_names_the_problem(home, text, code):
    path = home.user_sensors / "weather.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("latin-1"))
    result = home.attend("settings", "get", "attend.sensors.weather.interval")
    assert result.returncode == 3
    assert result.stderr.startswith(f"attend: {path}:") and f"error: [{code}]" in result.stderr, result.stderr


def test_a_sensor_whose_file_is_not_yaml_can_still_be_deleted(home, fenced):
    result = home.attend("sensors", "delete", "weather")
    assert result.returncode == 0, result.stderr
    assert not fenced.exists()


def test_a_config_file_that_is_not_yaml_is_refused_with_the_positioned_error(home):
    config = home.config / "attend" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("engagement:\n  half_life: [1\n")
    result = home.attend("settings", "set", "attend.engagement.absolute_refractory", "30")
    assert result.returncode == 3
    assert result.stderr.startswith(f"attend: {config}:3:1: error: [yaml-syntax] "), result.stderr
    assert result.stderr.count("\n") == 1
