"""The doorbell (DESIGN.md, "Delivery": waking an idle session without a Monitor), with real processes.

`attend drain --format doorbell` runs as Claude Code runs the plugin's Stop hook: the Stop hook's JSON on
stdin, `$CLAUDE_PID` naming the session's Claude Code process (here a stand-in process the test ends when
it likes), a headless poller started by the session's SessionStart hook journaling what the sensors find.
The real Claude Code CLI waking on it is tests/host's part; here: when it rings, with what, and when it
ends without a word.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from daemon_rig import PATIENCE, alive, journal_rows, query, sensors_json, wait_until
from hook_rig import HIGH_ITEM, hook, poller, start_session

from attend.files import doorbell_lock_path, run_lock_holder, run_lock_path, state_folder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:subprocess \\d+ is still running:ResourceWarning"),
]

LOW_ITEM = {**HIGH_ITEM, "magnitude": 1, "description": "low item {id}"}


class Doorbell:
    """`attend drain --format doorbell` for `session`, started as Claude Code starts the plugin's Stop hook."""

    def __init__(self, home, session: str, claude: int, *, active: bool = False, **env: str) -> None:
        self.home = home
        self.session = session
        payload = {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active,
                   "cwd": str(home.project), "transcript_path": str(home.root / f"{session}.jsonl")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "attend", "drain", "--format", "doorbell", "--project", str(home.project)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=home.project,
            env=home.env(CLAUDE_PID=str(claude), ATTEND_HEADLESS_IDLE=home.idle, **env))
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(payload))
        self.proc.stdin.close()
        self.proc.stdin = None  # closed: communicate() has nothing to send

    def armed(self) -> bool:
        """Whether it holds its session's lock (it is waiting)."""
        hashed = query(self.home, "SELECT value FROM store_info WHERE key LIKE 'digest %'")
        if not hashed:
            return False
        path = doorbell_lock_path(state_folder(self.home.env()), hashed[0][0], self.session)
        return run_lock_holder(path) == self.proc.pid

    def ended(self, timeout: float = PATIENCE) -> tuple[int, str, str]:
        """Its exit code, stdout and stderr once it ends."""
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=PATIENCE)


@pytest.fixture
def claude():
    """A stand-in for the session's Claude Code process (its pid goes in `$CLAUDE_PID`); ended at the end."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    yield proc
    proc.kill()
    proc.wait(timeout=PATIENCE)


@pytest.fixture
def ring(hooks_home, claude):
    """Start doorbells in an idle hooks-only session `s1` (SessionStart run, a headless poller polling)."""
    start_session(hooks_home, "s1")
    started: list[Doorbell] = []

    def make(session: str = "s1", **kw) -> Doorbell:
        bell = Doorbell(hooks_home, session, kw.pop("claude", claude.pid), **kw)
        started.append(bell)
        return bell

    yield make
    for bell in started:
        bell.stop()


def position(home, session: str) -> int:
    rows = query(home, "SELECT printed_upto FROM sessions WHERE session = ?", session)
    return rows[0][0] if rows else -1


def test_an_idle_sessions_doorbell_rings_once_for_a_high_line_and_the_next_hook_has_nothing(ring, hooks_home) -> None:
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    hooks_home.items.set([{"id": 1}])
    code, out, err = bell.ended()
    assert (code, out) == (2, "")
    assert err.splitlines() == ["attend: 1 notification arrived:", "[attend sensor=items priority=high] new item 1"]
    assert hook(hooks_home, "PostToolUse", "s1", tool_name="Bash") == {}  # marked shown, for every conduit
    assert hook(hooks_home, "UserPromptSubmit", "s1", prompt="go on") == {}


def test_a_low_line_never_rings_the_doorbell_it_is_passed_over(ring, hooks_home, items_sensor) -> None:
    low = items_sensor("chatter", trigger=LOW_ITEM, interval="1s", min_interval="0.2s")
    wait_until(lambda: (sensors_json(hooks_home).get("chatter") or {}).get("last_poll") is not None,
               what="the low sensor's first poll (its baseline)")
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    low.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="chatter"), what="the low line journaled")
    (row,) = journal_rows(hooks_home, sensor="chatter")
    assert row["priority"] == "low"
    # The explicit signal that the doorbell looked at it: it moved the session's position past it.
    wait_until(lambda: position(hooks_home, "s1") >= row["id"], what="the doorbell passed the low line")
    assert bell.proc.poll() is None and bell.armed()
    hooks_home.items.set([{"id": 2}])
    code, _, err = bell.ended()
    assert code == 2 and err.splitlines()[1:] == ["[attend sensor=items priority=high] new item 2"]


def test_the_doorbell_ends_without_a_word_when_the_sessions_claude_code_process_ends(ring, claude) -> None:
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    claude.send_signal(signal.SIGKILL)
    claude.wait(timeout=PATIENCE)
    assert bell.ended() == (0, "", "")


def test_a_second_doorbell_of_the_session_ends_at_once_and_the_first_still_rings(ring, hooks_home) -> None:
    first = ring()
    wait_until(first.armed, what="the first doorbell armed")
    assert ring().ended() == (0, "", "")
    hooks_home.items.set([{"id": 1}])
    code, _, err = first.ended()
    assert code == 2 and "new item 1" in err


def test_the_doorbell_ends_without_a_word_when_a_monitor_takes_the_session_over(ring, hooks_home, daemon) -> None:
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    monitor = daemon("--session", "s1")
    assert bell.ended() == (0, "", "")
    hooks_home.items.set([{"id": 1}])
    monitor.wait_for(lambda lines: "[attend sensor=items priority=high] new item 1" in lines)


def test_a_line_waiting_when_the_agent_stops_rings_at_once(ring, hooks_home) -> None:
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the line journaled")
    code, _, err = ring().ended()
    assert code == 2 and err.splitlines()[1:] == ["[attend sensor=items priority=high] new item 1"]


def test_under_claude_p_it_looks_once_never_waits_and_rings_once_per_stop(ring, hooks_home) -> None:
    # `claude -p` runs an asyncRewake hook in the foreground and waits for it (CLAUDE_CODE_ENTRYPOINT=sdk-cli)
    started = time.monotonic()
    assert ring(CLAUDE_CODE_ENTRYPOINT="sdk-cli").ended() == (0, "", "")
    assert time.monotonic() - started < PATIENCE
    hooks_home.items.set([{"id": 1}])
    wait_until(lambda: journal_rows(hooks_home, sensor="items"), what="the line journaled")
    assert ring(CLAUDE_CODE_ENTRYPOINT="sdk-cli", active=True).ended() == (0, "", "")  # this stop's turn was had
    code, _, err = ring(CLAUDE_CODE_ENTRYPOINT="sdk-cli").ended()
    assert code == 2 and "new item 1" in err


def test_the_doorbell_keeps_a_poller_polling_for_the_idle_session(ring, hooks_home, claude) -> None:
    pid = poller(hooks_home)
    assert pid is not None
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not alive(pid), what="the poller gone")
    # The doorbell starts another one, and rings for what that one journals.
    wait_until(lambda: poller(hooks_home) not in (None, pid), what="a new poller")
    hooks_home.track(poller(hooks_home))
    hooks_home.items.set([{"id": 1}])
    code, _, err = bell.ended()
    assert code == 2 and "new item 1" in err


def test_a_test_fire_rings_the_doorbell_of_a_session_that_was_there(ring, hooks_home) -> None:
    # as the session's Monitor would print it: `sensors fire` tries the delivery path end to end
    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    (hooks_home.project / "fire.json").write_text('{"items": [{"id": 9}]}')
    fired = hooks_home.attend("sensors", "fire", "items", "--input", "fire.json")
    assert fired.returncode == 0, fired.stderr
    code, _, err = bell.ended()
    assert code == 2 and err.splitlines()[1:] == ["[attend sensor=items priority=high] [test] new item 9"]
    # A session that came after it is not handed it (a test belongs to the sessions that were there).
    assert hook(hooks_home, "PostToolUse", "s2", tool_name="Bash") == {}


def test_a_store_replaced_under_a_waiting_doorbell_is_followed(hooks_home, daemon, claude) -> None:
    # The poller here is another session's Monitor: it writes the store again from its own connection
    # when the file is removed (DESIGN.md, Staying up), and the doorbell reads the new file.
    monitor = daemon("--session", "s0")
    wait_until(lambda: any("sensor(s) running" in line for line in monitor.stderr), what="the monitor polls")
    wait_until(lambda: (sensors_json(hooks_home).get("items") or {}).get("last_poll") is not None, what="a poll")
    bell = Doorbell(hooks_home, "s1", claude.pid)
    try:
        wait_until(bell.armed, what="the doorbell armed")
        for name in ("attend.db", "attend.db-wal", "attend.db-shm"):
            (hooks_home.state / "attend" / name).unlink(missing_ok=True)
        wait_until(lambda: any("recovered in place" in line for line in monitor.stderr), what="the store written again")
        hooks_home.items.set([{"id": 1}])
        code, _, err = bell.ended()
        assert code == 2 and err.splitlines()[1:] == ["[attend sensor=items priority=high] new item 1"]
    finally:
        bell.stop()


def test_a_sessions_first_doorbell_rings_for_a_line_another_sessions_monitor_printed(hooks_home, daemon, claude) -> None:
    # s1 has no row yet (its doorbell is its first hook): the doorbell makes it, so the line that comes
    # after is after s1's position, even though s0's Monitor printed it first.
    monitor = daemon("--session", "s0")
    wait_until(lambda: (sensors_json(hooks_home).get("items") or {}).get("last_poll") is not None, what="a poll")
    bell = Doorbell(hooks_home, "s1", claude.pid)
    try:
        wait_until(bell.armed, what="the doorbell armed")
        hooks_home.items.set([{"id": 1}])
        monitor.wait_for(lambda lines: "[attend sensor=items priority=high] new item 1" in lines)
        code, _, err = bell.ended()
        assert code == 2 and err.splitlines()[1:] == ["[attend sensor=items priority=high] new item 1"]
    finally:
        bell.stop()


def test_a_session_whose_doorbell_waits_shows_the_doorbell_as_its_conduit(hooks_home) -> None:
    from stand_in import ClaudeStandIn

    from attend.runtime.sessions.status import project_sessions

    def conduit() -> str | None:
        found = [s.conduit for s in project_sessions(hooks_home.project, hooks_home.env()).hooks if s.session == "s1"]
        return found[0] if found else None

    claude = ClaudeStandIn(hooks_home, "s1")  # runs the hooks as its children, as Claude Code does
    try:
        claude.hook("SessionStart", source="startup")
        assert conduit() == "hooks"
        bell = claude.doorbell()
        wait_until(lambda: conduit() == "doorbell", what="the doorbell armed, shown as the session's conduit")
        wait_until(lambda: (sensors_json(hooks_home).get("items") or {}).get("last_poll") is not None,
                   what="the first poll")
        hooks_home.items.set([{"id": 1}])
        wait_until(lambda: not alive(bell.pid), what="the doorbell rang")
        assert bell.stderr[1:] == ["[attend sensor=items priority=high] new item 1"]
        assert conduit() == "hooks"  # until the session's next stop arms it again
    finally:
        claude.exit()


def test_a_line_that_comes_as_a_monitor_takes_the_session_over_is_the_monitors_alone(ring, hooks_home, claude) -> None:
    """The doorbell checks that no Monitor took its session over once a second; a line that came in that second
    was rung by the doorbell and printed by the Monitor too (the real host's bench saw a message twice). Here
    the Monitor's attach and the line are one commit, so the doorbell's next look finds both at once."""
    from attend.runtime.store import Observation, Store, scope_for
    from attend.runtime.store.location import default_db_path

    bell = ring()
    wait_until(bell.armed, what="the doorbell armed")
    monitor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])  # the `attend run` stand-in
    store = Store(default_db_path(run_lock_path(hooks_home.project, hooks_home.env()).parent),
                  scope=scope_for(hooks_home.project))
    try:
        # The explicit signal that the doorbell waits in its loop (past its first look, which asks for a Monitor):
        # it moved the session's position past a low line.
        store.commit_poll("deploys", states={}, observations=[Observation("queued", 1.0, "deploy 7 queued")])
        store.disclose("deploys", store.pending("deploys"), lane="event", priority="low")
        (low,) = journal_rows(hooks_home, sensor="deploys")
        wait_until(lambda: position(hooks_home, "s1") >= low["id"], what="the doorbell passed the low line")
        with store.exclusive():
            store.attach_session("s1", pid=monitor.pid, resume=True)
            store.commit_poll("deploys", states={}, observations=[Observation("new", 5.0, "deploy 7 finished")])
            store.disclose("deploys", store.pending("deploys"), lane="event", priority="high")
        assert bell.ended() == (0, "", "")  # the Monitor prints it, the doorbell says nothing
        row = journal_rows(hooks_home, sensor="deploys")[-1]
        assert row["priority"] == "high" and position(hooks_home, "s1") < row["id"]  # not recorded as handed over: the Monitor's to print
    finally:
        store.close()
        monitor.kill()
        monitor.wait(timeout=PATIENCE)
