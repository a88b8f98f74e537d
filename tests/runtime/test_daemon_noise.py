"""A pending `for:` across a real daemon restart (issue 12): it survives SIGTERM and SIGKILL and fires
when it would have without the restart, not DURATION after it. The sensor polls every 30 s, so a fire
on time also shows the daemon polls when a pending transition falls due."""

from __future__ import annotations

import json
import signal
import time

import pytest
from daemon_rig import journal_rows, last_poll, query, wait_until

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


#: The items script (daemon_rig.ITEMS_SCRIPT) failing once it has reported items for 2 s: the poll that makes
#: the `for:` (3 s) pending and any poll a wake adds soon after succeed, and the poll when it falls due
#: fails, with no race between the test breaking the sensor and the daemon's due poll.
FAILS_2S_AFTER_IT_SAW_ITEMS = """
import json, pathlib, sys, time
p = pathlib.Path(sys.argv[1])
items = json.loads(p.read_text()) if p.exists() else []
seen = pathlib.Path(str(p) + ".seen")
if items and not seen.exists():
    seen.write_text(str(time.time()))
elif items and time.time() - float(seen.read_text()) >= 2.0:
    print("failing on purpose", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"items": items}))
"""


def test_a_failing_sensor_with_an_overdue_for_is_not_polled_back_to_back(items_sensor, daemon, quiet_home) -> None:
    # The sensor polls at start, then on a change to its items file (wake_on) or every 30 s: the item's
    # poll makes the `for:` pending (due 3 s after that poll of the daemon's own), and the due poll fails.
    items = items_sensor(trigger={**ADDED_FOR, "for": "3s"}, interval="30s", min_interval="0.2s",
                         wake_on=[str(quiet_home.root / "items.json")])
    script = quiet_home.root / "fails_2s_after_it_saw_items.py"
    script.write_text(FAILS_2S_AFTER_IT_SAW_ITEMS)
    sensor = quiet_home.user_sensors / "items.yaml"
    doc = json.loads(sensor.read_text())
    doc["command"]["argv"][1] = str(script)
    sensor.write_text(json.dumps(doc))
    d = daemon()
    wait_until(lambda: _status(quiet_home), what="the baseline")
    baseline = last_poll(quiet_home)
    # The wake watcher is up once a rewrite of the (still empty) file polls the sensor again.
    wait_until(lambda: items.set([]) or last_poll(quiet_home) > baseline, what="a poll woken by the items file")
    items.set([{"id": 1}])
    wait_until(lambda: _pending_since(quiet_home) is not None, what="the item's poll: pending")
    since = _pending_since(quiet_home)
    # The due poll fails, and the daemon records its next poll: that schedule is its decision, the
    # explicit signal to check instead of watching the clock for a poll that should not come.
    wait_until(lambda: (_status(quiet_home) or {}).get("last_poll", 0) >= since + 3.0,
               what="the poll once the for: is due")
    status = _status(quiet_home)
    assert status["failures"] == 1, "the due poll did not fail, or a failing sensor was polled back to back"
    assert status["next_poll"] - status["last_poll"] >= 15.0, "the next poll does not wait for the cadence"
    assert not journal_rows(quiet_home), "a failed poll fired the transition"
    d.stop()


def _status(home) -> dict | None:
    rows = query(home, "SELECT failures, last_poll, next_poll FROM sensor_status WHERE sensor = 'items'")
    return dict(zip(("failures", "last_poll", "next_poll"), rows[0], strict=True)) if rows and rows[0][1] else None

