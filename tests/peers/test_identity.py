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


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "x" * 200, "tab\there"])
def test_an_unusable_session_id_is_refused_with_a_reason(bad):
    with pytest.raises(SessionError):
        resolve_session(bad, env={"HOME": "/nonexistent"})


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
