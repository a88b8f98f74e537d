"""`attend peers list`'s status and context use, and the peers sensor's settings, through the real CLI."""

from __future__ import annotations

import json
import os
import time

from tests.sensors.sensor_material import Transcripts

from attend.peers.mailbox import Mailbox, peers_dir


def listing(home) -> dict[str, dict]:
    out = home.attend("peers", "list", "--json")
    assert out.returncode == 0, out.stderr
    return {row["session"]: row for row in json.loads(out.stdout)}


def test_peers_list_shows_each_sessions_status_and_context_use_from_its_transcript(home, tmp_path):
    mailbox = Mailbox(peers_dir(home.env()))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for session, project in (("busy", home.project), ("idle", home.project), ("plain", elsewhere)):
        mailbox.beat(session, project, pid=None, started=time.time())
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project.resolve())
    transcripts.turn("busy", 150_000)
    transcripts.turn("idle", 20_000)
    then = time.time() - 300
    os.utime(transcripts.path("idle"), (then, then))

    rows = listing(home)
    assert {s: (r["status"], r["context"]) for s, r in rows.items()} == {
        "busy": ("working", 75.0), "idle": ("waiting", 10.0), "plain": ("unknown", "unknown")}
    assert rows["busy"]["context_tokens"] == 150_000 and rows["plain"]["project"] == str(elsewhere.resolve())
    text = home.attend("peers", "list").stdout
    assert f"busy  {home.project.resolve()}  working  context 75%  hooks  (no pid)" in text
    assert "plain" in text and "unknown  context unknown" in text


def test_the_working_threshold_is_the_peers_sensors_setting_for_the_listing_too(home):
    Mailbox(peers_dir(home.env())).beat("s1", home.project, pid=None, started=time.time())
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project.resolve())
    transcripts.turn("s1", 10_000)
    then = time.time() - 90
    os.utime(transcripts.path("s1"), (then, then))
    assert listing(home)["s1"]["status"] == "waiting"  # the shipped 60 s
    done = home.attend("settings", "set", "attend.sensors.peers.crate.working_within", "5m")
    assert done.returncode == 0, done.stderr
    assert listing(home)["s1"]["status"] == "working"


def test_every_peers_magnitude_is_a_settings_key(home):
    key = "attend.sensors.peers.triggers.started-here.magnitude"
    assert json.loads(home.attend("settings", "get", key, "--json").stdout)["value"] == 3.0
    done = home.attend("settings", "set", key, "4.5")
    assert done.returncode == 0, done.stderr
    got = json.loads(home.attend("settings", "get", key, "--json").stdout)
    assert (got["value"], got["layer"]) == (4.5, "user")
    assert "magnitude    4.5" in home.attend("explain", "peers/started-here").stdout
    for trigger in ("exited-here", "started-elsewhere", "exited-elsewhere", "status-changed"):
        out = home.attend("settings", "get", f"attend.sensors.peers.triggers.{trigger}.magnitude")
        assert out.returncode == 0, out.stderr
    refused = home.attend("settings", "set", "attend.sensors.peers.triggers.status-changed.magnitude", "-1")
    assert refused.returncode == 3


def test_a_heartbeat_is_its_process_own_another_with_the_same_session_neither_rewrites_nor_removes_it(home):
    import subprocess
    import sys

    mailbox = Mailbox(peers_dir(home.env()))
    owner = os.getppid()  # a running process that is not this one
    assert mailbox.beat("dup", home.project, pid=owner, started=1.0) is None
    held = mailbox.beat("dup", home.project, pid=os.getpid(), started=2.0)
    assert held is not None and held.pid == owner
    assert mailbox.owner("dup", os.getpid()).pid == owner
    assert mailbox.leave_presence("dup", pid=os.getpid()) is False
    assert [(p.session, p.pid) for p in mailbox.presences()] == [("dup", owner)]
    assert mailbox.leave_presence("dup", pid=owner) is True  # its owner's clean exit
    assert mailbox.presences() == []
    # An owner gone without a word (SIGKILL) holds nothing: the other process's next beat takes it over.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert mailbox.beat("dup", home.project, pid=int(gone.stdout), started=3.0) is None
    assert mailbox.beat("dup", home.project, pid=os.getpid(), started=4.0) is None
    assert [p.pid for p in mailbox.presences()] == [os.getpid()]
    assert mailbox.leave_presence("dup", pid=os.getpid()) is True
    assert mailbox.presences() == []
