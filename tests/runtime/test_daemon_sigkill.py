"""The fault test: SIGKILL the daemon at named stages of a poll (attend.runtime.faults: after the poll's
commit, after a disclosure, between printing and recording, after recording), each stage in turn, while a
sensor's output grows; the journal must then hold every expected notification exactly once, and stdout
must have shown each at least once. The same holds for a `scope: session` sensor polled for two named
sessions, each killed at its own stage: each session is shown its own lines (at least once) and never the
other's, across SIGKILLs, takeovers and restarts.

Each stage is one kill, at its first arrival after a restart (the first poll, disclosure or print of a
daemon that recovers from the last kill) or at its second (a daemon in its stride). A stage the plan
names is a point in the daemon's own progress, never a moment of the wall clock.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest
from daemon_rig import PATIENCE, caught_up, journal_rows, last_poll, wait_until

from attend.runtime.faults import NOTIFICATION_STAGES

pytestmark = pytest.mark.slow

#: The crash plan: every stage once, at its first and its second arrival in turn.
PLAN = [(stage, 1 + i % 2) for i, stage in enumerate(NOTIFICATION_STAGES)]

#: The real engagement defaults and the real message-lane governor (its limit and window), its cooldown
#: 1 s instead of 3 s: still over three poll intervals, so accumulations are held by the governor and a
#: kill finds some held, and a round waits a third as long for its disclosure.
CONFIG = "governor:\n  message: {cooldown: 1}\n"

#: The trigger: every item ever added is one notification (`initial: fire` makes the first poll count
#: too, so the expected set does not depend on when the first baseline happened to commit). It rides the
#: message lane (items carry an author) with the message-lane governor (CONFIG).
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
    quiet_home.config_file.write_text(CONFIG)
    items = items_sensor(trigger=ADDED, lane="message", interval="0.3s", min_interval="0.1s")
    written: list[dict] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            written.append({"id": len(written) + 1, "by": "writer"})
            items.set(list(written))
            time.sleep(0.12)

    assert {stage for stage, _ in PLAN} == set(NOTIFICATION_STAGES)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    shown: list[str] = []
    try:
        for stage, count in PLAN:
            d = daemon(env={"ATTEND_CRASH_AT": f"{stage}:{count}"})
            # The daemon kills itself at the planned point: the test waits for that, never for a random moment.
            assert d.proc.wait(timeout=PATIENCE * 3) == -signal.SIGKILL, (stage, count, d.stderr)
            d.stop(signal.SIGKILL)
            shown.extend(d.stdout)
    finally:
        stop.set()
        thread.join()
    expected = {str(item["id"]) for item in written}

    final = daemon()
    wait_until(lambda: {r["key"] for r in journal_rows(quiet_home)} == expected, timeout=90,
               what="every item journaled")
    # The session prints what the poller journaled on its own tick: on a loaded machine the last lines
    # can reach stdout a while after the journal holds them, so wait for the lines themselves.
    final.wait_for(lambda lines: _printed_ids(shown + lines) >= expected, timeout=90)
    # Caught up: one more poll after every row was printed and recorded. A duplicate would be a second
    # journal row (that poll would have made it) or a row printed again (only rows not yet recorded as
    # printed are printed), so after this nothing more can show.
    wait_until(lambda: all(r["printed"] == 1 for r in journal_rows(quiet_home)), what="every row recorded as printed")
    polls = last_poll(quiet_home)
    wait_until(lambda: last_poll(quiet_home) > polls, what="one more poll")
    assert final.stop() == 0
    shown.extend(final.stdout)

    keys = [r["key"] for r in journal_rows(quiet_home, test=0)]
    assert len(keys) == len(set(keys)), "a notification was journaled twice"
    assert set(keys) == expected
    assert all(r["printed"] == 1 for r in journal_rows(quiet_home))
    assert _printed_ids(shown) == expected


def _printed_ids(lines: list[str]) -> set[str]:
    return {line.rsplit(" ", 1)[1] for line in lines if line.startswith("[attend sensor=items ")}


#: A `scope: session` command sensor: prints the items of `<folder>/<ATTEND_SESSION>.json`, so each session
#: it is polled for has its own items.
PER_SESSION_SCRIPT = ("import json, os, sys, pathlib; p = pathlib.Path(sys.argv[1]) / (os.environ['ATTEND_SESSION'] + "
                      "'.json'); print(json.dumps({'items': json.loads(p.read_text()) if p.exists() else []}))")

#: Rounds of two sessions, each started with its own crash stage, run until both killed themselves: each
#: stage once over the rounds, at its first or its second arrival, the two sessions at different stages in
#: a round (whichever polls dies at its stage, and the one that takes over at its own).
SESSION_PLAN = [(("poll-committed", 1), ("printed", 2)), (("disclosed", 2), ("recorded", 1))]


def test_a_session_scoped_sensor_tells_each_session_its_own_lines_once_across_sigkills_and_takeovers(
        daemon, quiet_home) -> None:
    import json
    import sys

    quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
    quiet_home.config_file.write_text(CONFIG)
    folder = quiet_home.root / "per-session"
    folder.mkdir()
    quiet_home.write_user_sensor("items", json.dumps({
        "spec": 1, "name": "items", "kind": "command", "scope": "session", "lane": "message", "threshold": 0,
        "interval": "0.3s", "min_interval": "0.1s",
        "command": {"argv": [sys.executable, "-c", PER_SESSION_SCRIPT, str(folder)]},
        "triggers": {"new": ADDED}}))
    sessions = ("a", "b")
    written: dict[str, list[dict]] = {s: [] for s in sessions}
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            for s in sessions:
                written[s].append({"id": f"{s}{len(written[s]) + 1}", "by": "writer"})
                tmp = folder / f"{s}.tmp"
                tmp.write_text(json.dumps(written[s]))
                tmp.replace(folder / f"{s}.json")
            time.sleep(0.25)

    assert {stage for pair in SESSION_PLAN for stage, _ in pair} == set(NOTIFICATION_STAGES)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    shown: dict[str, list[str]] = {s: [] for s in sessions}
    try:
        for pair in SESSION_PLAN:
            # Both sessions start with a plan; whichever polls dies at its stage and the other takes over
            # (an attached session reaches `printed` and `recorded` too), until both killed themselves.
            procs = {s: daemon("--session", s, env={"ATTEND_CRASH_AT": f"{stage}:{count}"})
                     for s, (stage, count) in zip(sessions, pair, strict=True)}
            for s, d in procs.items():
                assert d.proc.wait(timeout=PATIENCE * 4) == -signal.SIGKILL, (s, pair, d.stderr)
                d.stop(signal.SIGKILL)
                shown[s].extend(d.stdout)
    finally:
        stop.set()
        thread.join()
    expected = {s: {item["id"] for item in written[s]} for s in sessions}

    final = {s: daemon("--session", s) for s in sessions}

    def journaled() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {s: set() for s in sessions}
        for r in journal_rows(quiet_home, test=0):
            out[json.loads(r["meta"])["session"]].add(r["key"])
        return out

    wait_until(lambda: journaled() == expected, timeout=120, what="every item journaled for its session")
    for s, d in final.items():
        d.wait_for(lambda lines, s=s: _printed_ids(shown[s] + lines) >= expected[s], timeout=90)
    caught_up(quiet_home, *sessions)
    for s, d in final.items():
        assert d.stop() == 0
        shown[s].extend(d.stdout)

    rows = journal_rows(quiet_home, test=0)
    identities = [(json.loads(r["meta"])["session"], r["key"]) for r in rows]
    assert len(identities) == len(set(identities)), "a notification was journaled twice"
    for s in sessions:
        assert _printed_ids(shown[s]) == expected[s], f"session {s} was not shown exactly its own lines"
