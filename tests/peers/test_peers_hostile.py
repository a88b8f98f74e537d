"""Hostile peers files (issue 28, items 2, 3, 7-12 and 18): anyone on the machine can write the peers
folder, so one planted file, link or name must never stop a command or a sensor, never hang, never drive
the reader's terminal, and never make attend write or delete outside the peers folder."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from tests.sensors.sensor_material import Transcripts, shipped_sensor

from attend.peers.mailbox import Mailbox, Message, peers_dir, tray_name
from attend.sensors.base import Focus
from attend.sensors.context import ContextSensor
from attend.sensors.messages import MessagesSensor
from attend.sensors.peers import PeersSensor

#: A message file as `attend peers send` writes it, with `ts` given as raw JSON text.
MESSAGE = '{{"id": "1800000000000-00000{n}", "from": "a", "from_kind": "session", "project": "/p", "to": null, ' \
          '"channel": "open", "re": null, "text": "bad one", "ts": {ts}}}'
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def box(home) -> Mailbox:
    mailbox = Mailbox(peers_dir(home.env()))
    (mailbox.root / "open").mkdir(parents=True)
    return mailbox


#: Planted files a broken reader could hang on, recurse through or read without end: the commands that meet
#: them run as real processes (`timeout=` ends a hang); the rest run in-process (`home.attend`).
HANG_RISKS = {"fifo", "dev-zero", "deep", "alias-bomb", "huge"}


def attend_meeting(home, kind: str, *args: str):
    """`attend ARGS` in this home: a real process with a timeout when `kind` could hang it, else in-process."""
    return home.attend_process(*args, timeout=30) if kind in HANG_RISKS else home.attend(*args)


def clean(done) -> None:
    """No internal error, no traceback, and nothing a terminal acts on in what was printed."""
    assert done.returncode != 70, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream and "\x9b" not in stream


def good_message(mailbox: Mailbox, text: str = "still here", **fields) -> Message:
    message = Message(mailbox.new_id(), fields.get("sender", "a"), "session", "/p", None, "open",
                      fields.get("re"), text, time.time())
    mailbox.post(message)
    return message


def plant(folder: Path, kind: str) -> Path:
    """A bad message file of `kind` in `folder`."""
    path = folder / "1800000000000-000009.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "deep":
        path.write_text(DEEP)
    else:
        path.write_text(MESSAGE.format(n=9, ts=kind))
    return path


BAD_MESSAGES = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 400, "-5", '"soon"', "deep", "fifo", "dev-zero"]


@pytest.mark.parametrize("kind", BAD_MESSAGES)
def test_one_bad_message_file_is_skipped_and_named_by_inbox_and_the_messages_sensor(home, box, kind):
    good = good_message(box)
    bad = plant(box.root / "open", kind)
    done = attend_meeting(home, kind, "peers", "inbox", "--all")  # a FIFO must not hang it
    clean(done)
    assert done.returncode == 0 and good.id in done.stdout and "1800000000000-000009" not in done.stdout
    assert f"attend: skipped {bad}: " in done.stderr
    assert attend_meeting(home, kind, "peers", "inbox").returncode == 0
    sensor = MessagesSensor(shipped_sensor("messages", home.project).sensor.data["crate"])
    result = sensor.poll(Focus(cwd=home.project, env=home.env()))
    assert [m["id"] for m in result["messages"]] == [good.id]
    [line] = sensor.skipped()
    assert line.startswith(f"message {bad}: ")
    assert Path(bad).name in home.attend("doctor").stdout  # doctor names the skipped file


BATCHED = [Message(f"1800000000000-00000{n}", "a", "session", "/p", None, "open", None, f"batched {n}",
                   1800000000.0 + n) for n in (1, 3)]


@pytest.mark.parametrize("kind", ["NaN", "1e999", "9" * 400, '"soon"', "deep", "fifo", "dev-zero", "huge"])
def test_a_bad_line_or_a_bad_batch_file_is_skipped_and_named_by_inbox_and_the_messages_sensor(home, box, kind):
    """A batch file (messages received together, peers/mailbox.py) is read as untrusted as a message file: a bad
    line is left out and named with its line, the good lines around it stay; a file that cannot be read as one
    (a FIFO, a link to /dev/zero, one past its bound) is left out whole."""
    from attend.bounds import MAX_PEER_BATCH_BYTES

    path = box.root / "open" / "1800000000000-000003+1800000000000-000001.jsonl"
    whole = kind in ("fifo", "dev-zero", "huge")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        path.write_text(" " * (MAX_PEER_BATCH_BYTES + 1))
    else:
        bad = DEEP if kind == "deep" else MESSAGE.format(n=2, ts=kind)
        path.write_text("\n".join([json.dumps(BATCHED[0].to_json()), bad, json.dumps(BATCHED[1].to_json())]) + "\n")
    shown = [] if whole else [m.id for m in BATCHED]
    done = attend_meeting(home, kind, "peers", "inbox", "--all")  # a FIFO must not hang it
    clean(done)
    assert done.returncode == 0 and "1800000000000-000002" not in done.stdout
    assert all(mid in done.stdout for mid in shown)
    assert f"attend: skipped {path}: {'' if whole else 'line 2: '}" in done.stderr
    sensor = MessagesSensor(shipped_sensor("messages", home.project).sensor.data["crate"])
    result = sensor.poll(Focus(cwd=home.project, env=home.env()))
    assert [m["id"] for m in result["messages"]] == shown
    [line] = sensor.skipped()
    assert line.startswith(f"message {path}: {'' if whole else 'line 2: '}")
    assert path.name in home.attend("doctor").stdout


def test_a_message_file_name_that_is_not_utf8_is_read_and_reported_escaped(home, box):
    good = good_message(box)
    odd = os.fsencode(box.root / "open") + b"/\xff\x1b]0;PWNED\x07.json"
    with open(odd, "w") as handle:
        handle.write("{")
    sensor = MessagesSensor(shipped_sensor("messages", home.project).sensor.data["crate"])
    assert [m["id"] for m in sensor.poll(Focus(cwd=home.project, env=home.env()))["messages"]] == [good.id]
    [line] = sensor.skipped()
    assert "\ufffd\\x1b]0;PWNED\\x07.json" in line
    line.encode("utf-8")  # what the store keeps and `attend sensors` prints
    done = home.attend("sensors", "poll", "messages")
    clean(done)
    assert done.returncode == 0
    doctor = home.attend("doctor")
    clean(doctor)
    assert "\\x1b]0;PWNED" in doctor.stdout


@pytest.mark.parametrize("kind", ["9" * 400, "deep", "fifo", "pid-text", "pid-huge"])
def test_one_bad_heartbeat_is_skipped_by_list_send_and_the_peers_sensor(home, box, tmp_path, kind):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    box.beat("b", elsewhere, pid=None, started=time.time())
    bad = box.root / "heartbeat" / "x"
    if kind == "fifo":
        os.mkfifo(bad)
    elif kind == "deep":
        bad.write_text(DEEP)
    else:
        pid = {"pid-text": '"1"', "pid-huge": "9" * 400}.get(kind, "1")
        started = kind if kind.isdigit() else "1"
        bad.write_text(f'{{"session": "x", "project": "/tmp", "pid": {pid}, "started": {started}}}')
    listed = attend_meeting(home, kind, "peers", "list")
    clean(listed)
    assert listed.returncode == 0 and listed.stdout.startswith("b  ")
    sent = attend_meeting(home, kind, "peers", "send", "--to", str(elsewhere), "hi")
    clean(sent)
    assert sent.returncode == 0, sent.stderr
    sensor = PeersSensor(shipped_sensor("peers", home.project).sensor.data["crate"])
    assert [s["session"] for s in sensor.poll(Focus(cwd=home.project))["sessions"]] == ["b"]
    [line] = sensor.skipped()
    assert line.startswith(f"heartbeat {bad}: ")
    assert "heartbeat/x" in home.attend("doctor").stdout


def test_a_sweep_never_follows_a_tray_symlink_out_of_the_peers_folder_nor_deletes_what_attend_did_not_write(
        home, box, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "notes.txt").write_text("keep me")
    (outside / "1800000000000-000001.json").write_text("{}")
    (outside / ".project").write_text(str(tmp_path / "gone"))
    (box.root / "p-0000000000000000").symlink_to(outside)
    stale = box.root / "p-1111111111111111"  # a real tray whose project is gone, holding a stranger's file
    stale.mkdir()
    (stale / ".project").write_text(str(tmp_path / "gone-too"))
    (stale / "1800000000000-000002.json").write_text("{}")
    (stale / "README").write_text("not attend's")
    receiver = tmp_path / "receiver"
    receiver.mkdir()
    box.beat("b", receiver, pid=None, started=time.time())

    done = home.attend("peers", "send", "--to", str(receiver), "hi")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in outside.iterdir()) == [".project", "1800000000000-000001.json", "notes.txt"]
    assert sorted(p.name for p in stale.iterdir()) == [".project", "README"]  # its message went, nothing else


@pytest.mark.parametrize("folder", ["open", "@ops", "tray"])
def test_send_never_writes_through_a_symlinked_channel_or_tray_folder(home, box, tmp_path, folder):
    outside = tmp_path / "outside"
    outside.mkdir()
    receiver = tmp_path / "receiver"
    receiver.mkdir()
    box.beat("b", receiver, pid=None, started=time.time())
    box.join("ops", "b")
    name = tray_name(receiver) if folder == "tray" else folder
    if folder == "open":
        (box.root / "open").rmdir()
    (box.root / name).symlink_to(outside)
    where = {"open": [], "@ops": ["--channel", "ops"], "tray": ["--to", str(receiver)]}[folder]
    done = home.attend("peers", "send", *where, "hi")
    clean(done)
    assert done.returncode == 1 and "symlink" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert list(outside.iterdir()) == []


def test_peer_fields_are_printed_escaped_in_inbox_list_and_channels(home, box):
    title = "\x1b]0;PWNED\x07"
    good_message(box, text="hello \u202egnp.exe \x9b31m", re=title, sender=f"s{title}")
    (box.root / "heartbeat").mkdir()
    (box.root / "heartbeat" / "x").write_text(json.dumps(
        {"session": f"x{title}", "project": f"/tmp/{title}", "pid": None, "started": time.time()}))
    (box.root / "channels.yaml").write_text(json.dumps({f"ops{title}": [f"m{title}", "b"]}))
    for args in (("peers", "inbox"), ("peers", "inbox", "--json"), ("peers", "list"), ("peers", "list", "--json"),
                 ("peers", "channels"), ("peers", "channels", "--json")):
        done = home.attend(*args)
        clean(done)
        assert done.returncode == 0 and "PWNED" in done.stdout, (args, done.stderr)
    shown = json.loads(home.attend("peers", "inbox", "--json").stdout)
    assert shown[0]["re"] == title and shown[0]["text"] == "hello \u202egnp.exe \x9b31m"  # the same data


def test_a_lone_surrogate_in_one_message_is_shown_replaced_and_inbox_still_works(home, box):
    good = good_message(box)
    (box.root / "open" / "1800000000000-000003.json").write_text(MESSAGE.format(n=3, ts=1).replace(
        '"bad one"', '"half \\ud800 a pair"'))
    for args in (("peers", "inbox"), ("peers", "inbox", "--json"), ("peers", "inbox", "1800000000000-000003")):
        done = home.attend_process(*args)
        clean(done)
        assert done.returncode == 0 and "half" in done.stdout, (args, done.stderr)
    assert good.id in home.attend("peers", "inbox").stdout


@pytest.mark.parametrize("kind", ["deep", "alias-bomb", "huge", "not-utf8"])
def test_a_hostile_channels_file_is_no_channels_for_every_peers_command(home, box, kind):
    path = box.root / "channels.yaml"
    if kind == "deep":
        path.write_text("a: " + "[" * 50_000 + "]" * 50_000)
    elif kind == "alias-bomb":
        lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
        path.write_text("\n".join(lines))
    elif kind == "huge":
        path.write_text(json.dumps({f"c{i}": ["m" * 100] * 10 for i in range(50_000)}))
    else:
        path.write_bytes(b'ops: ["\xff"]\n')
    good_message(box)
    for args in (("peers", "channels"), ("peers", "inbox"), ("peers", "join", "ops"), ("peers", "send", "hi")):
        started = time.monotonic()
        done = attend_meeting(home, kind, *args)
        clean(done)
        assert done.returncode in (0, 1) and time.monotonic() - started < 20, (args, done.stderr)


def test_a_400_digit_token_count_is_no_context_in_peers_list_and_the_peers_and_context_sensors(home, box):
    box.beat("busy", home.project, pid=None, started=time.time())
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project.resolve())
    transcripts.turn("busy", 150_000)
    with transcripts.path("busy").open("a") as fh:
        fh.write(json.dumps({"type": "assistant", "sessionId": "busy", "message": {"role": "assistant",
                 "usage": {"input_tokens": 10**400 - 1}}}) + "\n")
    listed = home.attend("peers", "list", "--json")
    clean(listed)
    [row] = json.loads(listed.stdout)
    assert row["context_tokens"] == 150_000  # the hostile turn is no turn; the one before it counts
    peers = PeersSensor(shipped_sensor("peers", home.project).sensor.data["crate"])
    assert peers.poll(Focus(cwd=home.project))["sessions"][0]["context_tokens"] == 150_000
    config = dict(shipped_sensor("context", home.project).sensor.data["crate"],
                  projects_dir=str(transcripts.projects_dir))
    assert ContextSensor(config).poll(Focus(cwd=home.project))["tokens"] == 150_000


@pytest.mark.parametrize("target", ["loop/x", "~nosuchuser-attend/x"])
def test_send_to_a_folder_that_cannot_be_resolved_is_one_line(home, box, target):
    (home.project / "loop").symlink_to(home.project / "loop")
    done = home.attend("peers", "send", "--to", target, "hi")
    clean(done)
    assert done.returncode == 1 and "cannot resolve" in done.stderr and done.stderr.count("\n") == 1
