"""Peer messages end to end: real `attend run` sessions, `attend peers send`, real Stop hooks.

Session b's `attend run` polls project b (the home's project) with only the shipped messages sensor on;
senders run `attend peers send --to` from another folder, as session a (ATTEND_SESSION) or from a plain
terminal (no session), in-process (`attend.cli.main`, with the sender's environment and folder); b's own
send and `peers inbox` are real processes. Each line must reach b's Monitor stream (stdout) once, name the sender and the
message id, and never come again through b's Stop hook or after b restarts.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from daemon_rig import printed_to_end, query, sensors_json, wait_until

from attend.peers.mailbox import Mailbox, peers_dir, tray_name

pytestmark = pytest.mark.slow


@pytest.fixture
def world(quiet_home, daemon, tmp_path):
    """The messages sensor on in the home's project (b's), another project for a, and a way to send."""
    (quiet_home.user_sensors / "messages.yaml").unlink()
    elsewhere = tmp_path / "project-a"
    elsewhere.mkdir()

    class World:
        home = quiet_home
        other = elsewhere

        @staticmethod
        def send(text: str, *flags: str, as_: str | None = "a", to=None, channel: bool = False) -> str:
            from tests.conftest import run_in_process

            env = quiet_home.env(**({"ATTEND_SESSION": as_} if as_ else {}))
            where = [] if channel else ["--to", str(to or quiet_home.project)]
            done = run_in_process(["peers", "send", *where, *flags, text], env=env, cwd=elsewhere)
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        @staticmethod
        def start_b():
            b = daemon("--session", "b")
            wait_until(lambda: any("sensor(s) running" in line or "attached" in line for line in b.stderr),
                       what="b runs")
            wait_until(lambda: sensors_json(quiet_home)["messages"]["last_poll"] is not None, what="the baseline")
            wait_until(lambda: query(quiet_home, "SELECT 1 FROM session_seen WHERE session = 'b' AND item = ?",
                                     ":cold-start"), what="b's cold start")
            return b

        @staticmethod
        def drain(session: str) -> str:
            done = quiet_home.attend("drain", "--format", "hook", input=json.dumps({"session_id": session}))
            assert done.returncode == 0, done.stderr
            return done.stdout

    return World()


#: The user the tests run as: whom a message is sent for by default (`on_behalf_of`).
USER = pwd.getpwuid(os.getuid()).pw_name


def message_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("[attend sensor=messages ")]


def test_a_message_to_a_project_is_one_high_line_on_its_session_in_its_inbox_and_not_again_at_its_stop_hook(
        world) -> None:
    b = world.start_b()
    mid = world.send("please rebase onto main")
    # The header names the sender and for whom; the first message from a sender says how to answer it.
    header = f"[from_kind=session from_id=a on_behalf_of={USER} to={world.home.project.resolve()}]"
    line = (f"[attend sensor=messages priority=high] message {mid} {header}: please rebase onto main "
            f'(attend peers reply {mid} "..." answers it)')
    b.wait_for(lambda lines: line in lines)

    inbox = subprocess.run([sys.executable, "-m", "attend", "peers", "inbox"], cwd=world.home.project,
                           env=world.home.env(ATTEND_SESSION="b"), capture_output=True, text=True, timeout=60)
    assert mid in inbox.stdout and "please rebase onto main" in inbox.stdout
    printed_to_end(world.home, "b")  # the Monitor recorded what it showed (it records just after printing)
    assert world.drain("b") == ""  # the Monitor showed it: the Stop hook has nothing to hand over

    human = world.send("hello from a terminal", as_=None)
    b.wait_for(lambda lines: any(human in x for x in lines))
    [from_human] = [x for x in b.stdout if human in x]
    assert f"message {human} [from_kind=human from_id=pid-" in from_human
    assert from_human.endswith(f'hello from a terminal (attend peers reply {human} "..." answers it)')

    # b's own message on the open channel is not shown to b (a is live elsewhere to read it).
    Mailbox(peers_dir(world.home.env())).beat("a", world.other, pid=None, started=time.time())
    own = subprocess.run([sys.executable, "-m", "attend", "peers", "send", "note to everyone"],
                         cwd=world.home.project, env=world.home.env(ATTEND_SESSION="b"), capture_output=True,
                         text=True, timeout=60)
    assert own.returncode == 0, own.stderr
    last = world.send("and one more")
    b.wait_for(lambda lines: any(last in x for x in lines))
    assert [x for x in b.stdout if last in x] == [  # a's second message: b was told how to answer a already
        f"[attend sensor=messages priority=high] message {last} {header}: and one more"]
    assert assert_once(b.stdout + b.stderr) == {mid, human, last}
    printed_to_end(world.home, "b")
    assert world.drain("b") == ""
    assert b.stop() == 0


def assert_once(lines: list[str]) -> set[str]:
    """The message ids of the messages lines, each asserted to appear exactly once."""
    ids = Counter(line.split()[4] for line in message_lines(lines))
    assert all(n == 1 for n in ids.values()), ids
    return set(ids)


def test_a_restarted_session_gets_what_came_while_it_was_down_once_and_no_second_cold_start(world) -> None:
    Mailbox(peers_dir(world.home.env())).beat("b", world.home.project, pid=None, started=time.time())
    before = world.send("before b's first start")  # b's cold start hands this over
    b = world.start_b()
    b.wait_for(lambda lines: any(before in x for x in lines))
    assert f"message {before} [from_kind=session from_id=a " in b.stdout[-1]
    assert b.stdout[-1].endswith(f'(attend peers reply {before} "..." answers it)')  # the cold start's line
    assert b.stop(signal.SIGKILL) != 0  # its heartbeat stays live for a while, so a can still send
    down = world.send("while b was down")
    again = world.start_b()
    again.wait_for(lambda lines: any(down in x for x in lines))
    assert not [x for x in again.stdout if down in x and "answers it" in x]  # said once to b, restarts or not
    after = world.send("after the restart")
    again.wait_for(lambda lines: any(after in x for x in lines))
    assert assert_once(again.stdout + again.stderr) == {down, after}
    assert not [x for x in again.stdout + again.stderr if "earlier message" in x]
    printed_to_end(world.home, "b")
    assert world.drain("b") == ""
    assert again.stop() == 0


def test_a_corrupt_message_file_is_skipped_by_the_running_daemon_and_named_in_attend_sensors(world) -> None:
    b = world.start_b()
    tray = peers_dir(world.home.env()) / tray_name(world.home.project)
    tray.mkdir(parents=True, exist_ok=True)
    corrupt = tray / "1800000000000-000000.json"
    corrupt.write_text('{"id": "1800000000000-000000", "from": "a", "te')
    good = world.send("after the broken one")
    b.wait_for(lambda lines: any(good in x for x in lines))
    wait_until(lambda: "skipped 1 unreadable" in sensors_json(world.home)["messages"]["message"],
               what="the corrupt file named in the sensor's state")
    listing = world.home.attend("sensors")
    assert f"message {corrupt}: JSONDecodeError" in listing.stdout and "Traceback" not in listing.stderr
    assert sensors_json(world.home)["messages"]["state"] == "ok"
    assert b.proc.poll() is None and not [x for x in b.stderr if "Traceback" in x]
    assert b.stop() == 0


def test_a_message_file_name_that_is_not_utf8_and_a_bad_message_never_stop_the_daemon(world) -> None:
    b = world.start_b()
    open_channel = peers_dir(world.home.env()) / "open"
    open_channel.mkdir(parents=True, exist_ok=True)
    with open(os.fsencode(open_channel) + b"/\xff\x1b]0;PWNED\x07.json", "w") as handle:
        handle.write("{")
    (open_channel / "1800000000000-000009.json").write_text(
        '{"id": "1800000000000-000009", "from": "a", "text": "x", "ts": ' + "9" * 400 + "}")
    good = world.send("after the bad ones")
    b.wait_for(lambda lines: any(good in x for x in lines))
    wait_until(lambda: "skipped 2 unreadable" in sensors_json(world.home)["messages"]["message"],
               what="both bad files named in the sensor's state")
    listing = world.home.attend_process("sensors")
    assert listing.returncode == 0 and "\\x1b]0;PWNED" in listing.stdout and "\x1b" not in listing.stdout
    assert b.proc.poll() is None and not [x for x in b.stderr if "Traceback" in x or "internal error" in x]
    assert b.stop() == 0


#: The long message of docs/peers.md's walkthrough (794 characters: three parts, the rest cut).
WALKTHROUGH_TEXT = (
    "I moved the session store behind an interface so the NATS transport can plug in; the files transport is "
    "unchanged. Before you rebase: the migration in store/schema.py bumps the version to 12, and your branch adds a "
    "column to sessions, which needs to go into version 13 instead (add it to _ADDED_COLUMNS, not to the CREATE "
    "TABLE). The tests that pin the schema are tests/runtime/test_store_schema.py; run them and "
    "tests/runtime/test_cold_start.py before landing. I also renamed open_project_store's clock argument to now; "
    "call sites in commands/ are updated, yours in tui/ may not be. Ping me here if the rebase conflicts in "
    "store/sessions.py, I touched its seen-items code too, and once you land I will rebase the NATS branch over "
    "yours and run the whole suite on it before I land mine tonight.")


def documented_lines() -> list[str]:
    """The lines docs/peers.md's walkthrough shows the agent."""
    page = (Path(__file__).parents[2] / "docs" / "peers.md").read_text()
    block = page[page.index("As the agent sees it:"):]
    block = block[block.index("```text\n") + len("```text\n"):]
    return block[:block.index("```")].splitlines()


def test_the_walkthrough_of_docs_peers_is_what_the_agent_sees_a_split_message_and_the_reply_hint(world) -> None:
    b = world.start_b()
    long_id = world.send(WALKTHROUGH_TEXT, "--on-behalf-of", "ada")
    short_id = world.send("landed, main is green", "--on-behalf-of", "ada")
    b.wait_for(lambda lines: any(short_id in x for x in lines))
    expected = [line.replace("1764565200000-3f9a1c", long_id).replace("1764565260000-b41d07", short_id)
                .replace("/home/ada/src/api", str(world.home.project.resolve())) for line in documented_lines()]
    assert message_lines(b.stdout) == expected
    assert len(expected) == 4 and expected[2].endswith(f'(attend peers reply {long_id} "..." answers it)')
    whole = subprocess.run([sys.executable, "-m", "attend", "peers", "inbox", "--id", long_id], cwd=world.home.project,
                           env=world.home.env(ATTEND_SESSION="b"), capture_output=True, text=True, timeout=60)
    assert whole.stdout.splitlines()[-1] == WALKTHROUGH_TEXT
    Mailbox(peers_dir(world.home.env())).beat("a", world.other, pid=None, started=time.time())  # a reply needs a reader
    answered = subprocess.run([sys.executable, "-m", "attend", "peers", "reply", long_id, "rebased onto 12"],
                              cwd=world.home.project, env=world.home.env(ATTEND_SESSION="b"), capture_output=True,
                              text=True, timeout=60)
    assert answered.returncode == 0, answered.stderr
    [back] = [m for m in Mailbox(peers_dir(world.home.env())).visible_to("a", world.other) if m.sender == "b"]
    assert (back.re, back.to, back.text) == (long_id, str(world.other.resolve()), "rebased onto 12")
    assert b.stop() == 0
