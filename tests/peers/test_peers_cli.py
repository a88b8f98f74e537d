"""`attend peers`: messages between sessions as files under $XDG_CACHE_HOME/attend/peers, through the CLI
(in-process, and as real processes where the process is what is tested)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import run_in_process

from attend.peers.mailbox import Mailbox, Message, peers_dir


@pytest.fixture
def peers(home, tmp_path):
    """Run `attend peers ...` as session `as_` in `cwd`, and mark sessions live in projects."""
    other = tmp_path / "other"
    other.mkdir()

    class Peers:
        project = home.project
        other_project = other
        mailbox = Mailbox(peers_dir(home.env()))
        env = staticmethod(home.env)

        @staticmethod
        def run(*args: str, as_: str | None = "a", cwd: Path | None = None, input: str | None = None):
            """`attend peers ARGS` in this process (`attend.cli.main`), as a process would run it: this
            environment, working folder and stdin; the tests of the process boundary itself (argv bytes,
            a closed pipe, two senders at once, `attend run`) start real processes."""
            env = home.env(**({"ATTEND_SESSION": as_} if as_ else {}))
            return run_in_process(["peers", *args], env=env, cwd=cwd or home.project, input=input)

        def live(self, session: str, project: Path) -> None:
            self.mailbox.beat(session, project, pid=None, started=time.time())

    return Peers()


def test_sending_to_a_project_without_a_live_session_exits_1_and_writes_nothing(peers) -> None:
    peers.live("a", peers.project)
    out = peers.run("send", "--to", str(peers.other_project), "rebase onto main please")
    assert out.returncode == 1
    assert f"no live session in {peers.other_project}" in out.stderr and "no other session is live" in out.stderr
    assert not list(peers.mailbox.root.glob("p-*/*.json"))


def test_a_message_to_a_project_reaches_its_sessions_inbox_and_a_reply_comes_back(peers) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    sent = peers.run("send", "--to", str(peers.other_project), "please rebase onto main")
    assert sent.returncode == 0, sent.stderr
    message_id = sent.stdout.strip()
    inbox = peers.run("inbox", as_="b", cwd=peers.other_project)
    assert message_id in inbox.stdout and "a (to " in inbox.stdout and "please rebase onto main" in inbox.stdout
    [stored] = json.loads(peers.run("inbox", "--json", as_="b", cwd=peers.other_project).stdout)
    assert (stored["from"], stored["from_kind"], stored["to"], stored["re"]) == (
        "a", "session", str(peers.other_project.resolve()), None)
    answer = peers.run("reply", "done, rebased", as_="b", cwd=peers.other_project)
    assert answer.returncode == 0, answer.stderr
    [back] = [m for m in json.loads(peers.run("inbox", "--json").stdout) if m["from"] == "b"]
    assert back["re"] == message_id and back["text"] == "done, rebased"
    full = peers.run("inbox", message_id, as_="b", cwd=peers.other_project)
    assert full.stdout.splitlines()[-1] == "please rebase onto main"


def test_a_message_from_a_plain_terminal_is_from_a_human(peers) -> None:
    peers.live("b", peers.other_project)
    assert peers.run("send", "--to", str(peers.other_project), "hi from me", as_=None).returncode == 0
    [stored] = json.loads(peers.run("inbox", "--json", as_="b", cwd=peers.other_project).stdout)
    assert stored["from_kind"] == "human" and stored["from"].startswith("pid-")


def test_channels_take_members_and_refuse_names_that_would_leave_the_peers_folder(peers, home) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    assert peers.run("send", "--channel", "ops", "anyone?").returncode == 1  # nobody else on it
    assert peers.run("join", "ops", as_="b").returncode == 0
    assert peers.run("join", "ops").returncode == 0
    assert json.loads(peers.run("channels", "--json").stdout) == {"ops": ["b", "a"]}
    assert peers.run("send", "--channel", "ops", "deploy at 5").returncode == 0
    assert "deploy at 5" in peers.run("inbox", as_="b", cwd=peers.other_project).stdout
    for bad in ("../x", "a/b", ".hidden", "Ops", "ops\n"):  # "ops\n": `$` matched before a final newline
        out = peers.run("join", bad)
        assert out.returncode == 1 and "not usable" in out.stderr
    assert sorted(p.name for p in home.cache.rglob("*") if p.parent == home.cache) == ["attend"]
    assert peers.run("leave", "ops", as_="b").returncode == 0
    assert peers.run("leave", "ops", as_="b").returncode == 1


def test_control_characters_are_escaped_and_oversized_text_is_refused(peers) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    assert peers.run("send", "line one\nline two \x1b[31mred\x07").returncode == 0
    shown = peers.run("inbox", as_="b", cwd=peers.other_project).stdout
    assert "line one line two \\x1b[31mred\\x07" in shown and "\x1b" not in shown
    big = peers.run("send", "x" * 100_000)
    assert big.returncode == 1 and "at most 8000" in big.stderr


def test_a_corrupt_message_file_is_skipped_with_a_line(peers) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    assert peers.run("send", "a good one").returncode == 0
    (peers.mailbox.root / "open" / "0000000000001-abcdef.json").write_text("{not json")
    out = peers.run("inbox", as_="b", cwd=peers.other_project)
    assert out.returncode == 0 and "a good one" in out.stdout and "skipped" in out.stderr


def test_two_processes_sending_at_once_both_land_whole(peers) -> None:
    peers.live("b", peers.other_project)
    procs = [subprocess.Popen([sys.executable, "-m", "attend", "peers", "send", f"msg {i}"], cwd=peers.project,
                              env=peers.env(ATTEND_SESSION=f"s{i}"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    texts = sorted(m["text"] for m in json.loads(peers.run("inbox", "--json", as_="b", cwd=peers.other_project).stdout))
    assert texts == [f"msg {i}" for i in range(4)]
    assert not list(peers.mailbox.root.rglob(".*.tmp"))


def test_the_tray_of_a_project_that_no_longer_exists_is_swept(peers, tmp_path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    peers.live("a", peers.project)
    peers.live("g", gone)
    assert peers.run("send", "--to", str(gone), "are you there?").returncode == 0
    gone.rmdir()
    peers.live("b", peers.other_project)
    assert peers.run("send", "--to", str(peers.other_project), "next").returncode == 0
    assert not [p for p in peers.mailbox.root.glob("p-*") if (p / ".project").read_text() == str(gone)]


def test_attend_run_makes_its_session_live_for_peers_until_it_exits(peers, home) -> None:
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "runner"], cwd=home.project,
                            env=home.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while "runner" not in peers.run("list").stdout:
            assert time.monotonic() < deadline, "attend run never showed up in peers list"
            time.sleep(0.2)
        [live] = json.loads(peers.run("list", "--json").stdout)
        assert (live["session"], live["project"], live["pid"]) == ("runner", str(home.project.resolve()), proc.pid)
        assert peers.run("send", "--to", str(home.project), "hello runner").returncode == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert peers.run("list").stdout.strip() == "no live sessions"


def test_whoami_names_the_session_and_says_a_terminal_is_human(peers) -> None:
    assert json.loads(peers.run("whoami", "--json").stdout)["session"] == "a"
    plain = json.loads(peers.run("whoami", "--json", as_=None).stdout)
    assert plain["from_kind"] == "human" and plain["resolved"] is False


def test_text_that_is_not_utf8_is_refused_with_its_byte_and_leaves_no_file(peers, home) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    out = subprocess.run([sys.executable, "-m", "attend", "peers", "send", "--to", str(peers.other_project),
                          b"ok \xff\xfe"], cwd=home.project, env=home.env(ATTEND_SESSION="a"),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "internal error" not in out.stderr
    assert "not UTF-8" in out.stderr and "b'\\xff'" in out.stderr and "character 4" in out.stderr
    assert not [p for p in peers.mailbox.root.rglob("*") if p.is_file() and p.parent.name.startswith("p-")
                and p.name != ".project"]


def test_a_reader_that_goes_away_ends_a_peers_command_quietly_with_exit_0(peers, home) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    for index in range(1500):  # more than a pipe holds, so the writer meets the closed pipe
        peers.mailbox.post(Message(f"{1_700_000_000_000 + index}-x", "b", "session", str(peers.other_project),
                                   None, "open", None, f"message number {index} " + "x" * 60, 1_700_000_000 + index))
    with subprocess.Popen([sys.executable, "-m", "attend", "peers", "inbox", "--all"], cwd=home.project,
                          env=home.env(ATTEND_SESSION="a"), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader:
        assert reader.stdout.readline()
        reader.stdout.close()
        assert reader.wait(timeout=60) == 0
        assert reader.stderr.read() == b""


def test_sending_to_your_own_project_says_no_other_session_is_live_there(peers) -> None:
    peers.live("a", peers.project)
    out = peers.run("send", "--to", str(peers.project), "anyone?")
    assert out.returncode == 1 and f"no other live session in {peers.project.resolve()}" in out.stderr


def test_sending_to_a_folder_that_does_not_exist_says_it_is_not_a_directory(peers) -> None:
    peers.live("a", peers.project)
    out = peers.run("send", "--to", str(peers.project / "nowhere"), "hello")
    assert out.returncode == 1 and "is not a directory" in out.stderr


def test_a_message_from_a_plain_terminal_reads_as_human_in_the_inbox(peers) -> None:
    peers.live("b", peers.other_project)
    sent = peers.run("send", "--to", str(peers.other_project), "from my shell", as_=None)
    assert sent.returncode == 0, sent.stderr
    inbox = peers.run("inbox", as_="b", cwd=peers.other_project)
    assert " human (pid-" in inbox.stdout and "from my shell" in inbox.stdout


def test_joining_a_channel_twice_says_so_the_second_time(peers) -> None:
    assert peers.run("join", "dev").stdout.strip() == "a joined dev"
    again = peers.run("join", "dev")
    assert again.returncode == 0 and again.stdout.strip() == "a is already on dev"
    assert peers.mailbox.channels()["dev"] == ["a"]


def test_a_reply_says_which_message_it_answers(peers) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    message_id = peers.run("send", "--to", str(peers.other_project), "please rebase").stdout.strip()
    answer = peers.run("reply", "done", as_="b", cwd=peers.other_project)
    assert answer.returncode == 0, answer.stderr
    # the reply goes back to the sender's project, and says so; the replier's own project is not named
    # as if it were the destination (issue 27, item 10)
    here = peers.project.resolve()
    assert f"replying to {message_id} from a in {here}: the reply goes to {here}" in answer.stderr
    assert str(peers.other_project.resolve()) not in answer.stderr


def test_reply_id_answers_that_message_not_the_last_one_and_refuses_one_it_never_received(peers) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.other_project)
    first = peers.run("send", "--to", str(peers.other_project), "first question").stdout.strip()
    peers.run("send", "--to", str(peers.other_project), "second question")
    answer = peers.run("reply", first, "answer to the first", as_="b", cwd=peers.other_project)
    assert answer.returncode == 0, answer.stderr
    [back] = [m for m in json.loads(peers.run("inbox", "--json").stdout) if m["from"] == "b"]
    assert (back["re"], back["text"]) == (first, "answer to the first")
    assert f"replying to {first} from a" in answer.stderr
    # the one-argument form still answers the last message received
    last = peers.run("reply", "and the second", as_="b", cwd=peers.other_project)
    assert last.returncode == 0 and "second question" not in last.stderr
    unknown = peers.run("reply", "1764565200000-ffffff", "hm", as_="b", cwd=peers.other_project)
    assert unknown.returncode == 1 and "no message 1764565200000-ffffff among those this session received" in unknown.stderr
    bad = peers.run("reply", "yesterday", "hm", as_="b", cwd=peers.other_project)
    assert bad.returncode == 2 and "yesterday is not a message id" in bad.stderr


def test_a_message_names_who_sent_it_and_for_whom(peers) -> None:
    import os
    import pwd

    peers.live("b", peers.other_project)
    peers.run("send", "--to", str(peers.other_project), "for the user running me")
    peers.run("send", "--to", str(peers.other_project), "--on-behalf-of", "grace", "relayed for grace")
    stored = json.loads(peers.run("inbox", "--json", as_="b", cwd=peers.other_project).stdout)
    assert [(m["from_kind"], m["from_id"], m["on_behalf_of"]) for m in stored] == [
        ("session", "a", pwd.getpwuid(os.getuid()).pw_name), ("session", "a", "grace")]
    refused = peers.run("send", "--to", str(peers.other_project), "--on-behalf-of", "x" * 129, "hi")
    assert refused.returncode == 1 and "--on-behalf-of must be one line" in refused.stderr


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def test_bidi_controls_in_a_message_are_escaped_in_the_inbox_and_on_the_monitor_line(peers, home) -> None:
    peers.live("a", peers.project)
    peers.live("b", peers.project)
    assert home.attend("sensors", "poll", "messages").returncode == 0  # the baseline
    sent = peers.run("send", f"invoice {BIDI}fdp.exe", as_="b")
    assert sent.returncode == 0, sent.stderr
    inbox = peers.run("inbox", as_="a")
    polled = home.attend("sensors", "poll", "messages")
    for out in (inbox.stdout, polled.stdout):
        assert not any(c in out for c in BIDI), out
        assert "invoice \\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200ffdp.exe" in out


def test_a_project_path_with_escape_and_newline_is_escaped_in_peers_list_and_the_presence_lines(
        peers, home, tmp_path) -> None:
    hostile = tmp_path / "evil\x1b[2J\nproject\u202e"
    hostile.mkdir()
    assert home.attend("sensors", "poll", "peers").returncode == 0  # the baseline
    peers.live("x", hostile)
    listing = peers.run("list")
    polled = home.attend("sensors", "poll", "peers")
    escaped = str(hostile).replace("\x1b", "\\x1b").replace("\n", "\\x0a").replace("\u202e", "\\u202e")
    for out in (listing.stdout, polled.stdout + polled.stderr):
        assert "\x1b" not in out and "\u202e" not in out and "evil\\x1b[2J" in out, out
    assert [ln for ln in listing.stdout.splitlines() if ln.startswith("x ")] == [
        ln for ln in listing.stdout.splitlines() if escaped in ln]
    # A notification is one line: its line breaks fold to spaces, then the rest is escaped.
    on_line = str(hostile).replace("\x1b", "\\x1b").replace("\n", " ").replace("\u202e", "\\u202e")
    assert f"[attend sensor=peers priority=low] session x started in {on_line}" in polled.stdout.splitlines()


def test_attend_runs_start_up_line_escapes_the_project_path(home, tmp_path) -> None:
    hostile = tmp_path / "run\x1b]0;pwned\x07\nhere"
    hostile.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "r", "--project", str(hostile)],
                            cwd=hostile, env=home.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = ""
        deadline = time.monotonic() + 60
        while "running for" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "attend run ended before its start-up line"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()
    assert "running for" in line and "\x1b" not in line and "\x07" not in line
    assert line.rstrip("\n").endswith("run\\x1b]0;pwned\\x07\\x0ahere")
