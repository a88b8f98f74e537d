"""The real daemon never replays what a one-shot command already showed (issue 14, item 8)."""

from __future__ import annotations

import pytest
from daemon_rig import NEW_ITEM, journal_rows

pytestmark = pytest.mark.slow


def _start_with_a_witness(items_sensor, daemon):
    """Start a daemon with a second sensor that prints one line at its first poll; return the daemon once
    that line is out (so the discloser has had its chance to print anything older)."""
    witness = items_sensor("witness", trigger=dict(NEW_ITEM, initial="fire"))
    witness.set([{"id": "w"}])
    d = daemon()
    d.wait_for(lambda lines: any("new item w" in line for line in lines))
    return d


def test_a_manual_poll_is_never_replayed_by_a_daemon_started_after_it(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items.set([{"id": 1}])
    shown = quiet_home.attend("sensors", "poll", "items")
    assert "[attend sensor=items priority=medium] new item 1" in shown.stdout
    d = _start_with_a_witness(items_sensor, daemon)
    assert not any("new item 1" in line for line in d.stdout), d.stdout
    assert d.stop() == 0
    [row] = journal_rows(quiet_home, sensor="items")
    assert (row["description"], row["printed"], row["drained"]) == ("new item 1", 1, 1)


def test_fire_lines_made_before_a_daemon_starts_are_not_printed_by_it(items_sensor, daemon, quiet_home) -> None:
    items_sensor()
    fired = quiet_home.attend("sensors", "fire", "items", "--input", "-", input='{"items": [{"id": 5}]}')
    assert "[test] new item 5" in fired.stdout  # shown here, where it was run
    d = _start_with_a_witness(items_sensor, daemon)
    assert not any("new item 5" in line for line in d.stdout), d.stdout
    # A fire made while the daemon runs still shows on its stdout.
    quiet_home.attend("sensors", "fire", "items", "--input", "-", input='{"items": [{"id": 6}]}')
    d.wait_for(lambda lines: any("[test] new item 6" in line for line in lines))
    assert d.stop() == 0
