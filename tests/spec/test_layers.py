"""Layering in a temporary XDG home: discovery, deep merge, provenance, validation of the merged sensor, trust."""

from __future__ import annotations

from pathlib import Path

from attend.spec import layer_paths, load_set

WEATHER = """\
spec: 1
name: weather
kind: command
interval: 5m
command:
  argv: [curl, -sf, "https://example.invalid"]
triggers:
  high-wind:
    path: $.current
    on: enters
    where: {wind: {above: 40}}
    magnitude: 3
"""


def trust(home, project: Path) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"project_sensors:\n  - {project}\n")


def test_layer_paths_follow_the_xdg_variables_and_their_defaults(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "relative/ignored"}
    paths = layer_paths(tmp_path / "proj", env)
    assert paths.user == tmp_path / ".config" / "attend" / "sensors"
    assert paths.shipped_projection == tmp_path / ".local/share/agent-ways/attend/sensors"
    assert paths.state_dir == tmp_path / ".local/state/attend"
    assert paths.project == tmp_path / "proj/.claude/attend/sensors"
    assert paths.project_config_file == tmp_path / "proj/.claude/attend.yaml"
    assert paths.shipped.name == "sensors.d" and paths.shipped.is_dir()


def test_a_user_file_defines_a_sensor_with_defaults_and_durations_normalised(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "ok", sensor.diagnostics
    assert sensor.data["interval"] == 300.0
    assert sensor.data["min_interval"] == 15.0
    assert sensor.data["command"]["timeout"] == 10.0
    assert sensor.data["command"]["output"] == "json"
    assert sensor.data["triggers"]["high-wind"]["magnitude"] == 3.0
    assert sensor.data["triggers"]["high-wind"]["match"] == "all"
    assert sensor.layer == "user"
    assert sensor.origin("interval").line == 4


def test_a_project_override_of_tuning_fields_merges_by_key_and_keeps_provenance(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    home.write_project_sensor("weather", "interval: 30s\ntriggers:\n  high-wind:\n    magnitude: 5\n")
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "ok", sensor.diagnostics
    assert sensor.data["interval"] == 30.0
    high = sensor.data["triggers"]["high-wind"]
    assert (high["magnitude"], high["on"], high["path"]) == (5.0, "enters", "$.current")
    assert sensor.origin("interval").layer == "project"
    assert sensor.origin("triggers", "high-wind", "magnitude").layer == "project"
    assert sensor.origin("triggers", "high-wind", "on").layer == "user"
    assert sensor.origin("command", "argv").layer == "user"


def test_validation_applies_to_the_merged_sensor_and_blames_the_supplying_layer(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("interval: 5m", "interval: 5m\nmin_interval: 1m"))
    home.write_project_sensor("weather", "interval: 30s\n")
    sensor = load_set(home.project).sensors["weather"]
    [d] = sensor.diagnostics
    assert d.code == "interval-order"
    assert d.file == str(home.user_sensors / "weather.yaml") and d.line == 5


def test_enabled_false_in_a_higher_layer_turns_a_sensor_off(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    home.write_project_sensor("weather", "enabled: false\n")
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "ok" and sensor.enabled is False


def test_an_untrusted_project_command_sensor_is_refused(home) -> None:
    home.write_project_sensor("weather", WEATHER)
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "refused"
    assert [d.code for d in sensor.diagnostics] == ["project-refused"]
    assert sensor.diagnostics[0].line == 3  # the `kind` key


def test_a_trusted_project_may_define_a_command_sensor(home) -> None:
    home.write_project_sensor("weather", WEATHER)
    trust(home, home.project)
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "ok", sensor.diagnostics


def test_an_untrusted_project_file_changing_a_lower_command_is_left_out_with_a_warning(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    home.write_project_sensor("weather", "interval: 10s\ncommand:\n  argv: [rm, -rf, /]\n")
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.status == "ok"
    assert sensor.data["command"]["argv"][0] == "curl"
    assert sensor.data["interval"] == 300.0  # the whole file is left out, not only its command
    [d] = sensor.diagnostics
    assert (d.code, d.severity, d.line) == ("project-refused", "warning", 3)


def test_a_project_file_cannot_grant_itself_trust(home) -> None:
    home.write_project_sensor("weather", WEATHER)
    (home.project / ".claude" / "attend.yaml").write_text(f"project_sensors: [{home.project}]\n")
    sensor_set = load_set(home.project)
    assert sensor_set.sensors["weather"].status == "refused"
    assert [d.code for d in sensor_set.diagnostics] == ["untrusted-key"]


def test_a_broken_file_never_stops_the_others(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    home.write_user_sensor("broken", "spec: 1\nkind: [\n")
    (home.user_sensors / "binary.yaml").write_bytes(b"\x00\xff\xfe")
    sensors = load_set(home.project).sensors
    assert sensors["weather"].status == "ok"
    assert sensors["broken"].status == "invalid"
    assert sensors["binary"].diagnostics[0].code == "encoding"


def test_test_files_and_hidden_files_are_not_sensors(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    (home.user_sensors / "weather.test.yaml").write_text("polls: []\n")
    (home.user_sensors / ".#weather.yaml").write_text("junk\n")
    assert set(load_set(home.project).sensors) >= {"weather"}
    assert "weather.test" not in load_set(home.project).sensors


def test_an_override_file_for_an_unknown_sensor_says_so(home) -> None:
    home.write_user_sensor("nosuch", "interval: 5s\n")
    sensor = load_set(home.project).sensors["nosuch"]
    assert [d.code for d in sensor.diagnostics] == ["layer-override"]


def test_a_list_in_a_higher_layer_replaces_the_lower_list_and_its_provenance(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("kind: command", "kind: command\nrequires: [a, b, c]"))
    home.write_project_sensor("weather", "requires: [x]\n")
    sensor = load_set(home.project).sensors["weather"]
    assert sensor.data["requires"] == ["x"]
    assert sensor.origin("requires", "0").layer == "project"
    assert sensor.origin("requires", "1") is None


def test_merging_never_modifies_the_files_own_data(home) -> None:
    home.write_user_sensor("weather", WEATHER)
    home.write_project_sensor("weather", "triggers:\n  high-wind:\n    magnitude: 9\n")
    sensor = load_set(home.project).sensors["weather"]
    user_file = sensor.files[0]
    assert user_file.data["triggers"]["high-wind"]["magnitude"] == 3
    assert sensor.data["triggers"]["high-wind"]["magnitude"] == 9.0


def test_a_file_in_the_shipped_projection_is_checked_as_the_shipped_sensor(home) -> None:
    from attend.spec import load_paths

    projection = layer_paths(home.project).shipped_projection
    projection.mkdir(parents=True)
    shipped = layer_paths(home.project).shipped / "keepwarm.yaml"
    (projection / "keepwarm.yaml").write_text(shipped.read_text())
    sensor_set = load_paths([projection / "keepwarm.yaml"], home.project)
    keepwarm = sensor_set.sensors["keepwarm"]
    assert keepwarm.layer == "shipped" and keepwarm.diagnostics == []


def test_loading_again_builds_only_the_sensors_whose_files_changed(home) -> None:
    home.write_user_sensor("mine", "spec: 1\nname: mine\nkind: command\ncommand: {argv: [echo]}\ninterval: 5m\n")
    first = load_set(home.project).sensors
    first["mine"].diagnostics.append("a caller's own note")  # type: ignore[arg-type]
    first["mine"].status = "invalid"
    again = load_set(home.project).sensors
    assert again["mine"].data is first["mine"].data and again["git"].data is first["git"].data  # built once
    assert again["mine"].diagnostics == [] and again["mine"].status == "ok"  # a caller's changes stay its own
    home.write_user_sensor("mine", "spec: 1\nname: mine\nkind: command\ncommand: {argv: [echo]}\ninterval: 7m\n")
    changed = load_set(home.project).sensors
    assert changed["mine"].data["interval"] == 420 and changed["git"].data is first["git"].data
    home.write_user_sensor("mine", "spec: 1\nname: mine\nkind: command\ncommand: {argv: [echo]}\ninterval: soon\n")
    broken = load_set(home.project).sensors["mine"]
    assert broken.status == "invalid" and [d.code for d in broken.diagnostics] == ["bad-duration"]


def test_a_sensor_that_failed_to_build_by_a_bug_is_built_again_next_time(home, monkeypatch) -> None:
    from attend.spec import layers

    home.write_user_sensor("mine", "spec: 1\nname: mine\nkind: command\ncommand: {argv: [echo]}\n")
    real = layers.validate_sensor
    monkeypatch.setattr(layers, "validate_sensor", lambda *a, **k: 1 / 0)  # a bug, once
    assert [d.code for d in load_set(home.project).sensors["mine"].diagnostics] == ["check-failed"]
    monkeypatch.setattr(layers, "validate_sensor", real)
    assert load_set(home.project).sensors["mine"].status == "ok"
