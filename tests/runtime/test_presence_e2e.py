"""Presence end to end: real `attend run` sessions in one project print the peers sensor's lines about each other."""

from __future__ import annotations

import json
import shutil

import pytest
from daemon_rig import query, sensors_json, wait_until
from tests.sensors.sensor_material import Transcripts

pytestmark = pytest.mark.slow

#: Short refractory and governor windows, so a start and an exit a second apart are two lines at once
#: (the defaults hold the exit for the 60 s absolute refractory after the start's line, and after three
#: lines the relative refractory raises the threshold above an exit's 2.0 for a while).
FAST_CONFIG = """\
engagement:
  absolute_refractory: 0
  relative_after: 1000
governor:
  event: {cooldown: 0.1, limit: 1000, window: 60}
"""


@pytest.fixture
def sessions(quiet_home, daemon):
    """Start `attend run --session NAME` in the home's project, with only the shipped peers sensor on."""
    (quiet_home.user_sensors / "peers.yaml").unlink()
    quiet_home.config_file.write_text(FAST_CONFIG)  # before the first start: the `daemon` fixture keeps it
    return lambda name: daemon("--session", name)


def peers_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("[attend sensor=peers ")]


def test_a_session_starting_and_exiting_in_the_project_is_a_line_on_the_other_sessions_streams(sessions, quiet_home):
    here = quiet_home.project.resolve()
    a = sessions("a")
    wait_until(lambda: any("sensor(s) running" in line for line in a.stderr), what="a polls")
    c = sessions("c")
    c_started = f"[attend sensor=peers priority=medium] session c started in this project ({here})"
    a.wait_for(lambda lines: c_started in lines)

    b = sessions("b")
    b_started = f"[attend sensor=peers priority=medium] session b started in this project ({here})"
    for d in (a, c):
        d.wait_for(lambda lines: b_started in lines)
    assert b.stop() == 0
    # 2.0 on its own is a low-priority line: stderr, beside the Monitor stream.
    b_exited = f"[attend sensor=peers priority=low] session b exited in this project ({here})"
    for d in (a, c):
        wait_until(lambda d=d: b_exited in d.stderr, what="b's exit on " + d.proc.args[-1])
    assert peers_lines(b.stdout + b.stderr) == []  # its own start is not news to b

    # The poller exits: c takes over, and reports a's exit from the project's stored presence.
    assert a.stop() == 0
    a_exited = f"[attend sensor=peers priority=low] session a exited in this project ({here})"
    wait_until(lambda: a_exited in c.stderr, what="a's exit on c")
    assert c.stop() == 0
    assert peers_lines(c.stdout) == [b_started]  # c's own start was not shown to c
    assert peers_lines(a.stdout) == [c_started, b_started]
    assert not [line for line in peers_lines(c.stderr) if "session c " in line]


def test_the_peers_folder_deleted_under_a_running_daemon_comes_back_and_the_daemon_keeps_going(
        sessions, quiet_home):
    here = quiet_home.project.resolve()
    root = quiet_home.cache / "attend" / "peers"
    a = sessions("a")
    wait_until(lambda: (root / "heartbeat" / "a").exists() and sensors_json(quiet_home)["peers"]["last_poll"],
               what="a's heartbeat and first peers poll")
    shutil.rmtree(root)  # every tray, channel and heartbeat at once
    wait_until(lambda: (root / "heartbeat" / "a").exists(), what="a's heartbeat written again")
    from tests.conftest import run_in_process

    sent = run_in_process(["peers", "send", "--to", str(here), "still there?"], env=quiet_home.env(ATTEND_SESSION="x"),
                          cwd=quiet_home.project)
    assert sent.returncode == 0, sent.stderr
    assert [p.name for p in root.glob("p-*/*.json")] == [f"{sent.stdout.strip()}.json"]  # the tray is back
    sessions("b")
    b_started = f"[attend sensor=peers priority=medium] session b started in this project ({here})"
    a.wait_for(lambda lines: b_started in lines)  # the sensor still wakes and reports
    assert a.proc.poll() is None and not [line for line in a.stderr if "Traceback" in line]
    assert sensors_json(quiet_home)["peers"]["state"] == "ok"


def test_a_sessions_transcript_going_quiet_and_busy_again_is_a_status_line_on_the_other_session(
        sessions, quiet_home):
    # working_within 3 s, polled every 0.3 s: a poll sees b working well inside the window (ten polls).
    quiet_home.write_user_sensor("peers", "spec: 1\ninterval: 0.3s\nmin_interval: 0.1s\n"
                                          "crate:\n  working_within: 3s\n")
    here = quiet_home.project.resolve()
    transcripts = Transcripts(quiet_home.root / ".claude" / "projects", here)
    a = sessions("a")
    wait_until(lambda: any("sensor(s) running" in line for line in a.stderr), what="a polls")
    sessions("b")
    started = f"[attend sensor=peers priority=medium] session b started in this project ({here})"
    a.wait_for(lambda lines: started in lines)
    transcripts.turn("b", 50_000)  # b's Claude Code session writes: from unknown to working, no line
    waiting = f"[attend sensor=peers priority=low] session b in {here} is waiting (was working)"
    wait_until(lambda: waiting in a.stderr, what="b waiting, 3 s after its transcript's last write")
    assert not [line for line in a.stderr if "is working (was" in line]
    transcripts.turn("b", 64_000)
    working = f"[attend sensor=peers priority=low] session b in {here} is working (was waiting)"
    wait_until(lambda: working in a.stderr, what="b working again")
    rows = {r["session"]: r for r in json.loads(quiet_home.attend("peers", "list", "--json").stdout)}
    assert (rows["b"]["status"], rows["b"]["context"], rows["a"]["status"]) == ("working", 32.0, "unknown")


def _peers_state_names(home, session: str) -> bool:
    """True once the peers sensor's stored trigger state holds `session` (a poll saw its heartbeat)."""
    return any(f'"{session}"' in state for (state,) in query(home, "SELECT state FROM trigger_state WHERE sensor = 'peers'"))


def test_a_line_hidden_from_a_session_adds_nothing_to_the_priority_of_what_it_is_shown(sessions, quiet_home):
    # a polls and the sensor's state holds it; a exits. b's first poll then fires b's own start (3.0,
    # hidden from b) and a's exit (2.0) in one disclosure; b is shown only the exit, which alone is low
    # (stderr), never `priority=high` on b's Monitor stream.
    here = quiet_home.project.resolve()
    a = sessions("a")
    wait_until(lambda: _peers_state_names(quiet_home, "a"), what="a peers poll that saw a")
    assert a.stop() == 0
    b = sessions("b")
    wait_until(lambda: any("session a exited" in line for line in b.stdout + b.stderr), what="a's exit on b")
    exited = f"[attend sensor=peers priority=low] session a exited in this project ({here})"
    assert exited in b.stderr
    assert peers_lines(b.stdout) == []
    # The journal prices presence lines one by one (issue 22: piled-up presence is never one `high` sum):
    # a's exit is low and b's start medium for every reader, whatever else shared the disclosure.
    rows = query(quiet_home, "SELECT key, priority FROM journal WHERE sensor = 'peers' ORDER BY id")
    assert sorted(rows) == [("a", "low"), ("b", "medium")]
