"""The fault test: SIGKILL the daemon at random moments while a sensor's output grows; the journal
must then hold every expected notification exactly once, and stdout must have shown each at least once.
"""

from __future__ import annotations

import random
import signal
import threading
import time

import pytest
from daemon_rig import journal_rows

pytestmark = pytest.mark.slow

#: How many times the daemon is killed.
KILLS = 22

#: The trigger: every item ever added is one notification (`initial: fire` makes the first poll count
#: too, so the expected set does not depend on when the first baseline happened to commit). It rides the
#: message lane (items carry an author) with the real message-lane governor.
ADDED = {
    "path": "$.items[*]",
    "key": "id",
    "on": "added",
    "initial": "fire",
    "author": "by",
    "magnitude": 3,
    "description": "item {id}",
}


def test_the_journal_holds_every_notification_exactly_once_across_sigkills(items_sensor, daemon, quiet_home) -> None:
    quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
    quiet_home.config_file.write_text("{}\n")  # the real default governor and engagement
    items = items_sensor(trigger=ADDED, lane="message", interval="0.3s", min_interval="0.1s")
    written: list[dict] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            written.append({"id": len(written) + 1, "by": "writer"})
            items.set(list(written))
            time.sleep(0.12)

    rng = random.Random(403)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    shown: list[str] = []
    try:
        for _ in range(KILLS):
            d = daemon()
            time.sleep(rng.uniform(0.3, 2.0))
            d.stop(signal.SIGKILL)
            shown.extend(d.stdout)
    finally:
        stop.set()
        thread.join()
    expected = {str(item["id"]) for item in written}

    final = daemon()
    deadline = time.monotonic() + 90
    while {r["key"] for r in journal_rows(quiet_home)} != expected and time.monotonic() < deadline:
        time.sleep(0.3)
    # The session prints what the poller journaled on its own tick: on a loaded machine the last lines
    # can reach stdout a while after the journal holds them, so wait for the lines themselves.
    final.wait_for(lambda lines: _printed_ids(shown + lines) >= expected, timeout=90)
    time.sleep(1.0)  # room for a duplicate to show up, if there were one
    assert final.stop() == 0
    shown.extend(final.stdout)

    keys = [r["key"] for r in journal_rows(quiet_home, test=0)]
    assert len(keys) == len(set(keys)), "a notification was journaled twice"
    assert set(keys) == expected
    assert all(r["printed"] == 1 for r in journal_rows(quiet_home))
    assert _printed_ids(shown) == expected


def _printed_ids(lines: list[str]) -> set[str]:
    return {line.rsplit(" ", 1)[1] for line in lines if line.startswith("[attend sensor=items ")}
