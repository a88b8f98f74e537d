"""The real daemon and project trust: a refusal takes effect at once (DESIGN.md, Layers)."""

from __future__ import annotations

import json
import sys

import pytest
from daemon_rig import alive, recorded_state, sensor_yaml, sensors_json, wait_until

pytestmark = pytest.mark.slow


def _polls(log) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_revoking_trust_stops_a_project_command_sensor_at_once(daemon, quiet_home) -> None:
    home = quiet_home
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"project_sensors: [{json.dumps(str(home.project))}]\n")
    # The project's command writes its pid to build.log and then stays busy; the user's `clock` logs each
    # of its polls, so the test can wait for polls to happen instead of sleeping.
    build_log, clock_log = home.root / "build.log", home.root / "clock.log"
    build = f"import os, time\nopen({str(build_log)!r}, 'a').write(f'{{os.getpid()}}\\n')\ntime.sleep(60)"
    home.write_project_sensor("build", sensor_yaml("build", [sys.executable, "-c", build], command={"timeout": "90s"}))
    clock = f"open({str(clock_log)!r}, 'a').write('poll\\n'); print('{{}}')"
    home.write_user_sensor("clock", sensor_yaml("clock", [sys.executable, "-c", clock], min_interval="1s"))
    d = daemon()
    wait_until(lambda: _polls(build_log), what="the trusted project command to run")
    [pid] = _polls(build_log)
    assert alive(int(pid))

    revoke = home.attend("settings", "set", "attend.project_sensors", "[]")
    assert revoke.returncode == 0, revoke.stderr

    wait_until(lambda: not alive(int(pid)), what="the running project command to be killed")
    row = sensors_json(home)["build"]
    assert row["state"] == "refused" and "project_sensors" in row["message"]
    assert not row["running_last_good"]
    seen = len(_polls(clock_log))
    wait_until(lambda: len(_polls(clock_log)) >= seen + 3, what="three more polls of another sensor")
    assert _polls(build_log) == [pid], "the refused project command ran again"
    assert not any("last good version keeps running" in line for line in d.stderr)
    assert d.stop() == 0


def test_a_project_sensor_trusted_after_the_daemon_stopped_is_no_longer_shown_refused(daemon, quiet_home) -> None:
    # The daemon records the refusal in the store; once it stops, trusting the project must show at once in
    # `attend sensors` (as `explain`, `doctor` and `sensors poll` already do), not at the next `attend run`.
    home = quiet_home
    home.write_project_sensor("build", sensor_yaml("build", [sys.executable, "-c", "print('{}')"]))
    d = daemon()
    wait_until(lambda: recorded_state(home, "build") == ("refused", "load"),
               what="the daemon to record the refusal")
    assert d.stop() == 0

    trust = home.attend("settings", "add", "attend.project_sensors", str(home.project))
    assert trust.returncode == 0, trust.stderr
    row = sensors_json(home)["build"]
    assert (row["state"], row["message"], row["daemon_running"]) == ("ok", "", False)
    table = home.attend("sensors")
    assert table.returncode == 0, table.stderr
    [line] = [line for line in table.stdout.splitlines() if line.startswith("build ")]
    assert "refused" not in line and "project_sensors" not in table.stdout

    revoke = home.attend("settings", "set", "attend.project_sensors", "[]")
    assert revoke.returncode == 0, revoke.stderr
    row = sensors_json(home)["build"]
    assert row["state"] == "refused" and "project_sensors" in row["message"]
