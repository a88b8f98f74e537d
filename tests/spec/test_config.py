"""config.yaml and .claude/attend.yaml: trust list, engagement/governor, and the old `sensors:` keys."""

from __future__ import annotations

from attend.spec import layer_paths, legacy_keys, load_config


def test_keys_may_stand_at_the_top_or_under_attend(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text(f"attend:\n  project_sensors: ['{home.project}']\n  governor: {{event: {{cooldown: 10}}}}\n")
    (home.project / ".claude").mkdir()
    (home.project / ".claude" / "attend.yaml").write_text("engagement: {absolute_refractory: 30}\n")
    config = load_config(layer_paths(home.project))
    assert config.diagnostics == []
    assert config.trusts(home.project)
    assert config.governor == {"event": {"cooldown": 10}}
    assert config.engagement == {"absolute_refractory": 30}


def test_a_relative_trust_entry_is_ignored_with_a_warning(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("project_sensors: [., 42]\n")
    config = load_config(layer_paths(home.project))
    assert not config.trusts(home.project)
    assert [(d.code, d.severity, d.line) for d in config.diagnostics] == [("bad-value", "warning", 1),
                                                                        ("wrong-type", "error", 1)]


def test_old_sensor_keys_name_the_file_to_write_and_the_field_to_set(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text(
        "sensors:\n  github-project:\n    script: ~/bin/gh.sh\n    interval: 120\n    timeout: 5\n")
    found = legacy_keys(layer_paths(home.project))
    assert [(d.code, d.line, d.col) for d in found] == [("legacy-key", 3, 5), ("legacy-key", 4, 5),
                                                        ("legacy-key", 5, 5)]
    script, interval, timeout = (d.message for d in found)
    assert "~/.config/attend/sensors/github-project.yaml" in interval and "`interval: 120`" in interval
    assert "argv: [bash, ~/bin/gh.sh], output: lines" in script and "kind: command" in script
    assert "`command: {timeout: 5}`" in timeout
    assert load_config(layer_paths(home.project)).diagnostics == found


def test_project_config_legacy_keys_point_at_the_project_layer(home) -> None:
    (home.project / ".claude").mkdir()
    (home.project / ".claude" / "attend.yaml").write_text("sensors:\n  +lint:\n    script: lint.sh\n")
    [d] = legacy_keys(layer_paths(home.project))
    assert ".claude/attend/sensors/lint.yaml" in d.message and "project_sensors" in d.message


def test_a_broken_config_file_is_a_positioned_error_not_an_exception(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("project_sensors: [\n")
    [d] = load_config(layer_paths(home.project)).diagnostics
    assert d.code == "yaml-syntax" and d.file == str(home.config_file)


def test_config_yaml_is_checked_with_positions_and_did_you_mean(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("governor:\n  event: {limit: many, windw: 5}\n  evnt: {}\n"
                                "engagement:\n  absolute_refractory: 90s\n  live_window: 1m\n  relative_peek: 2\n"
                                "  relative_after: 100000000000000000000000000000000000000000\n")
    config = load_config(layer_paths(home.project))
    found = {(d.line, d.col, d.code, str(d.severity)): d.message for d in config.diagnostics}
    assert "must be a whole number, not 'many'" in found[(2, 18, "wrong-type", "error")]
    assert "did you mean `window`?" in found[(2, 24, "unknown-field", "warning")]
    assert "did you mean `event`?" in found[(3, 3, "unknown-field", "warning")]
    assert "did you mean `relative_peak`?" in found[(7, 3, "unknown-field", "warning")]
    assert "must be at most 1,000,000" in found[(8, 19, "bad-value", "error")]
    assert len(found) == 5
    # Durations take the sensor files' forms; only the fields that passed reach the runtime.
    assert config.engagement == {"absolute_refractory": "90s", "live_window": "1m"}
    assert config.governor == {"event": {}}
    from attend.runtime.engagement import EngagementParams
    from attend.runtime.governor import governor_params

    params = EngagementParams.from_config(config.engagement)
    assert (params.absolute_refractory, params.live_window) == (90.0, 60.0)
    assert governor_params(config.governor)["event"].limit == 3


def test_compile_check_reports_config_yaml_problems_and_fails(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("governor:\n  event: {limit: many}\n")
    out = home.attend("compile", "--check")
    assert out.returncode == 1
    assert f"{home.config_file}:2:18: error: [wrong-type] `governor.event.limit` must be a whole number" in out.stdout
    named = home.attend("compile", "--check", str(home.config_file))
    assert named.returncode == 1 and "[wrong-type]" in named.stdout


def test_a_crate_override_is_checked_against_the_shipped_files_fields(home) -> None:
    refused = home.attend("settings", "set", "attend.sensors.git.crate.dirty_limit", '"lots"')
    assert refused.returncode == 3, refused.stderr
    assert "`crate.dirty_limit` must be a whole number" in refused.stderr
    assert not (home.user_sensors / "git.yaml").exists()
    accepted = home.attend("settings", "set", "attend.sensors.git.crate.command_timeout", "10s")
    assert accepted.returncode == 0, accepted.stderr
    home.write_user_sensor("git", "crate:\n  dirty_limt: 3\n  commit_limit: -1\n  command_timeout: soon\n")
    home.write_user_sensor("processes", "crate:\n  watch: [make, 1]\n  ignore_own_descendants: 'no'\n")
    check = home.attend("compile", "--check")
    assert check.returncode == 1
    git, processes = home.user_sensors / "git.yaml", home.user_sensors / "processes.yaml"
    for expected in (f"{git}:2:3: error: [unknown-field] unknown field `crate.dirty_limt` (did you mean `dirty_limit`?)",
                     f"{git}:3:17: error: [bad-value] `crate.commit_limit` must be from 0 to 1,000,000",
                     f"{git}:4:20: error: [bad-duration] `crate.command_timeout` 'soon' is not a duration",
                     f"{processes}:2:10: error: [wrong-type] `crate.watch` items: must be a string",
                     f"{processes}:3:27: error: [wrong-type] `crate.ignore_own_descendants` must be true or false"):
        assert expected in check.stdout, check.stdout


def test_config_yaml_quotes_a_bad_value_in_yaml_words(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("engagement:\n  live_window: true\n  relative_peak: null\n")
    messages = [d.message for d in load_config(layer_paths(home.project)).diagnostics]
    assert any(m.startswith("`engagement.live_window` true is not a duration") for m in messages), messages
    assert any(m.startswith("`engagement.relative_peak` must be a number, not null;") for m in messages), messages


def test_the_runtime_takes_its_defaults_from_the_one_config_declaration() -> None:
    from dataclasses import asdict

    from attend.runtime.engagement import EngagementParams
    from attend.runtime.governor import DEFAULT_GOVERNORS
    from attend.spec.config import CONFIG_SCHEMA

    runtime = {("engagement", name): value for name, value in asdict(EngagementParams()).items()}
    runtime |= {("governor", lane, name): value
                for lane, params in DEFAULT_GOVERNORS.items() for name, value in asdict(params).items()}
    assert runtime == {path: f.default for path, f in CONFIG_SCHEMA.items() if path[0] in ("engagement", "governor")}
    assert (EngagementParams().absolute_refractory, DEFAULT_GOVERNORS["event"].limit) == (60.0, 3)


def test_a_governor_lane_that_is_not_a_mapping_names_its_fields(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("attend:\n  governor:\n    event: 5\n  engagement: []\n")
    found = {d.message for d in load_config(layer_paths(home.project)).diagnostics}
    assert found == {"`attend.governor.event` must be a mapping of cooldown, limit and window",
                     "`engagement` must be a mapping"}


def test_delivery_conduits_takes_one_of_its_words(home) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("delivery: {conduits: hooks}\n")
    (home.project / ".claude").mkdir()
    (home.project / ".claude" / "attend.yaml").write_text("delivery: {conduits: pigeons, condiuts: auto}\n")
    config = load_config(layer_paths(home.project))
    assert config.delivery == {"conduits": "hooks"}
    assert sorted((d.line, d.col, d.code) for d in config.diagnostics) == [(1, 22, "bad-value"),
                                                                           (1, 31, "unknown-field")]
    assert "`delivery.conduits` must be one of auto, monitor, hooks, not 'pigeons'; the default is used" in {
        d.message for d in config.diagnostics}
