"""The peers sensor against real heartbeat files and transcripts written the way Claude Code writes them."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest
import trio
import yaml
from sensor_material import SHIPPED, Transcripts

from attend.compiler import compile_sensor
from attend.peers.mailbox import Mailbox, peers_dir
from attend.runtime import kinds
from attend.runtime.kinds import PollContext
from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
from attend.runtime.store import open_project_store
from attend.sensors.peers import PeersSensor
from attend.spec import layer_paths, load_set


@pytest.fixture
def others(tmp_path: Path) -> Path:
    p = tmp_path / "elsewhere"
    p.mkdir()
    return p


@pytest.fixture
def mailbox(home) -> Mailbox:
    return Mailbox(peers_dir())


@pytest.fixture
def transcripts(home) -> Transcripts:
    """Transcripts of the home project, where the shipped `projects_dir` (~/.claude/projects) looks."""
    return Transcripts(home.root / ".claude" / "projects", home.project.resolve())


def peers(drive, home):
    return drive("peers", PeersSensor, home.project)


def live(mailbox: Mailbox, session: str, project: Path) -> None:
    mailbox.beat(session, project, pid=None, started=time.time())


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_sessions_starting_and_exiting_here_and_elsewhere_fire_the_shipped_magnitudes(drive, home, mailbox, others):
    d = peers(drive, home)
    live(mailbox, "me", home.project)
    assert d.poll() == []  # the baseline
    live(mailbox, "two", home.project)
    live(mailbox, "far", others)
    here, far = home.project.resolve(), others.resolve()
    assert d.poll() == [("started-elsewhere", 1.0, f"session far started in {far}"),
                        ("started-here", 3.0, f"session two started in this project ({here})")]
    mailbox.leave_presence("two")
    mailbox.leave_presence("far")
    assert d.poll() == [("exited-elsewhere", 0.5, f"session far exited in {far}"),
                        ("exited-here", 2.0, f"session two exited in this project ({here})")]


def test_a_heartbeat_older_than_the_live_window_reads_as_an_exit(drive, home, mailbox):
    d = peers(drive, home)
    live(mailbox, "crashed", home.project)
    d.poll()
    age(mailbox.root / "heartbeat" / "crashed", 600)
    assert [f[0] for f in d.poll()] == ["exited-here"]


def test_status_follows_the_transcripts_age_and_context_its_newest_turn(drive, home, mailbox, transcripts):
    d = peers(drive, home)
    live(mailbox, "s1", home.project)
    transcripts.turn("s1", 50_000)
    transcripts.turn("s1", 83_000)
    assert d.poll() == []
    [session] = d.results[-1]["sessions"]
    assert (session["status"], session["context"], session["context_tokens"]) == ("working", 41.5, 83_000)
    age(transcripts.path("s1"), 61)  # the shipped working_within is 60 s
    assert d.poll() == [("status-changed", 1.5, f"session s1 in {home.project.resolve()} is waiting (was working)")]
    transcripts.turn("s1", 90_000)
    assert d.poll() == [("status-changed", 1.5, f"session s1 in {home.project.resolve()} is working (was waiting)")]
    assert d.results[-1]["sessions"][0]["context"] == 45.0


def test_a_session_without_a_transcript_is_unknown_and_its_transcript_appearing_is_no_status_change(
        drive, home, mailbox, transcripts):
    d = peers(drive, home)
    live(mailbox, "plain", home.project)
    d.poll()
    [session] = d.results[-1]["sessions"]
    assert (session["status"], session["context"], d.results[-1]["statuses"]) == ("unknown", "unknown", [])
    transcripts.turn("plain", 10_000)
    assert d.poll() == []
    assert d.results[-1]["statuses"][0]["status"] == "working"


def test_the_newest_turn_is_found_past_a_huge_tool_result_at_the_transcripts_end(drive, home, mailbox, transcripts):
    d = peers(drive, home)
    live(mailbox, "s1", home.project)
    transcripts.turn("s1", 120_000)
    with transcripts.path("s1").open("a") as fh:  # a 600 KB tool result after the last assistant turn
        fh.write(json.dumps({"type": "user", "message": {"content": "x" * 600_000}}) + "\n")
    d.poll()
    assert d.results[-1]["sessions"][0]["context"] == 60.0


def test_the_sensor_wakes_on_the_heartbeat_folder_of_the_peers_folder(drive, home, mailbox):
    d = peers(drive, home)
    assert d.sensor.wake_on(d.focus) == [str(mailbox.root / "heartbeat")]
    assert str(home.cache) in d.sensor.wake_on(d.focus)[0]


def test_the_shipped_file_names_every_magnitude_of_the_design():
    triggers = yaml.safe_load((SHIPPED / "peers.yaml").read_text())["triggers"]
    assert {name: t["magnitude"] for name, t in triggers.items()} == {
        "started-here": 3.0, "exited-here": 2.0, "started-elsewhere": 1.0, "exited-elsewhere": 0.5,
        "status-changed": 1.5}


def test_a_corrupt_heartbeat_is_left_out_and_named_in_attend_sensors(home, mailbox):
    live(mailbox, "good", home.project)
    (mailbox.root / "heartbeat" / "broken").write_text('{"session": "broken", "proj')
    (mailbox.root / "heartbeat" / "binary").write_bytes(b"\xff\xfe\x00")
    polled = home.attend("sensors", "poll", "peers", "--json")
    assert polled.returncode == 0, polled.stderr
    assert [s["session"] for s in json.loads(polled.stdout)["result"]["sessions"]] == ["good"]
    listing = home.attend("sensors")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr
    [line] = [ln for ln in listing.stdout.splitlines() if "skipped 2 unreadable" in ln]
    assert f"heartbeat {mailbox.root / 'heartbeat' / 'broken'}: JSONDecodeError" in line
    assert f"heartbeat {mailbox.root / 'heartbeat' / 'binary'}: UnicodeDecodeError" in line
    row = {r["name"]: r for r in json.loads(home.attend("sensors", "list", "--json").stdout)}["peers"]
    assert row["state"] == "ok" and "skipped 2 unreadable" in row["message"]


def test_an_exit_soon_after_a_start_is_held_by_the_event_lanes_refractory_named_in_history_and_shown_later(
        home, mailbox):
    """docs/peers.md: presence lines ride the event lane, so its engagement and governor apply."""
    env = home.env()
    paths = layer_paths(home.project, env)
    compiled = compile_sensor(load_set(home.project, env).sensors["peers"])
    now = [1_800_000_000.0]
    store = open_project_store(paths, clock=lambda: now[0])
    out, err = io.StringIO(), io.StringIO()
    discloser = Discloser(store, lambda name: SensorTerms.of("event", compiled.sensor.ir),
                          stdout=out, stderr=err, clock=lambda: now[0])
    ctx = PollContext(project_dir=home.project, env=env, paths=paths, store=store)

    def poll_at(t: float) -> None:
        now[0] = 1_800_000_000.0 + t
        record_poll(store, compiled, trio.run(kinds.poll, compiled, ctx), now=now[0])
        discloser.run_once()

    try:
        live(mailbox, "me", home.project)
        poll_at(0)  # the baseline
        live(mailbox, "two", home.project)
        poll_at(1)
        assert "session two started in this project" in out.getvalue()
        mailbox.leave_presence("two")
        poll_at(3)  # seen at once, held by the 60 s absolute refractory after the start's line
        assert "exited" not in out.getvalue() + err.getvalue()
        history = home.attend("sensors", "history", "peers", "--trigger", "exited-here")
        assert history.returncode == 0, history.stderr
        assert "key two: held: absolute refractory" in history.stdout, history.stdout
        now[0] = 1_800_000_000.0 + 62
        discloser.run_once()  # nothing is dropped: once the refractory is over it is shown
        assert f"session two exited in this project ({home.project.resolve()})" in err.getvalue()
    finally:
        store.close()
