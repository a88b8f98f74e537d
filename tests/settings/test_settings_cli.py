"""`attend settings get|set|unset|list|help|lint` through the real CLI, on every layer."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def _json(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_get_json_gives_value_default_layer_and_file(home, weather):
    got = _json(home.attend("settings", "get", "attend.sensors.weather.interval", "--json"))
    assert got == {"key": "attend.sensors.weather.interval", "value": "5m", "default": 60.0, "layer": "user",
                   "file": str(weather), "line": 7}


def test_get_of_a_field_no_file_sets_shows_the_default_layer(home, weather):
    got = _json(home.attend("settings", "get", "attend.sensors.weather.threshold", "--json"))
    assert (got["value"], got["default"], got["layer"], got["file"]) == (2.0, 2.0, "default", None)


def test_get_prints_the_value_then_its_provenance_as_a_comment(home, weather):
    result = home.attend("settings", "get", "attend.sensors.weather.triggers.high-wind.where.wind_speed_*.above")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "40"
    assert lines[1] == f"# layer: user, file: {weather}:16, default: null"


def test_set_then_get_round_trips_in_the_user_file_and_keeps_its_comments(home, weather):
    before = weather.read_text()
    result = home.attend("settings", "set", "attend.sensors.weather.interval", "30s")
    assert result.returncode == 0, result.stderr
    assert weather.read_text() == before.replace("interval: 5m", "interval: 30s")
    got = _json(home.attend("settings", "get", "attend.sensors.weather.interval", "--json"))
    assert (got["value"], got["layer"]) == ("30s", "user")
    result = home.attend("settings", "unset", "attend.sensors.weather.interval")
    assert result.returncode == 0, result.stderr
    assert weather.read_text() == before.replace("interval: 5m\n", "")
    assert _json(home.attend("settings", "get", "attend.sensors.weather.interval", "--json"))["layer"] == "default"


def test_set_deep_inside_a_where_operator_edits_only_that_scalar(home, weather):
    before = weather.read_text()
    key = "attend.sensors.weather.triggers.high-wind.where.wind_speed_*.above"
    assert home.attend("settings", "set", key, "55").returncode == 0
    assert weather.read_text() == before.replace("{above: 40}", "{above: 55}")


def test_set_with_project_creates_a_project_file_with_only_that_field(home, weather):
    result = home.attend("settings", "set", "attend.sensors.weather.threshold", "4", "--project")
    assert result.returncode == 0, result.stderr
    project_file = home.project_sensors / "weather.yaml"
    assert project_file.read_text() == "threshold: 4\n"
    got = _json(home.attend("settings", "get", "attend.sensors.weather.threshold", "--json"))
    assert (got["value"], got["layer"], got["file"]) == (4, "project", str(project_file))
    result = home.attend("settings", "unset", "attend.sensors.weather.threshold", "--project")
    assert result.returncode == 0, result.stderr
    assert not project_file.exists()


def test_a_shipped_sensor_gets_a_user_override_holding_only_the_changed_field(home):
    result = home.attend("settings", "set", "attend.sensors.git.interval", "2m")
    assert result.returncode == 0, result.stderr
    assert (home.user_sensors / "git.yaml").read_text() == "interval: 2m\n"
    got = _json(home.attend("settings", "get", "attend.sensors.git.interval", "--json"))
    assert (got["value"], got["layer"]) == ("2m", "user")


def test_a_key_overridden_by_the_project_layer_exits_4_and_writes_nothing(home, weather, files):
    home.write_project_sensor("weather", "interval: 1m\n")
    before = files()
    result = home.attend("settings", "set", "attend.sensors.weather.interval", "30s")
    assert result.returncode == 4
    assert "overridden by the project layer" in result.stderr
    assert files() == before


@pytest.mark.parametrize(
    ("key", "value", "code", "message"),
    [
        ("attend.sensors.weather.interval", "banana", 3, "bad-duration"),
        ("attend.sensors.weather.threshold", "[1, 2]", 3, "wrong-type"),
        ("attend.sensors.weather.lane", "carrier-pigeon", 3, "bad-value"),
        ("attend.sensors.weather.triggers.high-wind.path", "$.[", 3, "path-syntax"),
        ("attend.sensors.weather.triggers.high-wind.on", "added", 3, "on-rules"),
        ("attend.sensors.weather.interval", "{unclosed", 3, "not valid YAML"),
        ("attend.sensors.weather.triggers.high-wind.where.city", "*berlin*", 3, "must be quoted"),
        ("attend.sensors.weather.intervl", "5s", 2, "did you mean interval"),
        ("attend.sensors.wether.interval", "5s", 2, "did you mean weather"),
        ("attend.sensors.weather.triggers.high-wnd.magnitude", "2", 2, "did you mean high-wind"),
        ("attend.sensors.weather.interval.seconds", "5", 2, "holds a value"),
        ("attend.sensors.weather.command.argv.first", "ls", 2, "not fields"),
        ("attend.sensors.weather", "x", 2, "whole sensor"),
        ("sensors.weather.interval", "5s", 2, "did you mean attend.sensors.weather.interval"),
        ("attend.project_sensors", "[relative/dir]", 3, "absolute"),
        ("attend.engagement.absolute_refractory", "soon", 3, "number"),
        ("attend.engagement.half_life", "30", 2, "did you mean relative_half_life"),
    ],
)
def test_a_refused_set_names_the_reason_and_leaves_every_file_byte_for_byte(home, weather, files, key, value,
                                                                            code, message):
    before = files()
    result = home.attend("settings", "set", key, value)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert files() == before


def test_a_whole_new_trigger_mapping_can_be_set(home, weather):
    value = "{path: $.current, on: changed, magnitude: 1.5, description: 'wind now {wind_speed_10m}'}"
    result = home.attend("settings", "set", "attend.sensors.weather.triggers.any-wind", value)
    assert result.returncode == 0, result.stderr
    assert "  any-wind: {path: $.current, on: changed, magnitude: 1.5, description: 'wind now {wind_speed_10m}'}\n" \
        in weather.read_text()
    got = _json(home.attend("settings", "get", "attend.sensors.weather.triggers.any-wind.magnitude", "--json"))
    assert (got["value"], got["layer"]) == (1.5, "user")


def test_a_where_property_with_a_dot_is_addressed_with_a_quoted_segment(home, weather):
    key = 'attend.sensors.weather.triggers.high-wind.where."gust.max".above'
    result = home.attend("settings", "set", key, "70")
    assert result.returncode == 0, result.stderr
    assert "gust.max:" in weather.read_text()
    assert _json(home.attend("settings", "get", key, "--json"))["value"] == 70


def test_a_project_command_field_in_an_untrusted_project_is_refused_until_the_project_is_listed(home, weather,
                                                                                              files):
    before = files()
    key = "attend.sensors.weather.command.timeout"
    result = home.attend("settings", "set", key, "20s", "--project")
    assert result.returncode == 3
    assert "project_sensors" in result.stderr
    assert files() == before
    trust = home.attend("settings", "set", "attend.project_sensors", json.dumps([str(home.project)]))
    assert trust.returncode == 0, trust.stderr
    result = home.attend("settings", "set", key, "20s", "--project")
    assert result.returncode == 0, result.stderr
    assert (home.project_sensors / "weather.yaml").read_text() == "command:\n  timeout: 20s\n"


def test_project_sensors_cannot_be_set_in_the_project_layer(home, files):
    before = files()
    result = home.attend("settings", "set", "attend.project_sensors", json.dumps([str(home.project)]), "--project")
    assert result.returncode == 3
    assert "only in the user layer" in result.stderr
    assert files() == before


def test_a_project_sensors_list_in_the_project_file_does_not_override_the_user_one(home):
    project_config = home.project / ".claude" / "attend.yaml"
    project_config.parent.mkdir(parents=True, exist_ok=True)
    project_config.write_text("project_sensors: [/elsewhere]\n")
    result = home.attend("settings", "set", "attend.project_sensors", json.dumps([str(home.project)]))
    assert result.returncode == 0, result.stderr
    assert home.config_file.read_text() == f"project_sensors: [{home.project}]\n"

def test_engagement_and_governor_keys_round_trip_through_both_config_layers(home):
    assert _json(home.attend("settings", "get", "attend.engagement.absolute_refractory", "--json"))["value"] == 60.0
    assert home.attend("settings", "set", "attend.engagement.absolute_refractory", "30").returncode == 0
    assert home.config_file.read_text() == "engagement:\n  absolute_refractory: 30\n"
    assert home.attend("settings", "set", "attend.governor.event.limit", "5", "--project").returncode == 0
    project_config = home.project / ".claude" / "attend.yaml"
    assert project_config.read_text() == "governor:\n  event:\n    limit: 5\n"
    got = _json(home.attend("settings", "get", "attend.governor.event", "--json"))
    assert got["value"] == {"cooldown": 15.0, "limit": 5, "window": 120.0}
    assert got["layer"] == "project"
    overridden = home.attend("settings", "set", "attend.governor.event.limit", "4")
    assert overridden.returncode == 4
    assert home.attend("settings", "unset", "attend.governor.event.limit", "--project").returncode == 0
    assert _json(home.attend("settings", "get", "attend.governor.event.limit", "--json"))["layer"] == "default"


def test_config_writes_keep_an_attend_section_and_its_comments(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("# mine\nattend:\n  engagement:\n    relative_peak: 2.0  # calmer\n")
    assert home.attend("settings", "set", "attend.engagement.relative_after", "4").returncode == 0
    assert home.config_file.read_text() == (
        "# mine\nattend:\n  engagement:\n    relative_peak: 2.0  # calmer\n    relative_after: 4\n")
    got = _json(home.attend("settings", "get", "attend.engagement.relative_peak", "--json"))
    assert (got["value"], got["layer"], got["line"]) == (2.0, "user", 4)


def test_a_config_file_mixing_top_level_keys_and_an_attend_section_reads_as_the_daemon_reads_it(home):
    from attend.spec import layer_paths, load_config

    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(
        "governor:\n  event: {limit: 2}\nattend:\n  engagement:\n    relative_peak: 3.0\n")
    assert load_config(layer_paths(home.project)).engagement == {"relative_peak": 3.0}
    got = _json(home.attend("settings", "get", "attend.engagement.relative_peak", "--json"))
    assert (got["value"], got["layer"], got["line"]) == (3.0, "user", 5)
    assert _json(home.attend("settings", "get", "attend.governor.event.limit", "--json"))["value"] == 2
    assert home.attend("settings", "set", "attend.engagement.relative_after", "4").returncode == 0
    assert home.attend("settings", "set", "attend.governor.event.cooldown", "20").returncode == 0
    assert home.config_file.read_text() == (
        "governor:\n  event: {limit: 2, cooldown: 20}\nattend:\n  engagement:\n    relative_peak: 3.0\n"
        "    relative_after: 4\n")
    assert home.attend("settings", "unset", "attend.engagement.relative_peak").returncode == 0
    assert "relative_peak" not in home.config_file.read_text()


def test_list_shows_what_each_file_sets_and_what_runs(home, weather):
    home.write_project_sensor("weather", "threshold: 4\n")
    listing = _json(home.attend("settings", "list", "attend.sensors.weather", "--json"))
    stored = {(e["key"], e["layer"]): e["value"] for e in listing["stored"]}
    assert stored[("attend.sensors.weather.interval", "user")] == "5m"
    assert stored[("attend.sensors.weather.threshold", "project")] == 4
    effective = {e["key"]: (e["value"], e["layer"]) for e in listing["effective"]}
    assert effective["attend.sensors.weather.threshold"] == (4, "project")
    assert effective["attend.sensors.weather.interval"] == ("5m", "user")
    assert effective["attend.sensors.weather.lane"] == ("event", "default")
    assert all(e["key"].startswith("attend.sensors.weather.") for e in listing["effective"])


def test_list_text_has_a_stored_and_an_effective_section(home, weather):
    result = home.attend("settings", "list", "attend.sensors.weather.triggers")
    assert result.returncode == 0, result.stderr
    stored, effective = result.stdout.split("effective (what runs):\n")
    assert f"attend.sensors.weather.triggers.high-wind.magnitude = 3.0    [user] {weather}:17" in stored
    assert "attend.sensors.weather.triggers.high-wind.match = all    [default]" in effective


def test_list_of_an_unknown_prefix_suggests_a_sensor(home, weather):
    result = home.attend("settings", "list", "attend.sensors.wether")
    assert result.returncode == 2
    assert "did you mean attend.sensors.weather" in result.stderr


def test_help_reads_description_type_allowed_values_and_default_from_the_spec(home):
    got = _json(home.attend("settings", "help", "attend.sensors.anything.lane", "--json"))
    assert got["type"] == "string"
    assert got["allowed"] == ["event", "message"]
    assert got["default"] == "event"
    assert "lane" in got["description"]
    text = home.attend("settings", "help", "attend.sensors.x.triggers.t.where.wind_*.above")
    assert text.returncode == 0
    assert "above" in text.stdout.splitlines()[0]
    config = _json(home.attend("settings", "help", "attend.governor.message.cooldown", "--json"))
    assert config["default"] == 3.0


def test_help_of_an_unknown_field_suggests_the_closest(home):
    result = home.attend("settings", "help", "attend.sensors.x.treshold")
    assert result.returncode == 2
    assert "did you mean threshold" in result.stderr


def test_lint_reports_each_old_key_with_the_file_and_field_replacing_it(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text((DATA / "legacy-config.yaml").read_text())
    result = home.attend("settings", "lint")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{home.config_file}:4:5: warning: [legacy-key] old key attend.sensors.weather.script")
    assert "kind: command" in lines[0] and "weather.yaml" in lines[0]
    assert "interval: 30" in lines[1]
    assert "git.yaml" in lines[2] and "threshold: 3" in lines[2]


def test_lint_is_quiet_without_old_keys(home):
    result = home.attend("settings", "lint")
    assert result.returncode == 0
    assert "no old sensors: keys" in result.stdout


def test_a_glob_starting_with_a_star_is_set_when_quoted_inside_the_value(home, weather):
    key = "attend.sensors.weather.triggers.high-wind.where.city"
    result = home.attend("settings", "set", key, '"*berlin*"')
    assert result.returncode == 0, result.stderr
    assert "      city: '*berlin*'\n" in weather.read_text()
    assert _json(home.attend("settings", "get", key, "--json"))["value"] == "*berlin*"


def test_lint_says_what_compile_check_says_for_both_config_files(home):
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text((DATA / "legacy-config.yaml").read_text())
    project_config = home.project / ".claude" / "attend.yaml"
    project_config.parent.mkdir(parents=True, exist_ok=True)
    project_config.write_text("attend:\n  sensors:\n    build:\n      script: ./ci-status.sh\n")
    lint = home.attend("settings", "lint")
    check = home.attend("compile", "--check")
    assert lint.returncode == 1
    legacy = [line for line in check.stdout.splitlines() if "[legacy-key]" in line]
    assert lint.stdout.splitlines() == legacy
    project_line = lint.stdout.splitlines()[-1]
    assert project_line.startswith(f"{project_config}:4:7:")
    assert "project_sensors" in project_line and ".claude/attend/sensors/build.yaml" in project_line


def test_a_project_file_refused_for_trust_is_listed_as_refused_and_overrides_nothing(home, weather):
    home.write_project_sensor("weather", "interval: 1s\ncommand:\n  timeout: 1s\n")
    listing = _json(home.attend("settings", "list", "attend.sensors.weather.interval", "--json"))
    refused = [e for e in listing["stored"] if e["layer"] == "project"]
    assert [(e["value"], e["refused"]) for e in refused] == [("1s", True)]
    assert [e["layer"] for e in listing["effective"]] == ["user"]
    result = home.attend("settings", "set", "attend.sensors.weather.interval", "2m")
    assert result.returncode == 0, result.stderr
    assert "interval: 2m\n" in weather.read_text()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("attend.engagement.relative_after", "0"),
        ("attend.engagement.relative_half_life", "0"),
        ("attend.engagement.live_window", "0"),
        ("attend.engagement.relative_peak", "0.5"),
        ("attend.engagement.live_window", ".nan"),
        ("attend.engagement.relative_peak", "1e400"),
        ("attend.governor.event.limit", '"many"'),
        ("attend.governor.event.limit", "1" + "0" * 400),
        ("attend.governor.event.window", "'٣s'"),
    ],
)
def test_set_refuses_an_engagement_value_the_daemon_cannot_use(home, key, value):
    out = home.attend("settings", "set", key, value)
    assert out.returncode == 3, out.stderr
    assert "nothing was written" in out.stderr
    assert not home.config_file.exists()


def test_engagement_and_governor_durations_take_the_sensor_file_forms(home):
    for key, value in (("attend.governor.event.window", "1m"), ("attend.engagement.absolute_refractory", "90s")):
        out = home.attend("settings", "set", key, value)
        assert out.returncode == 0, out.stderr
    assert "window: 1m" in home.config_file.read_text()
    check = home.attend("compile", "--check")
    assert "config.yaml" not in check.stdout, check.stdout


def test_list_marks_the_keys_of_a_refused_project_only_sensor_as_refused(home):
    home.write_project_sensor("mine", "spec: 1\nname: mine\nkind: command\ncommand: {argv: [cat, x.json]}\n")
    out = home.attend("settings", "list", "attend.sensors.mine", "--json")
    assert out.returncode == 0, out.stderr
    stored = [e for e in json.loads(out.stdout)["stored"] if e["key"].startswith("attend.sensors.mine.")]
    assert stored and all(e["refused"] for e in stored)
    text = home.attend("settings", "list", "attend.sensors.mine").stdout
    assert "attend.sensors.mine.kind = command" in text and "(refused: not read)" in text


def test_the_quoting_hint_for_a_value_starting_with_an_indicator_pastes_and_sets_that_string(home) -> None:
    # A string key takes VALUE as typed; the YAML reading (and so the hint) is --yaml's.
    refused = home.attend("settings", "set", "--yaml", "attend.sensors.git.description", "@it's \"done\"")
    assert refused.returncode == 3
    suggested = shlex.split(refused.stderr.split("e.g. ", 1)[1])
    assert suggested[:4] == ["attend", "settings", "set", "KEY"]
    done = home.attend("settings", "set", "--yaml", "attend.sensors.git.description", suggested[4])
    assert done.returncode == 0, done.stderr
    got = home.attend("settings", "get", "attend.sensors.git.description", "--json")
    assert json.loads(got.stdout)["value"] == "@it's \"done\""
