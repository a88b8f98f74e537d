"""`attend run` and a config.yaml it cannot use: the problem is said on stderr, the sensors still run."""

from __future__ import annotations

import pytest
from daemon_rig import sensors_json, wait_until

pytestmark = pytest.mark.slow


def _stderr_has(d, *parts: str) -> bool:
    return any(all(p in line for p in parts) for line in d.stderr)


def test_a_config_file_that_is_a_list_is_reported_on_stderr_and_the_sensors_still_run(
    items_sensor, daemon, quiet_home
) -> None:
    quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
    quiet_home.config_file.write_text("- engagement\n- governor\n")
    items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    wait_until(lambda: _stderr_has(d, "config.yaml:1:1", "not-a-mapping"), what="the config problem on stderr")
    assert d.stop() == 0


def test_a_config_problem_introduced_while_running_is_reported_once(items_sensor, daemon, quiet_home) -> None:
    items_sensor()
    d = daemon()  # writes FAST_CONFIG, which has no problem
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    assert not any("config:" in line for line in d.stderr)
    good = quiet_home.config_file.read_text()
    quiet_home.config_file.write_text(good + "engagment: {absolute_refractory: 5}\n")
    wait_until(lambda: _stderr_has(d, "unknown config key `engagment`"), what="the typo on stderr")
    # Another reload (a sensor file changes) does not repeat it.
    items_sensor("other")
    wait_until(lambda: "other" in sensors_json(quiet_home) and sensors_json(quiet_home)["other"]["last_poll"],
               what="the reload")
    assert sum("engagment" in line for line in d.stderr) == 1
    assert d.stop() == 0


def test_a_sensor_file_that_stops_validating_is_logged_once_with_its_error(items_sensor, daemon, quiet_home) -> None:
    quiet_home.write_user_sensor("broken", "spec: 1\nname: broken\nkind: command\ninterval: soon\ncommand: {argv: ['true']}\n")
    items_sensor()
    d = daemon()
    wait_until(lambda: _stderr_has(d, "sensor broken", "broken.yaml:4:", "bad-duration"), what="the invalid file logged")
    path = quiet_home.user_sensors / "items.yaml"
    good = path.read_text()
    path.write_text(good + "\n  oops: [\n")
    wait_until(lambda: _stderr_has(d, "sensor items", "items.yaml", "last good version keeps running"),
               what="the broken edit logged")
    items_sensor("other")  # another reload: nothing new to say about broken or items
    wait_until(lambda: "other" in sensors_json(quiet_home) and sensors_json(quiet_home)["other"]["last_poll"],
               what="the reload")
    assert sum("sensor broken" in line for line in d.stderr) == 1
    assert sum("sensor items" in line for line in d.stderr) == 1
    assert d.stop() == 0


def test_run_for_a_project_directory_that_does_not_exist_exits_2_at_once(quiet_home) -> None:
    missing = quiet_home.root / "no-such-project"
    out = quiet_home.attend("run", "--project", str(missing), timeout=30)
    assert out.returncode == 2
    assert out.stderr == f"attend: the project directory {missing} does not exist (or is not a directory)\n"
    assert out.stdout == ""


def test_an_engagement_value_the_model_cannot_use_is_ignored_and_the_daemon_keeps_disclosing(
    items_sensor, daemon, quiet_home
) -> None:
    quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
    quiet_home.config_file.write_text("engagement: {relative_after: 0, relative_half_life: 0}\n")
    items = items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    items.set([{"id": 1}])
    assert d.wait_for(lambda ls: len(ls) >= 1) == ["[attend sensor=items priority=medium] new item 1"]
    assert _stderr_has(d, "config.yaml:1:53: error: [bad-value] `engagement.relative_half_life` must be more than 0",
                       "the default is used")
    assert d.proc.poll() is None
    assert d.stop() == 0
