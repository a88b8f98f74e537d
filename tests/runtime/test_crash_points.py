"""One crash at each named stage of a poll (attend.runtime.faults) neither loses nor repeats a notification:
after a restart the journal holds each item once and stdout has shown each at least once."""

from __future__ import annotations

import signal

import pytest
from daemon_rig import PATIENCE, journal_rows, wait_until

from attend.runtime.faults import NOTIFICATION_STAGES

ADDED = {"path": "$.items[*]", "key": "id", "on": "added", "initial": "fire", "author": "by", "magnitude": 3,
         "description": "item {id}"}


def _ids(lines: list[str]) -> list[str]:
    return [line.rsplit(" ", 1)[1] for line in lines if line.startswith("[attend sensor=items ")]


@pytest.mark.parametrize("lane", ["message", "event"])
@pytest.mark.parametrize("stage", NOTIFICATION_STAGES)
def test_a_crash_at_each_stage_loses_and_repeats_nothing_after_a_restart(items_sensor, daemon, quiet_home, stage, lane) -> None:
    items = items_sensor(trigger=ADDED, lane=lane, interval="0.3s", min_interval="0.1s")
    items.set([{"id": n, "by": "w"} for n in range(1, 4)])
    crashed = daemon(env={"ATTEND_CRASH_AT": stage})
    assert crashed.proc.wait(timeout=PATIENCE) == -signal.SIGKILL, crashed.stderr
    crashed.stop()
    items.set([{"id": n, "by": "w"} for n in range(1, 6)])
    final = daemon()
    final.wait_for(lambda lines: set(_ids(crashed.stdout + lines)) >= {"1", "2", "3", "4", "5"})
    wait_until(lambda: all(r["printed"] == 1 for r in journal_rows(quiet_home)), what="every row printed")
    assert final.stop() == 0
    keys = [r["key"] for r in journal_rows(quiet_home)]
    assert sorted(keys) == ["1", "2", "3", "4", "5"]
