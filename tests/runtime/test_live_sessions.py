"""A session is live while its Claude Code process is, whichever conduit it has (DESIGN.md, "Sessions";
issue 34 items 1, 3 and 5), with real processes: a stand-in for the Claude Code process (stand_in.py)
runs the session's hooks and its Monitor as its children, the headless poller is a real detached
`attend run --headless`, and peers, sensors and doctor are the real CLI.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
from daemon_rig import alive, journal_rows, peers_list, scalar, sensors_json, wait_until
from stand_in import ClaudeStandIn

from attend.files import run_lock_holder, run_lock_path
from host_rig import end_processes_of

pytestmark = [pytest.mark.slow]

HIGH_ITEM = {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 5, "description": "new item {id}"}
LOW_ITEM = {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 1, "description": "low item {id}"}


def poller(home) -> int | None:
    return run_lock_holder(run_lock_path(home.project, home.env()))


def polled(home, sensor: str = "items") -> None:
    """Wait for the sensor's first poll (its baseline): a change after it fires."""
    wait_until(lambda: scalar(home, "SELECT last_poll FROM sensor_status WHERE sensor = ?", sensor, default=None),
               what=f"the first poll of {sensor}")


def context(answer: dict) -> str:
    return answer.get("hookSpecificOutput", {}).get("additionalContext") or answer.get("reason") or ""


def lines(answer: dict) -> list[str]:
    return [line for line in context(answer).splitlines() if line.startswith("[attend ")]


@pytest.fixture
def world(quiet_home, daemon):
    """The home (with the fast governor of the `daemon` fixture), the stand-ins a test starts, and every
    headless poller started in it, ended at the end: by the environment they run with, since a poller a hook
    started just before the test ended may not hold the run lock yet (two such outlived the suite by their
    ATTEND_HEADLESS_IDLE of 10 minutes)."""
    started: list[ClaudeStandIn] = []

    def claude(session: str, **env: str) -> ClaudeStandIn:
        stand_in = ClaudeStandIn(quiet_home, session, env={"ATTEND_HEADLESS_IDLE": "600", **env})
        started.append(stand_in)
        return stand_in

    quiet_home.claude = claude
    yield quiet_home
    for stand_in in started:
        stand_in.exit()
    end_processes_of(quiet_home.root)


# -- item 1: a hooks-only session is live ----------------------------------------------------------------


def test_a_session_its_hooks_alone_serve_is_a_live_peer_for_as_long_as_its_claude_code_process_runs(world) -> None:
    claude = world.claude("hooked")
    assert claude.hook("SessionStart", source="startup")["hookSpecificOutput"]
    listed = peers_list(world)
    assert listed["hooked"]["conduit"] == "hooks" and listed["hooked"]["claude_pid"] == claude.pid
    assert listed["hooked"]["project"] == str(world.project.resolve())
    # Between its hooks: its presence is as old as its last hook, and it is live all the same.
    beat = world.cache / "attend" / "peers" / "heartbeat" / "hooked"
    os.utime(beat, (time.time() - 3600, time.time() - 3600))
    assert "hooked" in peers_list(world)
    assert "hooks  (Claude Code pid" in world.attend("peers", "list").stdout
    sent = world.attend("peers", "send", "--to", str(world.project), "the build is green")
    assert sent.returncode == 0, sent.stderr
    claude.exit()
    assert "hooked" not in peers_list(world)  # at once, not after a heartbeat's age
    refused = world.attend("peers", "send", "--to", str(world.project), "anyone?")
    assert refused.returncode == 1 and "no live session in" in refused.stderr


def test_the_poller_rewrites_the_presence_of_a_session_its_hooks_alone_serve(world, items_sensor) -> None:
    # Across machines a presence lives only while it is rewritten (the NATS bucket's TTL), and a hooks-only
    # session's hooks may be hours apart: its poller beats for it, as an `attend run` beats for its own.
    items_sensor(trigger=HIGH_ITEM)
    claude = world.claude("hooked")
    claude.hook("SessionStart", source="startup")
    beat = world.cache / "attend" / "peers" / "heartbeat" / "hooked"
    hour_ago = time.time() - 3600
    os.utime(beat, (hour_ago, hour_ago))
    wait_until(lambda: beat.stat().st_mtime > hour_ago + 3000, what="the headless poller rewrites the presence")
    written = json.loads(beat.read_text())
    assert (written["pid"], written["claude_pid"], written["conduit"]) == (None, claude.pid, "hooks")


def test_attend_sensors_and_doctor_show_a_hooks_only_session_and_its_conduit(world, items_sensor) -> None:
    items_sensor(trigger=HIGH_ITEM)
    claude = world.claude("hooked")
    claude.hook("SessionStart", source="startup")
    wait_until(lambda: poller(world) is not None, what="a headless poller")
    rows = sensors_json(world)
    assert rows["items"]["hooks_sessions"] == ["hooked"]
    assert {"session": "hooked", "conduit": "hooks", "stream_stopped": None} in rows["items"]["sessions"]
    assert f"hooks only: hooked (hooks; Claude Code pid {claude.pid})" in world.attend("sensors").stdout
    checks = json.loads(world.attend("doctor", "--json").stdout)["checks"]
    assert any(c["check"] == "sessions" and "served by their hooks alone" in c["message"] and "hooked" in c["message"]
               for c in checks), checks


def hooks_only_session_with_a_transcript(world, sensor: str, session: str, tokens: int) -> tuple[ClaudeStandIn, Path]:
    """`sensor` (a `scope: session` one) on and polled every second; a session started by its SessionStart hook
    alone, whose transcript (one turn of `tokens`) Claude Code keeps where the sensor's projects_dir does not
    look: only the hooks know it. The stand-in and the transcript's path."""
    from tests.sensors.sensor_material import Transcripts

    world.write_user_sensor(sensor, "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 0.2s\n")
    claude = world.claude(session)
    transcripts = Transcripts(world.root / "elsewhere", world.project.resolve())
    transcripts.turn(session, tokens)
    claude.hook("SessionStart", source="startup", transcript=transcripts.path(session))
    return claude, transcripts.path(session)


def test_a_hooks_only_session_gets_its_own_context_line_from_the_transcript_its_hooks_named(world) -> None:
    claude, transcript = hooks_only_session_with_a_transcript(world, "context", "dash-p", 175_000)
    wait_until(lambda: journal_rows(world, sensor="context"), what="the context line")
    (row,) = journal_rows(world, sensor="context")
    assert json.loads(row["meta"])["session"] == "dash-p"
    answer = claude.hook("PostToolUse", tool_name="Bash", transcript=transcript)
    assert lines(answer) == ["[attend sensor=context priority=medium] context 87.5% used (175000 of 200000 tokens)"]


def test_a_hooks_only_session_idle_with_a_large_cache_gets_its_own_keepwarm_line(world) -> None:
    # keepwarm is the other sensor polled per live session (issue 34, item 1): a session its hooks alone serve
    # is watched on the transcript its hooks named, as the context sensor is, and only it is told.
    _, transcript = hooks_only_session_with_a_transcript(world, "keepwarm", "idle-hooks", 90_000)

    def polled_for_the_session() -> bool:
        done = world.attend("sensors", "history", "keepwarm", "--all", "--json")
        return done.returncode == 0 and any(p["state"] == "ok" and p.get("session") == "idle-hooks"
                                            for p in json.loads(done.stdout)["history"])

    wait_until(polled_for_the_session, what="keepwarm's first poll for the session (not idle yet)")
    then = time.time() - 51 * 60  # its last turn 51 minutes ago: past keepwarm's idle floor of 50
    os.utime(transcript, (then, then))
    wait_until(lambda: journal_rows(world, sensor="keepwarm"), what="the keepwarm line")
    (row,) = journal_rows(world, sensor="keepwarm")
    assert json.loads(row["meta"])["session"] == "idle-hooks"
    assert row["description"].startswith("keepwarm: idle 51 min with 90000 tokens cached"), row["description"]


# -- item 3: a dead Monitor is said ---------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["exited", "killed"])
def test_a_stopped_monitor_is_said_once_by_the_next_hook_with_the_command_that_starts_it_again(
        world, items_sensor, sig) -> None:
    items_sensor(trigger=HIGH_ITEM)
    claude = world.claude("s1")
    monitor = claude.monitor()
    monitor.wait_for_stderr("sensor(s) running")
    polled(world)
    claude.hook("SessionStart", source="startup")
    assert claude.hook("PostToolUse", tool_name="Bash") == {}  # the Monitor carries its lines
    monitor.stop(sig)
    said = context(claude.hook("PostToolUse", tool_name="Bash"))
    assert re.fullmatch(
        rf"attend: this session's attend stream \(pid {monitor.pid}\) stopped at \d\d:\d\d:\d\d; its lines now "
        r"reach it through attend's hooks, after each prompt and tool call and when it stops\. A Monitor running "
        rf"`attend run --project {re.escape(str(world.project))}` starts the stream again\.", said), said
    assert claude.hook("PostToolUse", tool_name="Bash") == {}  # once
    assert claude.hook("UserPromptSubmit", prompt="go on") == {}
    # doctor, `attend sensors` and the SessionStart status show it
    checks = json.loads(world.attend("doctor", "--json").stdout)["checks"]
    (stream,) = [c for c in checks if c["check"] == "stream"]
    assert stream["status"] == "warn" and f"attend stream (pid {monitor.pid}) stopped at" in stream["message"]
    assert f"`attend run --project {world.project}` starts it again" in stream["fix"]
    assert "its attend stream stopped at" in world.attend("sensors").stdout
    status = context(claude.hook("SessionStart", source="resume"))
    assert "s1 (hooks; Claude Code pid" in status and "its attend stream stopped at" in status


def test_a_stopped_monitor_is_said_with_the_lines_the_hook_hands_over_and_a_new_monitor_ends_it(
        world, items_sensor) -> None:
    items = items_sensor(trigger=HIGH_ITEM)
    world.claude("peer").monitor().wait_for_stderr("sensor(s) running")  # another session's Monitor polls
    polled(world)
    claude = world.claude("s1")
    monitor = claude.monitor()
    monitor.wait_for_stderr("attached to")
    monitor.stop()
    items.set([{"id": 1}])
    wait_until(lambda: journal_rows(world, sensor="items"), what="the poller journals the line")
    answer = claude.hook("PostToolUse", tool_name="Bash")
    text = context(answer).splitlines()
    assert text[0].startswith(f"attend: this session's attend stream (pid {monitor.pid}) stopped at ")
    assert lines(answer) == ["[attend sensor=items priority=high] new item 1"]
    again = claude.monitor()
    again.wait_for_stderr("attached to")
    assert claude.hook("PostToolUse", tool_name="Bash") == {}
    again.stop()
    assert f"(pid {again.pid}) stopped at" in context(claude.hook("PostToolUse", tool_name="Bash"))


# -- item 5: settings in a running daemon, the headless poller's life, truthful statuses --------------------


def test_conduits_set_to_hooks_in_a_running_monitor_takes_effect_without_a_restart_and_back(
        world, items_sensor) -> None:
    items = items_sensor(trigger=HIGH_ITEM)
    claude = world.claude("s1")
    monitor = claude.monitor()
    monitor.wait_for_stderr("sensor(s) running")
    polled(world)
    done = world.attend("settings", "set", "attend.delivery.conduits", "hooks")
    assert done.returncode == 0, done.stderr
    monitor.wait_for_stderr("attend.delivery.conduits is hooks: session s1's lines go through its hooks")
    items.set([{"id": 1}])
    wait_until(lambda: journal_rows(world, sensor="items"), what="the line journaled")
    assert lines(claude.hook("PostToolUse", tool_name="Bash")) == ["[attend sensor=items priority=high] new item 1"]
    done = world.attend("settings", "set", "attend.delivery.conduits", "auto")
    assert done.returncode == 0, done.stderr
    monitor.wait_for_stderr("attend.delivery.conduits is auto: this attend run prints session s1's lines again")
    items.set([{"id": 1}, {"id": 2}])
    wait_until(lambda: "[attend sensor=items priority=high] new item 2" in monitor.stdout, what="the Monitor prints")
    assert monitor.stdout == ["[attend sensor=items priority=high] new item 2"]  # item 1 went through the hook
    assert claude.hook("PostToolUse", tool_name="Bash") == {}


def test_the_headless_poller_lives_as_long_as_a_hooks_only_sessions_claude_code_process(world, items_sensor) -> None:
    items_sensor(trigger=HIGH_ITEM)
    claude = world.claude("s1", ATTEND_HEADLESS_IDLE="2")
    claude.hook("SessionStart", source="startup")
    wait_until(lambda: poller(world) is not None, what="a headless poller")
    pid = poller(world)
    last_hook = time.time()
    # Polling still, well past its idle limit after the session's last hook: the signal that it stayed.
    wait_until(lambda: (scalar(world, "SELECT last_poll FROM sensor_status WHERE sensor = 'items'") or 0) > last_hook + 4 * 2 + 5,
               what="polls 13 s after the last hook")
    assert alive(pid) and poller(world) == pid
    claude.exit()
    wait_until(lambda: not alive(pid), what="the headless poller ends once the session's process is gone")
    log = next((world.state / "attend").glob("run-*.log")).read_text()
    assert "has been live for 2 s; the headless poller ends" in log


def test_a_just_started_headless_poller_is_reported_with_the_sensors_it_starts(world, items_sensor) -> None:
    items_sensor(trigger=HIGH_ITEM)
    items_sensor("other", trigger=HIGH_ITEM)
    status = context(world.claude("s1").hook("SessionStart", source="startup"))
    assert status.startswith(f"attend: 2 sensors start for {world.project}.\nNo poller was running; a headless "
                             "poller started (pid "), status


def test_the_status_after_clear_names_the_new_id_and_says_no_line_waits_that_never_comes(world, items_sensor) -> None:
    items = items_sensor(trigger=LOW_ITEM)
    claude = world.claude("old")
    monitor = claude.monitor()
    monitor.wait_for_stderr("sensor(s) running")
    polled(world)
    for n in range(4):  # low lines, one a poll: the Monitor leaves them on stderr
        items.set([{"id": i} for i in range(n + 1)])
        wait_until(lambda n=n: f"[attend sensor=items priority=low] low item {n}" in monitor.stderr,
                   what=f"low item {n} on the Monitor's stderr")
    claude.clear("new")
    # The hook runs as the Monitor notices the new id and starts again as itself for it (within a second):
    # before, during or after that, its attend run is this session's Monitor.
    status = context(claude.hook("SessionStart", source="clear"))
    said = status.split("attend run logged:")[0]  # its log says how it moved from the old id to the new
    assert "old" not in said, status
    assert "lines wait" not in said and "line waits" not in said, status
    assert "This session's attend stream (its Monitor) carries its lines." in said
    assert f"new (pid {monitor.pid})" in said and "headless poller started" not in said, status
