"""`attend drain`: undelivered message-lane notifications, as a Stop-hook decision or plain lines."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from tests.conftest import run_in_process

from attend.runtime.store import Observation, Store, scope_for


def _store(home) -> Store:
    return Store(home.state / "attend" / "attend.db", scope=scope_for(home.project))


def _disclose(home, lane: str, *descriptions: str) -> None:
    with _store(home) as store:
        store.commit_poll("chat", states={}, observations=[Observation("msg", 1.0, d) for d in descriptions])
        store.disclose("chat", store.pending("chat"), lane=lane, priority="low")


def test_drain_with_nothing_undelivered_prints_nothing_and_exits_0(home) -> None:
    out = home.attend("drain", "--format", "hook")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_drain_hook_prints_a_stop_hook_block_decision_once(home) -> None:
    _disclose(home, "message", "ann: lunch?", "bob: build is red\nsee #ci")
    _disclose(home, "event", "disk 91% full")
    out = home.attend("drain", "--format", "hook")
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert decision["decision"] == "block"
    assert decision["reason"].splitlines() == [
        "attend: 2 messages arrived while you worked:",
        "[attend sensor=chat priority=low] ann: lunch?",
        # On the message lane each line of a description is a line of its own, each with the prefix.
        "[attend sensor=chat priority=low] bob: build is red",
        "[attend sensor=chat priority=low] see #ci",
    ]
    again = home.attend("drain", "--format", "hook")
    assert (again.returncode, again.stdout) == (0, "")
    with _store(home) as store:
        assert [e.description for e in store.undrained("event")] == ["disk 91% full"]


def test_drain_plain_prints_one_line_per_notification(home) -> None:
    _disclose(home, "message", "ann: hi")
    out = home.attend("drain")
    assert out.stdout == "[attend sensor=chat priority=low] ann: hi\n"
    assert home.attend("drain").stdout == ""


def _hook(home, session: str, *, active: bool = False):
    payload = {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active,
               "transcript_path": str(home.root / "t.jsonl"), "cwd": str(home.project)}
    return home.attend("drain", "--format", "hook", input=json.dumps(payload))


def _reasons(out) -> list[str]:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["reason"].splitlines()[1:] if out.stdout else []


def test_the_stop_hook_drains_per_session_from_claude_codes_json_on_stdin(home) -> None:
    _disclose(home, "message", "ann: lunch?")
    assert _reasons(_hook(home, "s1")) == ["[attend sensor=chat priority=low] ann: lunch?"]
    # A session's first drain hands over only what no conduit delivered yet, then starts at the end.
    assert _reasons(_hook(home, "s2")) == []
    _disclose(home, "message", "bob: build is red")
    line = "[attend sensor=chat priority=low] bob: build is red"
    assert _reasons(_hook(home, "s1")) == [line]
    assert _reasons(_hook(home, "s2")) == [line]  # each session is handed it once
    assert _reasons(_hook(home, "s1")) == []


def test_a_session_id_with_a_trailing_newline_from_the_hook_the_flag_or_the_environment_is_refused(home) -> None:
    # "s1\n" passed `^...$` and drained as a session of its own, apart from "s1".
    _disclose(home, "message", "ann: lunch?")
    assert _reasons(_hook(home, "s1")) == ["[attend sensor=chat priority=low] ann: lunch?"]
    refused = _hook(home, "s1\n")
    assert "the hook's session id 's1\\n' is not usable" in refused.stderr, refused.stderr
    from_env = run_in_process(["drain"], env=home.env(ATTEND_SESSION="s1\n"), cwd=home.project)
    for out in (home.attend("drain", "--session", "s1\n"), from_env):
        assert "session id 's1\\n' is not usable" in out.stderr and "draining for no session" in out.stderr, out.stderr
    with sqlite3.connect(home.state / "attend" / "attend.db") as db:
        assert [s for (s,) in db.execute("SELECT session FROM sessions")] == ["s1"]


def test_a_stop_hook_that_already_blocked_lets_the_agent_stop_when_nothing_is_new(home) -> None:
    _disclose(home, "message", "ann: lunch?")
    assert _hook(home, "s1").stdout
    again = _hook(home, "s1", active=True)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


def test_a_message_the_sessions_monitor_printed_is_not_handed_over_by_its_stop_hook(home) -> None:
    with _store(home) as store:
        store.attach_session("s1", pid=1, resume=True)
        store.commit_poll("chat", states={}, observations=[Observation("msg", 4.0, "shown on stdout")])
        [shown] = store.disclose("chat", store.pending("chat"), lane="message", priority="medium")
        store.commit_poll("chat", states={}, observations=[Observation("msg", 1.0, "low, stderr only")])
        store.disclose("chat", store.pending("chat"), lane="message", priority="low")
        store.advance_session("s1", store.journal_end(), [e.id for e in store.journal()])
    assert _reasons(_hook(home, "s1")) == ["[attend sensor=chat priority=low] low, stderr only"]


def test_test_fires_never_reach_the_drain(home) -> None:
    with _store(home) as store:
        store.journal_test("chat", [Observation("msg", 9.0, "a test line")], lane="message", priority="high")
    assert home.attend("drain", "--format", "hook").stdout == ""
    assert _hook(home, "s1").stdout == ""


def test_a_stdin_that_is_not_the_hooks_json_is_ignored(home) -> None:
    _disclose(home, "message", "ann: hi")
    out = home.attend("drain", "--format", "hook", input="not json {")
    assert out.returncode == 0 and "ann: hi" in json.loads(out.stdout)["reason"]


def test_an_empty_project_never_blocks_a_stop_hook(home) -> None:
    out = home.attend("drain", "--format", "hook", "--project", "")
    assert (out.returncode, out.stdout) == (0, "")
    assert "--project is empty" in out.stderr and "CLAUDE_PROJECT_DIR" in out.stderr
    run = home.attend("run", "--project", "")
    assert run.returncode == 2 and "--project is empty" in run.stderr
    assert "unrecognized arguments" not in run.stderr
    assert home.attend("drain", "--project=").returncode == 2


# -- hostile stdin and a closed stdout (issue 28, item 13): a hook never breaks a turn ----------------

def test_drain_hook_ignores_stdin_nested_past_pythons_recursion_limit(home) -> None:
    for stdin in ("[" * 1000 + "]" * 1000, '{"session_id": "s", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"):
        _disclose(home, "message", "ann: lunch?")
        out = home.attend_process("drain", "--format", "hook", input=stdin)
        assert out.returncode == 0 and out.stderr == "", out.stderr
        # treated as a stdin that is not the hook's JSON: the undelivered line is handed over
        assert "ann: lunch?" in json.loads(out.stdout)["reason"]


def test_drain_hook_with_a_closed_stdout_exits_0_and_drains_nothing(home) -> None:
    import subprocess
    import sys

    _disclose(home, "message", "ann: lunch?")
    done = subprocess.run([sys.executable, "-c", "import os, subprocess, sys; os.close(1); "
                           "sys.exit(subprocess.run([sys.executable, '-m', 'attend', 'drain', '--format', 'hook'],"
                           " input=b'{}', stderr=subprocess.PIPE).returncode)"],
                          cwd=home.project, env=home.env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with _store(home) as store:  # nobody read it, so it is still to hand over
        assert [e.description for e in store.undrained("message")] == ["ann: lunch?"]


@pytest.mark.parametrize(("argv", "quick"), [
    (["drain", "--format", "hook", "--project", "/tmp"], True),  # plugin/hooks/hooks.json's line
    (["drain", "--format", "hook", "--project", "/tmp/a dir with spaces/and=sign"], True),
    (["drain", "--format", "hook", "--project", "."], True),
    (["drain", "--format", "hook", "--project", "~/x"], True),
    (["--project", "/tmp", "drain", "--format", "hook"], True),
    (["drain", "--format", "hook", "--project", ""], False),  # the variable unset: main says so
    (["drain", "--format", "hook"], False),
    (["drain", "--format=hook", "--project", "/tmp"], False),
    (["drain", "--format", "hook", "--project", "/tmp", "--session", "s1"], False),
    (["drain", "--format", "plain", "--project", "/tmp"], False),
])
def test_the_hooks_command_line_is_read_as_the_parser_reads_it(argv, quick) -> None:
    from attend.cli import _hook_args, _project_after_command, bind_project, build_parser

    words = _project_after_command(bind_project(argv))
    read = _hook_args(words)
    assert (read is not None) == quick
    if read is not None:
        assert vars(read) == vars(build_parser("drain").parse_args(words))


def test_a_sessions_first_stop_hook_gets_a_low_message_another_sessions_monitor_left_on_its_stderr(home) -> None:
    with _store(home) as store:
        store.attach_session("other", pid=1, resume=True)
        store.commit_poll("chat", states={}, observations=[Observation("msg", 1.0, "low, stderr only")])
        store.disclose("chat", store.pending("chat"), lane="message", priority="low")
        store.advance_session("other", store.journal_end(), [e.id for e in store.journal()])
    assert _reasons(_hook(home, "s1")) == ["[attend sensor=chat priority=low] low, stderr only"]
    assert _reasons(_hook(home, "s2")) == []  # handed over once


def test_a_message_a_live_monitor_has_not_printed_yet_is_left_to_it_by_the_stop_hook(home) -> None:
    # The Monitor prints it a moment later: handed over here too, the session got it twice (seen with the
    # real CLI: the doorbell armed at a stop took a message the Monitor printed 0.2 s after).
    with _store(home) as store:
        store.attach_session("s1", pid=os.getpid(), resume=True)  # a live Monitor
        store.commit_poll("chat", states={}, observations=[Observation("msg", 7.0, "high, for the Monitor")])
        store.disclose("chat", store.pending("chat"), lane="message", priority="high")
        store.commit_poll("chat", states={}, observations=[Observation("msg", 1.0, "low, stderr only")])
        store.disclose("chat", store.pending("chat"), lane="message", priority="low")
    assert _reasons(_hook(home, "s1")) == ["[attend sensor=chat priority=low] low, stderr only"]
