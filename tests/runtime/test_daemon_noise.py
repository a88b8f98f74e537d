"""A pending `for:` across a real daemon restart (issue 12): it survives SIGTERM and SIGKILL and fires
when it would have without the restart, not DURATION after it. The sensor polls every 30 s, so a fire
on time also shows the daemon polls when a pending transition falls due."""

from __future__ import annotations

import json
import signal
import time

import pytest
from daemon_rig import PATIENCE, journal_rows, query, wait_until

from attend.compiler.ops import key_text

HOLD = 6.0

ADDED_FOR = {"path": "$.items[*]", "key": "id", "on": "added", "for": f"{HOLD:g}s", "magnitude": 3,
             "description": "item {id} stayed"}


def _states(home) -> list[tuple]:
    return query(home, "SELECT state FROM trigger_state")


def _pending_since(home) -> float | None:
    for (state,) in _states(home):
        pending = json.loads(state).get("pending") or {}
        key = key_text(1)  # item 1's key (a number) as the state writes it
        if key in pending:
            return float(pending[key]["since"])
    return None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_pending_for_survives_a_restart_and_fires_on_its_original_schedule(items_sensor, daemon, quiet_home, sig) -> None:
    items = items_sensor(trigger=ADDED_FOR, interval="30s", min_interval="30s")
    first = daemon()
    wait_until(lambda: _states(quiet_home), what="the baseline")
    items.set([{"id": 1}])
    # the sensor polls every 30 s: `sensors poll` (the same pipeline) records the transition now
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0
    since = _pending_since(quiet_home)
    assert since is not None
    time.sleep(2.0)
    first.stop(sig)
    restarted_at = time.time()
    second = daemon()
    second.wait_for(lambda lines: any("item 1 stayed" in line for line in lines))
    (row,) = journal_rows(quiet_home)
    assert row["description"] == "item 1 stayed"
    assert row["time"] >= since + HOLD
    assert row["time"] < restarted_at + HOLD - 1.0, "the wait restarted with the daemon"
    second.stop()


def test_a_failing_sensor_with_an_overdue_for_is_not_polled_back_to_back(items_sensor, daemon, quiet_home) -> None:
    # `for: 20s` leaves the daemon 20 s to start and take its first poll (still pending) before the
    # transition falls due: a start slower than that is a failure of its own, never a reason to skip.
    items = items_sensor(trigger={**ADDED_FOR, "for": "20s"}, interval="30s", min_interval="30s")
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items.set([{"id": 1}])
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # pending, due in 20 s
    since = _pending_since(quiet_home)
    assert since is not None
    d = daemon()  # polls at start (still pending), then again when it falls due
    wait_until(lambda: any(n >= 3 for (n,) in _poll_counts(quiet_home)), what="the daemon's first poll")
    assert time.time() < since + 20.0, "the daemon's first poll came after the for: fell due"
    items.fail(1)
    # The due poll fails, and the daemon records its next poll: that schedule is its decision, the
    # explicit signal to check instead of watching the clock for a poll that should not come.
    wait_until(lambda: (_status(quiet_home) or {}).get("last_poll", 0) >= since + 20.0, timeout=PATIENCE + 20.0,
               what="the poll once the for: is due")
    status = _status(quiet_home)
    assert status["failures"] <= 1, "a failing sensor with an overdue for: was polled back to back"
    assert status["next_poll"] - status["last_poll"] >= 15.0, "the next poll does not wait for the cadence"
    d.stop()


def _status(home) -> dict | None:
    rows = query(home, "SELECT failures, last_poll, next_poll FROM sensor_status WHERE sensor = 'items'")
    return dict(zip(("failures", "last_poll", "next_poll"), rows[0], strict=True)) if rows and rows[0][1] else None


def _poll_counts(home) -> list[tuple]:
    return query(home, "SELECT COUNT(*) FROM poll_history")
