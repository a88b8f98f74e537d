"""End to end: the real daemon (`python -m attend run`) polling a real stdio MCP server in a temporary home."""

from __future__ import annotations

from typing import Any

import pytest
from daemon_rig import PATIENCE, alive, query, sensors_json, wait_until
from mcp_rig import GENEROUS, Behind, mcp_sensor_yaml, polled_ok

pytestmark = pytest.mark.slow


def stored_message(home: Any, name: str) -> str | None:
    """The message the daemon stored for sensor `name` ("disabled" once a reload stopped it)."""
    rows = query(home, "SELECT message FROM sensor_status WHERE sensor = ?", name)
    return rows[0][0] if rows else None


def test_a_change_behind_the_server_becomes_one_notification_naming_server_and_key(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    # the SDK's server answering with structured content: the daemon's calls of a real implementation (the
    # other tests here run servers/listing.py, no SDK)
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("clean"), "list_structured"))
    probed = quiet_home.attend("sensors", "probe", "tracker", "--confirm")
    assert probed.returncode == 0, probed.stderr

    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "tracker"), what="the baseline poll")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: any("new item b" in line for line in out))
    noticed_at = sensors_json(quiet_home)["tracker"]["last_poll"]
    wait_until(lambda: sensors_json(quiet_home)["tracker"]["last_poll"] != noticed_at, what="a later, quiet poll")
    assert running.stop() == 0

    notes = [line for line in running.stdout if line.startswith("[attend sensor=tracker")]
    assert len(notes) == 1, running.stdout
    (note,) = notes
    assert note.startswith("[attend sensor=tracker priority=high] new item b: second (server=clean.py")
    assert note.endswith(", key=b)")
    assert len(behind.starts()) == 2  # one for the probe, one session for the daemon's polls


def test_the_daemon_leaves_an_unprobed_sensor_unpolled_and_its_server_unstarted(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    running = daemon()
    wait_until(lambda: sensors_json(quiet_home).get("tracker", {}).get("state") == "unprobed", what="unprobed")
    running.stop()
    row = sensors_json(quiet_home)["tracker"]
    assert "attend sensors probe tracker" in row["message"]
    assert behind.starts() == []
    assert running.stdout == []


def test_a_server_stops_once_no_enabled_sensor_uses_it_and_not_before(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    # Two sensors share one server: turning one off keeps it; turning off the other stops the process
    # (after the grace, 1 s here instead of UNUSED_GRACE) while the daemon runs on (issue 27, item 4).
    server = behind.inline("listing")
    for name in ("tracker", "second"):
        quiet_home.write_user_sensor(name, mcp_sensor_yaml(name, server))
        assert quiet_home.attend("sensors", "probe", name, "--confirm").returncode == 0
    probes = len(behind.starts())
    from attend.runtime.mcp.pool import GRACE_VARIABLE

    running = daemon(env={GRACE_VARIABLE: "1"})
    wait_until(lambda: polled_ok(quiet_home, "tracker") and polled_ok(quiet_home, "second"), timeout=GENEROUS + PATIENCE,
               what="both polled")
    (started,) = behind.starts()[probes:]  # one shared session
    pid = int(started.split()[-1])

    assert quiet_home.attend("settings", "set", "attend.sensors.tracker.enabled", "false").returncode == 0
    wait_until(lambda: stored_message(quiet_home, "tracker") == "disabled", what="the daemon to stop tracker")
    # `second` still polls through the same process: a poll after tracker's stop proves the server lives
    seen = sensors_json(quiet_home)["second"]["last_poll"]
    wait_until(lambda: sensors_json(quiet_home)["second"]["last_poll"] != seen, what="a later poll of second")
    assert alive(pid) and behind.starts()[probes:] == [started]

    assert quiet_home.attend("settings", "set", "attend.sensors.second.enabled", "false").returncode == 0
    wait_until(lambda: not alive(pid), what="the unused server's exit")
    assert running.proc.poll() is None  # the daemon runs on
    running.stop()
    assert behind.starts()[probes:] == [started]
