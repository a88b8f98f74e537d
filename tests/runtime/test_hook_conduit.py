"""The hooks as a second conduit and the headless poller (DESIGN.md, "Delivery": Conduits), with real processes.

Each hook is `attend drain --format hook` run as Claude Code runs it (the hook's JSON on stdin); the
headless poller it starts is a real detached `attend run --headless`, killed by pid at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from daemon_rig import PATIENCE, alive, journal_rows, last_poll, sensors_json, wait_until
from hook_rig import INTERVAL, context, hook, poller, start_session

from attend.files import run_lock_path
from attend.runtime.store import Observation, Store, scope_for
from attend.runtime.store.location import default_db_path

pytestmark = [
    pytest.mark.slow,
    # A hook run in-process starts the detached headless poller as the hook's process does and never waits
    # for it (the hook's process ends at once); the test kills it by pid at the end.
    pytest.mark.filterwarnings("ignore:subprocess \\d+ is still running:ResourceWarning"),
]

def test_session_start_answers_with_a_status_and_starts_one_headless_poller(hooks_home) -> None:
    answer = hook(hooks_home, "SessionStart", "s1", source="startup")
    status = answer["hookSpecificOutput"]["additionalContext"]
    assert "No poller was running; a headless poller started (pid " in status
    assert "0 lines wait for this session." in status
    wait_until(lambda: poller(hooks_home) is not None, what="a headless poller")
    pid = poller(hooks_home)
    hooks_home.track(pid)
    again = hook(hooks_home, "SessionStart", "s2", source="startup")["hookSpecificOutput"]["additionalContext"]
    assert f"A headless poller (pid {pid}) polls." in again
    assert poller(hooks_home) == pid


def test_a_session_without_a_monitor_gets_a_high_line_through_post_tool_use_exactly_once(hooks_home) -> None:
    start_session(hooks_home, "s1")
    changed = time.time()
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the poller journals the line")
    (row,) = journal_rows(hooks_home, sensor="items")
    assert row["priority"] == "high" and row["time"] - changed <= 2 * INTERVAL + 1.0  # the poll's own run time
    answer = hook(hooks_home, "PostToolUse", "s1", tool_name="Bash")
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert context(answer) == ["[attend sensor=items priority=high] new item 1"]
    assert hook(hooks_home, "PostToolUse", "s1", tool_name="Bash") == {}
    assert hook(hooks_home, "UserPromptSubmit", "s1", prompt="go on") == {}
    assert hook(hooks_home, "Stop", "s1", stop_hook_active=False) == {}


def test_user_prompt_submit_hands_over_and_the_stop_hook_gets_what_is_left(hooks_home) -> None:
    start_session(hooks_home, "s1")
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the poller journals the line")
    answer = hook(hooks_home, "UserPromptSubmit", "s1", prompt="hi")
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert context(answer) == ["[attend sensor=items priority=high] new item 1"]
    hooks_home.items.set([{"id": 1}, {"id": 2}])
    wait_until(lambda: len(journal_rows(hooks_home, sensor="items")) == 2, what="the second line")
    stop = hook(hooks_home, "Stop", "s1", stop_hook_active=False)
    assert stop["decision"] == "block" and context(stop) == ["[attend sensor=items priority=high] new item 2"]
    assert hook(hooks_home, "PostToolUse", "s1", tool_name="Bash") == {}


def test_session_start_counts_a_stream_sensor_as_running_as_attend_run_does(hooks_home) -> None:
    # it read "1 sensor polled for ...", leaving out the streaming command the poller runs
    from pathlib import Path

    child = Path(__file__).parent / "streams" / "stream_child.py"
    feed = hooks_home.root / "feed.jsonl"
    feed.write_text("")
    hooks_home.write_user_sensor("feed", "spec: 1\nname: feed\nkind: command\ncommand:\n"
                                 f"  argv: {json.dumps([sys.executable, str(child), 'follow', str(feed)])}\n"
                                 "  output: stream\ntriggers:\n  rec: {path: '$.items[*]', key: seq, on: added}\n")
    start_session(hooks_home, "s1")
    expected = "attend: 2 sensors running for "

    def status() -> str:
        return hook(hooks_home, "SessionStart", "s1", source="resume")["hookSpecificOutput"]["additionalContext"]

    wait_until(lambda: expected in status(), what="the status counting the stream sensor")
    assert " (1 polled, 1 streaming)." in status().splitlines()[0]


def test_session_start_counts_one_waiting_line_in_the_singular(hooks_home) -> None:
    # it read "1 line wait for this session."
    start_session(hooks_home, "s1")
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the poller journals the line")
    status = hook(hooks_home, "SessionStart", "s1", source="resume")["hookSpecificOutput"]["additionalContext"]
    assert "1 line waits for this session." in status, status


def test_with_the_monitor_live_the_hooks_add_nothing(hooks_home, daemon) -> None:
    monitor = daemon("--session", "s1")
    wait_until(lambda: any("sensor(s) running" in line for line in monitor.stderr), what="the monitor polls")
    wait_until(lambda: (sensors_json(hooks_home).get("items") or {}).get("last_poll") is not None, what="a poll")
    assert hook(hooks_home, "SessionStart", "s1", source="startup")["hookSpecificOutput"]["additionalContext"]
    hooks_home.items.set([{"id": 1}])
    monitor.wait_for(lambda lines: "[attend sensor=items priority=high] new item 1" in lines)
    for event, extra in (("PostToolUse", {"tool_name": "Bash"}), ("UserPromptSubmit", {"prompt": "x"}),
                         ("Stop", {"stop_hook_active": False})):
        assert hook(hooks_home, event, "s1", **extra) == {}, event
    assert poller(hooks_home) == monitor.proc.pid  # no headless poller beside the monitor


def test_two_sessions_starting_at_the_same_moment_start_one_poller(hooks_home) -> None:
    def payload(s: str) -> str:
        return json.dumps({"session_id": s, "hook_event_name": "SessionStart", "source": "startup",
                           "cwd": str(hooks_home.project)})

    procs = [subprocess.Popen([sys.executable, "-m", "attend", "drain", "--format", "hook"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=hooks_home.project,
                              env=hooks_home.env(ATTEND_HEADLESS_IDLE="600")) for _ in range(2)]
    outs = [p.communicate(payload(f"s{n}"), timeout=PATIENCE) for n, p in enumerate(procs)]
    started = []
    for out, _ in outs:
        status = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        if "a headless poller started (pid " in status:
            started.append(int(status.split("a headless poller started (pid ", 1)[1].split(")")[0]))
    for pid in started:
        hooks_home.track(pid)
    assert started
    wait_until(lambda: poller(hooks_home) is not None, what="a poller")
    holder = poller(hooks_home)
    # At most one keeps running: a second one started at the same moment finds the lock held and ends.
    wait_until(lambda: [p for p in started if alive(p)] == [holder], what="one poller left")


def test_the_headless_poller_ends_itself_once_no_session_is_live(hooks_home) -> None:
    hooks_home.idle = "2"
    pid = start_session(hooks_home, "s1")
    wait_until(lambda: not alive(pid), timeout=PATIENCE, what="the headless poller ends")
    assert poller(hooks_home) is None
    log = next((hooks_home.state / "attend").glob("run-*.log")).read_text()
    assert "has been live for 2 s; the headless poller ends" in log


def test_a_sigkilled_headless_poller_is_replaced_by_the_next_hook(hooks_home) -> None:
    pid = start_session(hooks_home, "s1")
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not alive(pid) and poller(hooks_home) is None, what="the poller gone")
    assert hook(hooks_home, "PostToolUse", "s1", tool_name="Bash") == {}
    wait_until(lambda: poller(hooks_home) is not None, what="a new poller")
    new = poller(hooks_home)
    hooks_home.track(new)
    assert new != pid
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the new poller journals the line")
    assert context(hook(hooks_home, "PostToolUse", "s1", tool_name="Bash")) == [
        "[attend sensor=items priority=high] new item 1"]


def claude_record(home, session: str) -> None:
    """Claude Code's record of this test process as running `session` (the hooks' and runs' parent)."""
    folder = home.root / ".claude" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "sessionId": session}))


def test_clear_gives_the_new_session_id_the_old_ones_position(hooks_home) -> None:
    claude_record(hooks_home, "old")
    start_session(hooks_home, "old")
    (hooks_home.root / ".claude" / "sessions" / f"{os.getpid()}.json").unlink()  # `other` runs in no Claude Code
    hook(hooks_home, "SessionStart", "other", source="startup")
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the first line")
    assert context(hook(hooks_home, "PostToolUse", "old")) == ["[attend sensor=items priority=high] new item 1"]
    hooks_home.items.set([{"id": 1}, {"id": 2}])
    wait_until(lambda: len(journal_rows(hooks_home, sensor="items")) == 2, what="the second line")
    # Another session takes it first: a session starting now would begin after it and never see it.
    assert context(hook(hooks_home, "PostToolUse", "other")) == [
        "[attend sensor=items priority=high] new item 1", "[attend sensor=items priority=high] new item 2"]
    claude_record(hooks_home, "new")
    hook(hooks_home, "SessionStart", "new", source="clear")
    assert context(hook(hooks_home, "PostToolUse", "new")) == ["[attend sensor=items priority=high] new item 2"]
    assert hook(hooks_home, "PostToolUse", "new") == {}


def conduits(home, value: str) -> None:
    """Set `attend.delivery.conduits` in the user's config (after the `daemon` fixture's fast governor)."""
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    with home.config_file.open("a") as config:
        config.write(f"delivery: {{conduits: {value}}}\n")


def test_with_conduits_hooks_the_monitor_stays_up_prints_nothing_and_the_hooks_carry_the_lines(hooks_home, daemon) -> None:
    conduits(hooks_home, "hooks")
    monitor = daemon("--session", "s1")
    wait_until(lambda: any("conduits is hooks" in line for line in monitor.stderr), what="the monitor says so")
    wait_until(lambda: any("sensor(s) running" in line for line in monitor.stderr), what="the monitor polls")
    wait_until(lambda: (sensors_json(hooks_home).get("items") or {}).get("last_poll") is not None, what="a poll")
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the monitor journals the line")
    start = last_poll(hooks_home)
    wait_until(lambda: last_poll(hooks_home) > start, what="one more poll")  # a printing monitor printed it by now
    assert monitor.stdout == []
    answer = hook(hooks_home, "PostToolUse", "s1", tool_name="Bash")
    assert context(answer) == ["[attend sensor=items priority=high] new item 1"]
    assert hook(hooks_home, "Stop", "s1", stop_hook_active=False) == {}
    assert monitor.proc.poll() is None and poller(hooks_home) == monitor.proc.pid  # still up, and the poller
    assert monitor.stdout == []


def test_with_conduits_monitor_the_hooks_start_no_poller_and_hand_over_no_event_line(hooks_home) -> None:
    conduits(hooks_home, "monitor")
    status = hook(hooks_home, "SessionStart", "s1", source="startup")["hookSpecificOutput"]["additionalContext"]
    assert "headless poller started" not in status and poller(hooks_home) is None
    store = Store(default_db_path(run_lock_path(hooks_home.project, hooks_home.env()).parent),
                  scope=scope_for(hooks_home.project))
    try:  # a line some poller journaled for the project
        store.commit_poll("items", states={}, observations=[Observation("new", 5.0, "new item 1")])
        store.disclose("items", store.pending("items"), lane="event", priority="high")
    finally:
        store.close()
    assert hook(hooks_home, "PostToolUse", "s1", tool_name="Bash") == {}
    assert hook(hooks_home, "Stop", "s1", stop_hook_active=False) == {}  # the Monitor's line, not the hooks'
    assert poller(hooks_home) is None


def test_the_headless_poller_a_hook_starts_never_imports_a_checkouts_own_attend_package(hooks_home) -> None:
    # The poller starts in the project folder: `python -m attend` there would import the checkout's attend/
    # (sys.path[0] is the working folder) and run a planted file's code, trusted or not. It runs with -P.
    planted = hooks_home.project / "attend"
    planted.mkdir()
    marker = hooks_home.root / "planted-code-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (planted / "__main__.py").write_text("")
    start_session(hooks_home, "s1")  # the real poller polled: its attend is imported by now
    assert not marker.exists()
