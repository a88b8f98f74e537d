"""A sensor a poll finds `invalid` polls no more, and `attend doctor` reports what the daemon saw
(issue 27, item 5): a crate sensor whose package the daemon's environment cannot import."""

from __future__ import annotations

import json

import pytest
from daemon_rig import query, recorded_state, wait_until

pytestmark = pytest.mark.slow

#: A crate sensor whose source no installed package provides (its package lives elsewhere).
MISSING_CRATE = json.dumps({
    "spec": 1, "name": "loadavg", "kind": "crate", "source": "loadavg", "interval": "1s", "min_interval": "0.2s",
    "threshold": 0, "triggers": {"high": {"path": "$.load1", "on": "changed", "magnitude": 1}},
})


def _status(home, name: str) -> tuple:
    return query(home, "SELECT last_poll, next_poll, failures FROM sensor_status WHERE sensor = ?", name)[0]


def test_a_sensor_a_poll_finds_invalid_never_polls_again_and_doctor_reports_it(
    items_sensor, daemon, quiet_home
) -> None:
    items_sensor()
    quiet_home.write_user_sensor("loadavg", MISSING_CRATE)
    assert quiet_home.attend("compile", "--check").returncode == 0  # the file itself is fine
    running = daemon()
    wait_until(lambda: recorded_state(quiet_home, "loadavg") == ("invalid", "poll"), what="the invalid poll")
    first = _status(quiet_home, "loadavg")
    # caught up: the other sensor polls five more times (a failed poll's backoff is shorter than that)
    for _ in range(5):
        seen = _status(quiet_home, "items")[0]
        wait_until(lambda seen=seen: _status(quiet_home, "items")[0] != seen, what="another poll of items")
    assert _status(quiet_home, "loadavg") == first
    assert first[1] is None and first[2] == 1  # no next poll; one failed poll
    assert any("sensor loadavg is invalid" in line and "polls no more" in line for line in running.stderr)

    doctor = quiet_home.attend("doctor", "--json")
    assert doctor.returncode == 1
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "sensors"]
    assert check["status"] == "fail"
    assert "loadavg" in check["message"] and "no compiled sensor 'loadavg'" in check["message"]
    assert "extra-packages.txt" in check["fix"]
    running.stop()
