"""Peers under faults (issue 11, "Bad input and faults"): concurrent senders, a reader racing a writer,
hostile names, and reading only what `inbox` shows, with real processes and files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.conftest import run_in_process

from attend.peers.mailbox import Mailbox, Message, peers_dir

#: Imports attend first, says `ready` and waits for a line on stdin, then runs `attend` with argv: the test
#: starts every sender past its start-up at once, so they send within a millisecond of each other.
AT_ONCE = textwrap.dedent(
    """
    import sys
    from attend.cli import main
    import attend.commands.peers
    print("ready", flush=True)
    sys.stdin.readline()
    sys.exit(main(sys.argv[1:]))
    """
)

#: Posts argv[2] messages of argv[3] characters each into the open channel of the peers folder argv[1],
#: as fast as it can.
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from attend.peers.mailbox import Mailbox, Message
    box = Mailbox(Path(sys.argv[1]))
    for i in range(int(sys.argv[2])):
        box.post(Message(box.new_id(), "writer", "session", "/w", None, "open", None,
                         str(i % 10) * int(sys.argv[3]), time.time()))
    """
)


def send_at_once(home, count: int) -> list[subprocess.Popen]:
    senders = [subprocess.Popen([sys.executable, "-c", AT_ONCE, "peers", "send", f"message {i} " + "x" * 4000],
                                cwd=home.project, env=home.env(ATTEND_SESSION=f"sender-{i}"), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(count)]
    for p in senders:  # every one past its start-up (however busy the machine) ...
        assert p.stdout is not None and p.stdout.readline() == "ready\n", p.stderr.read() if p.stderr else ""
    for p in senders:  # ... then all of them at once
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    return senders


def test_processes_sending_at_the_same_moment_each_land_whole_with_distinct_ids(home, tmp_path):
    mailbox = Mailbox(peers_dir(home.env()))
    reader = tmp_path / "reader"
    reader.mkdir()
    mailbox.beat("reader", reader, pid=None, started=time.time())
    senders = send_at_once(home, 8)
    ids = []
    for p in senders:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        ids.append(out.strip())
    assert len(set(ids)) == 8
    files = sorted((mailbox.root / "open").glob("*.json"))
    assert sorted(f.stem for f in files) == sorted(ids)
    texts = sorted(json.loads(f.read_text())["text"] for f in files)  # each file parses: whole
    assert texts == sorted(f"message {i} " + "x" * 4000 for i in range(8))
    assert not list(mailbox.root.rglob("*.tmp"))


def test_a_reader_racing_a_writer_never_reads_half_a_message(home):
    root = peers_dir(home.env())
    length, count = 7000, 400
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(count), str(length)],
                              env=home.env(), stderr=subprocess.PIPE, text=True)
    mailbox = Mailbox(root)
    reads, seen = 0, 0
    try:
        while writer.poll() is None or reads == 0:
            messages = mailbox.read_folder(root / "open")
            assert mailbox.corrupt == [], mailbox.corrupt[:1]
            assert all(len(m.text) == length and len(set(m.text)) == 1 for m in messages)
            reads += 1
            seen = max(seen, len(messages))
    finally:
        _, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert reads > 1 and seen > 0
    assert len(mailbox.read_folder(root / "open")) == count and mailbox.corrupt == []


HOSTILE_CHANNELS = ["..", "../x", "a/b", "/tmp/x", ".hidden", "x\ny", "@ops", "ops/..", "Ops", "o" * 65, ""]


def _tree(root: Path, leave_out: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if leave_out not in p.parents and p != leave_out}


def test_hostile_names_and_texts_are_refused_or_rendered_and_never_write_outside_the_peers_folder(home, tmp_path):
    mailbox = Mailbox(peers_dir(home.env()))
    other = tmp_path / "other"
    other.mkdir()
    mailbox.beat("b", other, pid=None, started=time.time())
    mailbox.beat("a", home.project, pid=None, started=time.time())
    before = _tree(tmp_path, mailbox.root)

    def peers(*args: str, session: str = "a", cwd: Path = home.project) -> subprocess.CompletedProcess[str]:
        # In-process (`attend.cli.main`): what is tested is the refusal and where files land, not the
        # process boundary (the senders above and `test_peers_cli` run real processes).
        return run_in_process(["peers", *args], env=home.env(ATTEND_SESSION=session), cwd=cwd)

    for name in HOSTILE_CHANNELS:
        for args in (("join", name), ("leave", name), ("send", "--channel", name, "hi")):
            done = peers(*args)
            assert done.returncode in (1, 2) and "Traceback" not in done.stderr, (args, done.stderr)
            assert done.stderr.startswith("attend: ") or "usage:" in done.stderr, (args, done.stderr)
    for session in ("../evil", "a/b", ".x", "x" * 200):
        done = peers("send", "hi", session=session)
        assert done.returncode == 2 and "not usable" in done.stderr, (session, done.stderr)
    for target in ("../..", "/", str(other / ".." / "other" / ".." / "nowhere")):
        done = peers("send", "--to", target, "hi")
        assert done.returncode == 1 and ("no live session in" in done.stderr or "is not a directory" in done.stderr)
    for ref in ("../../../etc/passwd", "x" * 40):
        assert peers("inbox", ref).returncode == 1
    sent = peers("send", "--re", "../../etc/passwd", "--to", str(other / ".." / "other"), "line\nbreak\x1b[2J\x00"[:-1])
    assert sent.returncode == 0, sent.stderr
    too_long = peers("send", "--to", str(other), "x" * 100_000)
    assert too_long.returncode == 1 and "at most 8000" in too_long.stderr

    assert _tree(tmp_path, mailbox.root) - before == set()  # nothing new outside the peers folder
    assert {p.name for p in mailbox.root.iterdir() if not p.name.startswith("p-")} <= {
        "heartbeat", "open", ".channels.lock", ".heartbeat.lock", "channels.yaml"}
    [stored] = json.loads(peers("inbox", "--json", session="b", cwd=other).stdout)
    assert stored["re"] == "../../etc/passwd" and stored["text"] == "line\nbreak\x1b[2J"
    shown = peers("inbox", session="b", cwd=other).stdout
    assert "line break\\x1b[2J" in shown and "\x1b" not in shown


def _post(mailbox: Mailbox, i: int, folder_to: str | None = None) -> None:
    ts = 1_700_000_000 + i
    mailbox.post(Message(f"{ts * 1000:013d}-{i:06x}", "s", "session", "/p", folder_to,
                         None if folder_to else "open", None, f"m{i}", float(ts)))


def test_inbox_reads_only_the_newest_files_and_shows_what_reading_all_would(home, tmp_path):
    mailbox = Mailbox(peers_dir(home.env()))
    for i in range(300):
        _post(mailbox, i, str(home.project) if i % 3 == 0 else None)
    everything = mailbox.visible_to("me", home.project)
    assert mailbox.newest_visible("me", home.project, 20) == everything[-20:]
    # A corrupt file among the oldest is not read (nor reported) by the newest 20; among them it is skipped.
    old = mailbox.root / "open" / "1600000000000-000000.json"
    old.write_text("{half")
    assert mailbox.newest_visible("me", home.project, 20) == everything[-20:] and mailbox.corrupt == []
    new = mailbox.root / "open" / "1800000000000-000000.json"
    new.write_text("{half")
    assert mailbox.newest_visible("me", home.project, 20) == everything[-20:]
    assert [p for p, _ in mailbox.corrupt] == [new]
    out = home.attend("peers", "inbox")
    assert out.returncode == 0 and f"skipped {new}" in out.stderr and str(old) not in out.stderr
    assert out.stdout.splitlines()[-1].endswith(": m299") and len(out.stdout.splitlines()) == 20
    every = home.attend("peers", "inbox", "--all")
    assert str(old) in every.stderr and len(every.stdout.splitlines()) == 300


@pytest.mark.parametrize("limit", [0, 1, 5])
def test_newest_visible_with_no_trays_is_empty(home, limit):
    assert Mailbox(peers_dir(home.env())).newest_visible("me", home.project, limit) == []


def test_a_message_id_already_taken_is_never_overwritten(home):
    mailbox = Mailbox(peers_dir(home.env()))
    first = Message("1700000000000-abcdef", "a", "session", "/p", None, "open", None, "first", 1.0)
    path = mailbox.post(first)
    with pytest.raises(FileExistsError):
        mailbox.post(Message(first.id, "b", "session", "/p", None, "open", None, "second", 2.0))
    assert json.loads(path.read_text())["text"] == "first"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left behind
