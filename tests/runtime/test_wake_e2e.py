"""`wake_on` end to end: a real daemon, real files, real git; a change polls at once, not at `interval`.

No timed assertion: each sensor's interval is far longer than the test waits, so a notification that
arrives at all came from the wake, and the store's times say it came before the interval could fire.
"""

from __future__ import annotations

import pytest
from datetime import datetime

from daemon_rig import PATIENCE, journal_rows, sensors_json, wait_until

pytestmark = pytest.mark.slow


def _first_poll(home, name: str) -> float:
    """The time of the sensor's first poll, as `attend sensors list --json` shows it (epoch seconds)."""
    wait_until(lambda: sensors_json(home)[name]["last_poll"] is not None, what=f"the first poll of {name}")
    return datetime.fromisoformat(sensors_json(home)[name]["last_poll"]).timestamp()


def test_a_command_sensor_with_a_long_interval_reports_a_change_to_its_file_at_once(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(interval="60s", min_interval="0.2s", wake_on=[str(quiet_home.root / "items.json")])
    d = daemon()
    first = _first_poll(quiet_home, "items")
    items.set([{"id": 1}])
    assert d.wait_for(lambda ls: "[attend sensor=items priority=medium] new item 1" in ls, timeout=PATIENCE)
    [row] = journal_rows(quiet_home)
    assert row["time"] - first < 60.0  # before the 60 s interval could have polled again
    assert d.stop() == 0


def test_the_shipped_git_sensor_reports_a_branch_switch_before_its_interval(daemon, quiet_home) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "sensors"))
    from sensor_material import GitRepo

    repo = GitRepo(quiet_home.project)
    repo.commit("initial", "README")
    quiet_home.write_user_sensor("git", "spec: 1\nenabled: true\n")  # the shipped cadence: 30 s, min 5 s
    d = daemon()
    first = _first_poll(quiet_home, "git")
    repo.git("checkout", "-q", "-b", "feature")
    wait_until(lambda: any(r["description"] == "branch changed: main → feature" for r in journal_rows(quiet_home)),
               timeout=PATIENCE, what="the branch switch in the journal")
    row = next(r for r in journal_rows(quiet_home) if r["description"] == "branch changed: main → feature")
    assert row["time"] - first < 30.0  # the shipped interval: only the wake could poll this early
    assert d.stop() == 0
