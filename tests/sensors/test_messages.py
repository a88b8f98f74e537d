"""The messages sensor against a real peers folder in a temporary XDG home, through the shipped file's triggers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from sensor_material import Driver, shipped_sensor

from attend.peers.mailbox import Mailbox, Message, peers_dir, tray_name
from attend.sensors.base import Focus
from attend.sensors.messages import MessagesSensor


class Peers:
    """A peers folder with sessions in projects, and a driver of the shipped messages sensor for `project`."""

    def __init__(self, home, project: Path) -> None:
        self.env = home.env()
        self.mailbox = Mailbox(peers_dir(self.env))
        self.project = project
        compiled = shipped_sensor("messages", project)
        self.driver = Driver(compiled, MessagesSensor(compiled.sensor.data["crate"]),
                             Focus(cwd=project, env=self.env))

    def live(self, session: str, project: Path) -> None:
        self.mailbox.beat(session, project, pid=None, started=time.time())

    def send(self, sender: str, text: str, *, to: Path | None = None, channel: str | None = None,
             kind: str = "session") -> str:
        message = Message(self.mailbox.new_id(), sender, kind, "/elsewhere", str(to.resolve()) if to else None,
                          channel or (None if to else "open"), None, text, time.time())
        self.mailbox.post(message)
        return message.id


@pytest.fixture
def peers(home) -> Peers:
    p = Peers(home, home.project)
    p.live("b", home.project)
    assert p.driver.poll() == []  # the baseline
    return p


def test_a_message_to_the_project_fires_addressed_naming_the_sender_and_the_id(peers) -> None:
    mid = peers.send("a", "please rebase onto main", to=peers.project)
    to = peers.project.resolve()
    assert peers.driver.poll() == [("addressed", 7.0,
                                    f"message {mid} [from_kind=session from_id=a to={to}]: please rebase onto main")]
    assert peers.driver.poll() == []  # once


def test_open_channel_messages_fire_open_and_a_plain_terminal_is_human(peers) -> None:
    mid = peers.send("pid-4242", "lunch?", kind="human")
    assert peers.driver.poll() == [("open", 4.0, f"message {mid} [from_kind=human from_id=pid-4242 to=open]: lunch?")]
    [item] = peers.driver.results[-1]["messages"][-1:]
    assert (item["from"], item["from_kind"]) == ("human", "human")


def test_channel_messages_fire_only_while_a_session_of_the_project_is_a_member(peers) -> None:
    peers.mailbox.join("ops", "c")
    outside = peers.send("c", "not for b yet", channel="ops")
    assert peers.driver.poll() == []
    peers.mailbox.join("ops", "b")
    assert peers.driver.poll() == []  # joining later does not replay what was said before
    mid = peers.send("c", "deploy at 5", channel="ops")
    assert peers.driver.poll() == [("channel", 5.0, f"message {mid} [from_kind=session from_id=c to=@ops]: deploy at 5")]
    peers.mailbox.leave("ops", "b")
    peers.mailbox.join("ops", "b")
    assert peers.driver.poll() == []  # membership changing never re-fires a message
    assert outside in {i["id"] for i in peers.driver.results[-1]["messages"]}


def test_newlines_and_control_characters_are_escaped_and_a_long_text_is_split_into_marked_parts(peers) -> None:
    mid = peers.send("a", "line one\nline two\x1b[31m red\x07" + "x" * 500, to=peers.project)
    [(_, _, description)] = peers.driver.poll()
    first, second, third = description.split("\n")  # the parts: the message lane prints each as a line
    assert "\x1b" not in description and "\x07" not in description
    assert first.startswith(f"message {mid} [") and first.split("]: ", 1)[1].startswith(
        "(1/3) line one line two\\x1b[31m red\\x07xxx")
    assert len(first.split("]: ", 1)[1]) == len("(1/3) ") + 260
    assert second.startswith(f"message {mid} (2/3) xxx") and len(second) == len(f"message {mid} (2/3) ") + 260
    shown = len("line one line two\\x1b[31m red\\x07") + 500  # the escapes take 4 characters each
    assert third == f"message {mid} (3/3) " + "x" * (shown - 520)


def test_a_text_past_three_parts_is_cut_with_how_to_read_it_whole(peers) -> None:
    words = " ".join(f"word{n:03d}" for n in range(150))  # 1,199 characters, spaces to break at
    mid = peers.send("a", words, to=peers.project)
    [(_, _, description)] = peers.driver.poll()
    lines = description.split("\n")
    assert [line.split(") ", 1)[0].rsplit("(", 1)[1] for line in lines] == ["1/3", "2/3", "3/3"]
    assert lines[2].endswith(f"… (cut: attend peers inbox --id {mid} reads it whole)")
    # Each part breaks at a space, so no word is split across two lines.
    parts = [line.split(") ", 1)[1] for line in lines]
    assert all(part.split(" ")[-1].startswith("word") and len(part.split(" ")[-1]) == 7 for part in parts[:2])
    assert all(len(part) <= 260 for part in parts[:2])
    # A text of at most 260 characters is one line, unmarked.
    short = peers.send("a", "y" * 260, to=peers.project)
    [(_, _, one)] = peers.driver.poll()
    assert one.endswith(": " + "y" * 260) and "\n" not in one and short in one


def test_the_header_names_who_sent_it_and_for_whom_and_an_older_file_without_them_still_reads(peers) -> None:
    message = Message(peers.mailbox.new_id(), "a", "session", "/elsewhere", str(peers.project.resolve()), None,
                      None, "for ada", time.time(), "a", "ada")
    peers.mailbox.post(message)
    [(_, _, line)] = peers.driver.poll()
    assert line == f"message {message.id} [from_kind=session from_id=a on_behalf_of=ada to={peers.project.resolve()}]: for ada"
    [item] = [i for i in peers.driver.results[-1]["messages"] if i["id"] == message.id]
    assert (item["from_id"], item["on_behalf_of"], item["to"]) == ("a", "ada", str(peers.project.resolve()))
    # A file as attend wrote it before from_id and on_behalf_of: from_id is its `from`, nobody named.
    tray = peers.mailbox.root / tray_name(peers.project)
    old = {"id": "9999999999998-abcdef", "from": "s-old", "from_kind": "session", "project": "/x",
           "to": str(peers.project), "channel": None, "re": None, "text": "from an older attend", "ts": time.time()}
    (tray / "9999999999998-abcdef.json").write_text(json.dumps(old))
    [(_, _, line)] = peers.driver.poll()
    assert line == f"message 9999999999998-abcdef [from_kind=session from_id=s-old to={peers.project}]: from an older attend"


def test_more_than_eight_new_messages_in_one_poll_are_one_digest_line(peers) -> None:
    for n in range(8):
        peers.send("a", f"note {n}")
    peers.send("c", "urgent", to=peers.project)
    assert peers.driver.poll() == [("digest", 7.0, "9 new messages from c, a; attend peers inbox")]
    for n in range(8):
        peers.send("a", f"again {n}")
    assert len(peers.driver.poll()) == 8


def test_a_corrupt_message_file_is_skipped_and_the_others_still_fire(peers) -> None:
    tray = peers.mailbox.root / tray_name(peers.project)
    tray.mkdir(parents=True, exist_ok=True)
    (tray / "0000000000001-badbad.json").write_text("{not json")
    mid = peers.send("a", "still here", to=peers.project)
    assert [f[0] for f in peers.driver.poll()] == ["addressed"]
    assert [i["id"] for i in peers.driver.results[-1]["messages"]] == [mid]
    [line] = peers.driver.sensor.skipped()
    assert line.startswith(f"message {tray / '0000000000001-badbad.json'}: JSONDecodeError")
    peers.driver.poll()
    assert len(peers.driver.sensor.skipped()) == 1  # reported while it is there, read once


def test_a_corrupt_message_file_is_a_line_in_attend_sensors(home) -> None:
    tray = peers_dir(home.env()) / tray_name(home.project)
    tray.mkdir(parents=True)
    (tray / "0000000000001-badbad.json").write_bytes(b"\xff\xfe not a message")
    polled = home.attend("sensors", "poll", "messages")
    assert polled.returncode == 0, polled.stderr
    [row] = [r for r in json.loads(home.attend("sensors", "list", "--json").stdout) if r["name"] == "messages"]
    assert row["state"] == "ok" and "skipped 1 unreadable: message " in row["message"]
    assert "0000000000001-badbad.json" in row["message"]


def test_only_the_newest_window_of_messages_is_listed(home) -> None:
    p = Peers(home, home.project)
    sensor = MessagesSensor({"text_limit": 40, "window": 3, "cold_start_addressed": 50, "cold_start_recent": 120})
    ids = [f"{1_700_000_000_000 + n:013d}-00000{n}" for n in range(5)]  # ids sort by their time
    for n, mid in enumerate(ids):
        p.mailbox.post(Message(mid, "a", "session", "/elsewhere", None, "open", None, f"m{n}", 1_700_000_000 + n))
    assert [i["id"] for i in sensor.poll(Focus(cwd=home.project, env=p.env))["messages"]] == ids[-3:]


def test_the_sensor_wakes_on_the_message_and_batch_files_of_its_folders(home) -> None:
    p = Peers(home, home.project)
    root = str(peers_dir(p.env))
    assert p.driver.sensor.wake_on(Focus(cwd=home.project, env=p.env)) == [
        f"{root}/{folder}/*.{ext}" for folder in (tray_name(home.project), "open", "@*") for ext in ("json", "jsonl")]


def test_every_magnitude_is_a_settings_key(home) -> None:
    done = home.attend("settings", "set", "attend.sensors.messages.triggers.addressed.magnitude", "6")
    assert done.returncode == 0, done.stderr
    got = json.loads(home.attend("settings", "get", "attend.sensors.messages.triggers.addressed.magnitude",
                                 "--json").stdout)
    assert (got["value"], got["layer"]) == (6, "user")
    assert home.attend("settings", "set", "attend.sensors.messages.digest.over", "3").returncode == 0
    assert home.attend("settings", "set", "attend.sensors.messages.digest.over", "zero").returncode == 3
    explained = home.attend("explain", "messages/addressed").stdout
    assert "magnitude    6" in explained


def test_a_hand_written_message_file_cannot_put_control_characters_or_surrogates_on_the_line(peers) -> None:
    tray = peers.mailbox.root / tray_name(peers.project)
    tray.mkdir(parents=True, exist_ok=True)
    hostile = {"id": "9999999999999-abcdef", "from": "evil\x1b]0;pwned\x07\nsession", "from_kind": "session",
               "project": "/x", "to": str(peers.project), "channel": None, "re": None,
               "text": "lone \ud800 surrogate and \x1b[2J clear", "ts": time.time()}
    (tray / "9999999999999-abcdef.json").write_text(json.dumps(hostile))  # json.dumps escapes the surrogate
    [(_, _, line)] = peers.driver.poll()
    assert "\x1b" not in line and "\x07" not in line and "\n" not in line
    assert "\ud800" not in line and "\ufffd" in line
    line.encode("utf-8")  # printable as UTF-8: a lone surrogate would raise here
    assert line.startswith("message 9999999999999-abcdef [from_kind=session from_id=evil\\x1b]0;pwned\\x07 session to=")


def test_two_open_messages_in_one_poll_are_each_medium_not_summed_to_high(peers, home) -> None:
    assert home.attend("sensors", "poll", "messages").returncode == 0  # the CLI's own baseline
    first, second = peers.send("a", "lunch?"), peers.send("c", "coffee?")
    done = home.attend("sensors", "poll", "messages")
    assert done.returncode == 0, done.stderr
    # two sends in the same millisecond order by their random suffix: the lines, not their order, matter
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("[attend")) == sorted([
        f"[attend sensor=messages priority=medium] message {first} [from_kind=session from_id=a to=open]: lunch?",
        f"[attend sensor=messages priority=medium] message {second} [from_kind=session from_id=c to=open]: coffee?"])
