"""Session identity: flag, environment, Claude Code's session record by ancestor pid, else pid-<pid>."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from attend.peers.identity import SessionError, ancestors, process_runs, resolve_session


def test_the_flag_wins_over_the_environment():
    session = resolve_session("abc", env={"ATTEND_SESSION": "env-id", "HOME": "/nonexistent"})
    assert (session.id, session.resolved, session.source) == ("abc", True, "flag")


def test_the_environment_names_the_session_when_no_flag_is_given():
    session = resolve_session(env={"ATTEND_SESSION": "env-id", "HOME": "/nonexistent"})
    assert (session.id, session.source) == ("env-id", "env")


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "x" * 200, "tab\there", "abc\n"])
def test_an_unusable_session_id_is_refused_with_a_reason(bad):
    with pytest.raises(SessionError):
        resolve_session(bad, env={"HOME": "/nonexistent"})


def test_a_session_id_with_a_trailing_newline_is_refused_from_every_source(tmp_path):
    # `$` matched before the final newline: "abc\n" passed as a session of its own (argv, env, store).
    with pytest.raises(SessionError):
        resolve_session(env={"ATTEND_SESSION": "abc\n", "HOME": "/nonexistent"})
    sessions = tmp_path / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "sessionId": "abc\n"}))
    session = resolve_session(env={"HOME": str(tmp_path)})
    assert (session.id, session.resolved) == (f"pid-{os.getpid()}", False)  # no record names a session


def test_claude_codes_record_of_an_ancestor_names_the_session(tmp_path):
    sessions = tmp_path / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    # The record belongs to this test process; a child python resolves from its own pid upwards.
    parent = os.getpid()
    (sessions / f"{parent}.json").write_text(
        json.dumps({"pid": parent, "sessionId": "1b2c-uuid", "cwd": str(tmp_path), "startedAt": 0})
    )
    code = "from attend.peers.identity import resolve_session; s = resolve_session(); print(s.id, s.source, s.owner_pid)"
    env = {k: v for k, v in os.environ.items() if k != "ATTEND_SESSION"}
    env["HOME"] = str(tmp_path)
    env.pop("CLAUDE_CONFIG_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1b2c-uuid", "claude", str(parent)]


def test_a_record_whose_pid_does_not_match_its_file_is_ignored(tmp_path):
    sessions = tmp_path / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / f"{os.getpid()}.json").write_text(json.dumps({"pid": 1, "sessionId": "wrong"}))
    session = resolve_session(env={"HOME": str(tmp_path)})
    assert (session.id, session.resolved) == (f"pid-{os.getpid()}", False)


def test_without_any_source_the_session_is_the_unresolved_pid():
    session = resolve_session(env={"HOME": "/nonexistent"}, pid=os.getpid())
    assert session == type(session)(f"pid-{os.getpid()}", False, "pid", None)


def test_ancestors_walk_up_to_this_process_parent():
    chain = ancestors(os.getpid())
    assert chain[0] == os.getpid()
    assert chain[1] == os.getppid()


def test_a_process_runs_until_it_exits_and_a_zombie_does_not_count():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_runs(child.pid) and process_runs(os.getpid())
        child.kill()
        deadline = time.monotonic() + 30
        while process_runs(child.pid):  # killed, not yet collected: a zombie
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert not process_runs(child.pid)


def _record(sessions, pid: int, session_id: str) -> None:
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{pid}.json").write_text(json.dumps({"pid": pid, "sessionId": session_id, "cwd": "/", "startedAt": 0}))


def _whoami(tmp_path, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ATTEND_SESSION", "CLAUDE_CONFIG_DIR")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_DATA_HOME=str(tmp_path / "data"))
    return subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)


def test_the_session_is_found_through_a_wrapper_process_between_claude_code_and_attend(tmp_path):
    # Claude Code (this test process) -> bash -> attend: the record is two hops up, not the parent.
    _record(tmp_path / ".claude" / "sessions", os.getpid(), "wrapped-session")
    attend = f"{sys.executable} -m attend"
    out = _whoami(tmp_path, ["bash", "-c", f"{attend} peers whoami; true"])
    assert out.returncode == 0, out.stderr
    assert "wrapped-session" in out.stdout


def test_ancestors_advance_past_the_parent():
    # python -> bash -> python: the grandchild's chain holds bash and this process.
    code = "import os; from attend.peers.identity import ancestors; print(*ancestors(os.getpid()))"
    out = subprocess.run(["bash", "-c", f"{sys.executable} -c '{code}'; true"], capture_output=True, text=True,
                         check=True, timeout=60)
    chain = [int(p) for p in out.stdout.split()]
    assert os.getpid() in chain[2:], chain


@pytest.mark.parametrize("kind", ["deep", "fifo", "dev-zero", "huge"])
def test_a_hostile_session_record_is_no_record_and_stops_nothing(tmp_path, kind):
    sessions = tmp_path / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    record = sessions / f"{os.getpid()}.json"
    if kind == "deep":
        record.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "fifo":
        os.mkfifo(record)
    elif kind == "dev-zero":
        record.symlink_to("/dev/zero")
    else:
        record.write_text(json.dumps({"pid": os.getpid(), "sessionId": "big", "pad": "x" * (1 << 20)}))
    # whoami runs as this process's child: its parent's record is the hostile one.
    out = _whoami(tmp_path, [sys.executable, "-m", "attend", "peers", "whoami"], timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert resolve_session(env={"HOME": str(tmp_path)}).source == "pid"
