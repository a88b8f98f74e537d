"""Several sessions in one project (DESIGN.md, "Sessions"): one `attend run` polls, the others attach
and print the same journal; a poller that dies is replaced; every session shows each notification once.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from collections import Counter

import pytest
from daemon_rig import alive, caught_up, journal_rows, last_poll, peers_list, query, sensors_json, wait_until

from attend.files import run_lock_holder, run_lock_path

pytestmark = pytest.mark.slow

FAST = {"interval": "0.5s", "min_interval": "0.2s"}


def items_in(lines: list[str]) -> list[str]:
    """The item ids of the `new item N` lines a session printed, in order (with repeats)."""
    return [line.rsplit(" ", 1)[1] for line in lines if line.startswith("[attend sensor=items ")]


def poller_pid(home) -> int | None:
    return run_lock_holder(run_lock_path(home.project))


def polled(home) -> None:
    """Wait for the items sensor's first poll (its baseline), so the items added next are news."""
    wait_until(lambda: sensors_json(home)["items"]["last_poll"] is not None, what="the first poll")


def first_poller(daemon, home):
    """Session `a`, polling, its sensor's baseline taken."""
    a = daemon("--session", "a")
    wait_until(lambda: any("sensor(s) running" in l for l in a.stderr), what="a polls")
    polled(home)
    return a


def started(d, what: str = "") -> None:
    wait_until(lambda: any(("sensor(s) running" in l or "attached to" in l) for l in d.stderr), what=what or "a session")


def test_two_sessions_each_print_every_notification_once(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor(**FAST)
    a = first_poller(daemon, quiet_home)
    b = daemon("--session", "b")
    wait_until(lambda: any("session b attached to" in l for l in b.stderr), what="b attaches")
    items.set([{"id": 1}, {"id": 2}])
    for d in (a, b):
        d.wait_for(lambda lines: sorted(items_in(lines)) == ["1", "2"])
    listing = quiet_home.attend("sensors")
    assert f"session a (pid {a.proc.pid}) polls since" in listing.stdout
    assert f"attached: b (pid {b.proc.pid})" in listing.stdout
    row = json.loads(quiet_home.attend("sensors", "list", "--json").stdout)[0]
    assert row["polling_session"] == "a" and row["attached_sessions"] == ["b"]
    caught_up(quiet_home, "a", "b")  # a repeat would show by now
    assert a.stop() == 0 and b.stop() == 0
    assert Counter(items_in(a.stdout)) == Counter(items_in(b.stdout)) == {"1": 1, "2": 1}
    assert len(journal_rows(quiet_home, test=0)) == 2  # polled once: one journal, not one per session


def test_when_the_poller_exits_an_attached_session_takes_over_and_nothing_is_lost(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(**FAST)
    a = first_poller(daemon, quiet_home)
    b = daemon("--session", "b")
    c = daemon("--session", "c")
    for d in (b, c):
        wait_until(lambda d=d: any("attached to" in l for l in d.stderr), what="attached")
    items.set([{"id": 1}])
    for d in (a, b, c):
        d.wait_for(lambda lines: items_in(lines) == ["1"])
    assert a.stop(signal.SIGTERM) == 0
    wait_until(lambda: poller_pid(quiet_home) in (b.proc.pid, c.proc.pid), what="a successor")
    items.set([{"id": 1}, {"id": 2}, {"id": 3}])
    for d in (b, c):
        d.wait_for(lambda lines: sorted(items_in(lines)) == ["1", "2", "3"])
    caught_up(quiet_home, "b", "c")
    new = b if poller_pid(quiet_home) == b.proc.pid else c
    assert any("polls" in l and "now" in l for l in new.stderr)
    assert b.stop() == 0 and c.stop() == 0
    assert Counter(items_in(b.stdout)) == Counter(items_in(c.stdout)) == {"1": 1, "2": 1, "3": 1}
    assert items_in(a.stdout) == ["1"]


def test_a_restarted_session_resumes_and_a_new_session_starts_at_the_journal_end(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(**FAST)
    a = first_poller(daemon, quiet_home)
    b = daemon(env={"ATTEND_SESSION": "b"})  # the session named by the environment
    wait_until(lambda: any("session b attached to" in l for l in b.stderr), what="b attaches")
    items.set([{"id": 1}])
    b.wait_for(lambda lines: items_in(lines) == ["1"])
    assert b.stop() == 0
    items.set([{"id": 1}, {"id": 2}])  # while b is away
    a.wait_for(lambda lines: items_in(lines) == ["1", "2"])
    again = daemon("--session", "b")
    fresh = daemon("--session", "fresh")
    again.wait_for(lambda lines: items_in(lines) == ["2"])
    wait_until(lambda: any("attached to" in l for l in fresh.stderr), what="fresh attaches")
    items.set([{"id": 1}, {"id": 2}, {"id": 3}])
    for d in (a, again, fresh):
        d.wait_for(lambda lines: "3" in items_in(lines))
    caught_up(quiet_home, "a", "b", "fresh")
    for d in (a, again, fresh):
        assert d.stop() == 0
    assert items_in(again.stdout) == ["2", "3"]  # resumed: 1 was shown before, 2 was missed while away
    assert items_in(fresh.stdout) == ["3"]  # new: starts at the journal's end
    assert items_in(a.stdout) == ["1", "2", "3"]


#: How many times the poller is killed in the fault test.
KILLS = 8

#: Every item ever added is one notification; `initial: fire` makes the first poll count too.
ADDED = {"path": "$.items[*]", "key": "id", "on": "added", "initial": "fire", "magnitude": 3,
         "description": "new item {id}"}


def test_every_session_prints_every_notification_exactly_once_while_the_poller_is_sigkilled(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(trigger=ADDED, interval="0.3s", min_interval="0.1s")
    written: list[dict] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            written.append({"id": len(written) + 1})
            items.set(list(written))
            time.sleep(0.05)  # several items a poll (every 0.3 s): every kill leaves some in flight

    sessions = {}  # name -> (process, killed at: wall time or None)
    serial = 0

    def start_session() -> None:
        nonlocal serial
        serial += 1
        name = f"s{serial}"
        sessions[name] = [daemon("--session", name), None]

    for _ in range(3):
        start_session()
    for name, (d, _) in sessions.items():  # the three start side by side
        started(d, name)
    rng = random.Random(1010)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        for _ in range(KILLS):
            live = {d.proc.pid: name for name, (d, killed) in sessions.items() if killed is None}
            wait_until(lambda: poller_pid(quiet_home) in live, what="a poller among the live sessions")  # noqa: B023 - called in this iteration
            # Killed after a seeded number of its polls has committed (a point in the poller's own
            # progress, not a random moment of the wall clock).
            since = last_poll(quiet_home)
            polls = rng.randint(1, 3)
            wait_until(lambda: last_poll(quiet_home) >= since + polls,  # noqa: B023 - called in this iteration
                       what=f"{polls} polls of the poller")
            name = live[poller_pid(quiet_home)]
            d = sessions[name][0]
            d.proc.send_signal(signal.SIGKILL)
            d.stop()
            sessions[name][1] = time.time()
            start_session()  # a new session keeps three alive; it starts while the others go on
        # The stream carries over 100 notifications however fast the kills went.
        wait_until(lambda: len(written) > 100, what="over 100 items written")
    finally:
        stop.set()
        thread.join()
    expected = {str(item["id"]) for item in written}
    assert len(expected) > 100
    wait_until(lambda: {r["key"] for r in journal_rows(quiet_home, test=0)} >= expected, timeout=90,
               what="every item journaled")
    survivors = [d for d, killed in sessions.values() if killed is None]
    for d in survivors:
        d.wait_for(lambda lines, d=d: set(items_in(lines)) >= _journaled_since(quiet_home, d), timeout=60)
    caught_up(quiet_home, *(name for name, (d, killed) in sessions.items() if killed is None))
    for d in survivors:
        assert d.stop() == 0

    rows = journal_rows(quiet_home, test=0)
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) and set(keys) == expected, "the journal holds each item once"
    for name, (d, killed) in sessions.items():
        shown = items_in(d.stdout)
        assert len(shown) == len(set(shown)), f"session {name} printed a notification twice"
        assert set(shown) <= expected
        started_at = query(quiet_home, "SELECT started FROM sessions WHERE session = ?", name)[0][0]
        # Everything journaled while the session was alive (a second of slack before its death, when
        # it may not have read the journal yet) reached its stdout.
        must = {r["key"] for r in rows if r["time"] >= started_at and (killed is None or r["time"] < killed - 1.0)}
        assert must <= set(shown), f"session {name} missed {sorted(must - set(shown), key=int)}"
    assert not any(alive(d.proc.pid) for d, _ in sessions.values())


def _journaled_since(home, d) -> set[str]:
    rows = query(home, "SELECT started FROM sessions WHERE pid = ? OR session IN"
                       " (SELECT session FROM sessions WHERE pid = ?)", d.proc.pid, d.proc.pid)
    since = rows[0][0] if rows else 0.0
    return {r["key"] for r in journal_rows(home, test=0) if r["time"] >= since}


def test_a_closed_stdout_ends_the_session_quietly_and_its_next_run_prints_what_was_not_written(
    items_sensor, daemon, quiet_home
) -> None:
    import subprocess
    import sys

    items = items_sensor(**FAST)
    proc = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "m"], cwd=quiet_home.project,
                            env=quiet_home.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: poller_pid(quiet_home) == proc.pid, what="the session polls")
        polled(quiet_home)
        items.set([{"id": 1}])
        first = []
        reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=60)
        assert items_in([line.rstrip("\n") for line in first]) == ["1"]
        proc.stdout.close()  # the reader goes away, as `attend run | head -1` does
        items.set([{"id": 1}, {"id": 2}])
        code = proc.wait(timeout=60)
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert code == 0, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr and "Exception" not in stderr
    assert [r["key"] for r in journal_rows(quiet_home, test=0)] == ["1", "2"]
    again = daemon("--session", "m")
    again.wait_for(lambda lines: items_in(lines) == ["2"])
    caught_up(quiet_home, "m")
    assert again.stop() == 0 and items_in(again.stdout) == ["2"]


#: The shipped processes sensor, polling often, every line journaled, and the session's own process tree
#: included (the test's daemons are this test's children, which the session-tree rule would hide anyway):
#: only the rule "attend and its own children" decides whether a session's `attend run` is reported.
PROCESSES_EVERYTHING = ("spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 0.5s\nthreshold: 0\n"
                        "crate:\n  include_session_processes: true\n")


def test_the_processes_sensor_never_reports_a_session_of_the_project_not_even_across_a_takeover(
        daemon, quiet_home) -> None:
    import subprocess

    quiet_home.write_user_sensor("processes", PROCESSES_EVERYTHING)

    def journaled(text: str) -> bool:
        return any(text in r["description"] for r in journal_rows(quiet_home, sensor="processes"))

    a = daemon("--session", "alpha")
    wait_until(lambda: any("sensor(s) running" in l for l in a.stderr), what="alpha polls")
    b = daemon("--session", "beta")
    started(b, "beta attached")
    sleeps = [subprocess.Popen(["sleep", "61"], cwd=quiet_home.project)]
    try:
        wait_until(lambda: journaled("started: sleep 61"), what="a poll of alpha's that saw beta")
        assert a.stop(signal.SIGKILL) != 0
        wait_until(lambda: poller_pid(quiet_home) == b.proc.pid, what="beta takes over")
        sleeps.append(subprocess.Popen(["sleep", "62"], cwd=quiet_home.project))
        wait_until(lambda: journaled("started: sleep 62"), what="a poll of beta's")
        assert alive(b.proc.pid)
        about_sessions = [r["description"] for r in journal_rows(quiet_home, sensor="processes")
                          if "--session" in r["description"]]
        assert about_sessions == []
    finally:
        for s in sleeps:
            s.kill()
            s.wait()


def _sessions_line(home) -> str:
    """The `sessions:` line of `attend sensors`, or "" while it shows none (no live session polls yet)."""
    shown = home.attend("sensors")
    assert shown.returncode == 0, shown.stderr
    return next((line for line in shown.stdout.splitlines() if line.startswith("sessions:")), "")


def _two_processes_one_id(daemon, home):
    """`attend run --session dup` polling with its heartbeat written, then a second one with the same id,
    once it has warned; returns both and the heartbeat's path."""
    first = daemon("--session", "dup")
    wait_until(lambda: any("sensor(s) running" in l for l in first.stderr), what="the first polls")
    heartbeat = home.cache / "attend" / "peers" / "heartbeat" / "dup"
    wait_until(heartbeat.exists, what="the first one's heartbeat")
    second = daemon("--session", "dup")
    warning = (f"attend: warning: session id dup is already live in this project (pid {first.proc.pid}); "
               "this process prints the same stream")
    wait_until(lambda: any(l.startswith(warning) for l in second.stderr), what="the duplicate's warning")
    return first, second, heartbeat


def test_a_second_attend_run_with_a_live_session_id_warns_and_its_exit_leaves_the_first_ones_presence(
        daemon, quiet_home) -> None:
    first, second, heartbeat = _two_processes_one_id(daemon, quiet_home)
    assert not [l for l in first.stderr if "warning" in l]
    assert second.stop() == 0

    # The first one still runs: its presence and its registration are as they were, at once.
    assert json.loads(heartbeat.read_text())["pid"] == first.proc.pid
    assert peers_list(quiet_home)["dup"]["pid"] == first.proc.pid
    sent = quiet_home.attend("peers", "send", "--to", str(quiet_home.project), "still there?")
    assert sent.returncode == 0, sent.stderr
    assert _sessions_line(quiet_home).startswith(f"sessions: session dup (pid {first.proc.pid}) polls since ")


def test_when_the_first_of_two_processes_with_one_session_id_dies_the_other_takes_its_presence_over(
        daemon, quiet_home) -> None:
    first, second, heartbeat = _two_processes_one_id(daemon, quiet_home)
    first.stop(signal.SIGKILL)  # no clean exit: its heartbeat stays behind, naming a dead pid

    def owned_by_second() -> bool:
        try:
            return json.loads(heartbeat.read_text())["pid"] == second.proc.pid
        except (OSError, ValueError):
            return False

    wait_until(owned_by_second, what="the second one's heartbeat")
    assert peers_list(quiet_home)["dup"]["pid"] == second.proc.pid
    wait_until(lambda: _sessions_line(quiet_home).startswith(f"sessions: session dup (pid {second.proc.pid}) polls"),
               what="the second one polls under the session's name")
    assert second.stop() == 0
    assert not heartbeat.exists()  # its own heartbeat: removed on its clean exit
