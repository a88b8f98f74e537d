"""Which sessions are live and through which conduit (runtime/sessions/status.py), over a real store and real
processes: a `sleep` standing in for a Claude Code process, another for an `attend run`."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from attend.peers.identity import host_runs, process_start
from attend.runtime.sessions.handover import monitor_live, stream_note
from attend.runtime.sessions.status import live_sessions
from attend.runtime.store import Store


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def process(procs: list[subprocess.Popen[bytes]]) -> tuple[int, str]:
    proc = subprocess.Popen(["sleep", "600"])
    procs.append(proc)
    start = process_start(proc.pid)
    assert start is not None
    return proc.pid, start


def end(procs: list[subprocess.Popen[bytes]], pid: int) -> None:
    proc = next(p for p in procs if p.pid == pid)
    proc.kill()
    proc.wait()


def test_a_process_is_its_pid_and_start_time_and_a_reused_pid_is_not_it(procs) -> None:
    pid, start = process(procs)
    assert host_runs(pid, start)
    assert not host_runs(pid, str(int(start) + 1))  # another process given the same pid later
    end(procs, pid)
    assert not host_runs(pid, start) and process_start(pid) is None


def test_a_hooks_only_session_is_live_exactly_while_its_claude_code_process_runs(tmp_path, procs) -> None:
    claude = process(procs)
    with Store(tmp_path / "attend.db") as store:
        store.register_session("s1", host=claude, transcript="/t/s1.jsonl")
        (live,) = live_sessions(store.sessions())
        assert (live.session, live.pid, live.conduit, live.claude_pid, live.transcript) == (
            "s1", None, "hooks", claude[0], "/t/s1.jsonl")
        end(procs, claude[0])
        assert live_sessions(store.sessions()) == []


def test_after_clear_the_old_ids_attend_run_is_the_new_ids_monitor_and_one_session_is_listed(tmp_path, procs) -> None:
    claude, monitor = process(procs), process(procs)
    with Store(tmp_path / "attend.db", clock=iter(range(1000, 2000)).__next__) as store:
        store.attach_session("old", pid=monitor[0], resume=True)
        store.register_session("old", host=claude)
        assert store.inherit_session("old", "new")
        store.register_session("new", host=claude)  # the SessionStart hook of `source: clear`
        (live,) = live_sessions(store.sessions(), lock_pid=monitor[0])
        assert (live.session, live.pid, live.role, live.conduit) == ("new", monitor[0], "polling", "monitor")
        assert monitor_live(store, "new")


def test_a_stopped_stream_is_said_in_the_life_of_its_claude_code_process_only(tmp_path, procs) -> None:
    claude, monitor = process(procs), process(procs)
    with Store(tmp_path / "attend.db") as store:
        store.attach_session("s1", pid=monitor[0], resume=True)
        store.register_session("s1", host=claude)
        assert stream_note(store, "s1", str(tmp_path)) is None  # its stream runs
        end(procs, monitor[0])  # killed: its row still says attached
        note = stream_note(store, "s1", str(tmp_path))
        assert note is not None and note[1] == f":stream-stopped:{monitor[0]}"
        (live,) = live_sessions(store.sessions())
        assert (live.conduit, live.stopped_pid) == ("hooks", monitor[0]) and live.stream_stopped is not None
        store.mark_seen("s1", [note[1]])
        assert stream_note(store, "s1", str(tmp_path)) is None  # said once
        # `claude --resume s1` in a new process: the stream that stopped was the old process's Monitor.
        store.set_session_role("s1", "stopped", pid=monitor[0])
        store.register_session("s1", host=process(procs))
        (live,) = live_sessions(store.sessions())
        assert live.stream_stopped is None and live.stopped_pid is None
