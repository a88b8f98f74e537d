"""Streaming command sensors end to end: a real `attend run`, a real long-running child that prints JSON
lines, crashes, floods and hangs on purpose (streams/stream_child.py).

No timed assertion: each sensor's interval is far longer than the test waits (a stream is never polled),
so a line that arrives at all came from the stream.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
from daemon_rig import (
    PATIENCE,
    alive,
    journal_rows,
    query,
    sensor_yaml,
    sensors_json,
    wait_until,
)

from attend.runtime.faults import NOTIFICATION_STAGES

pytestmark = pytest.mark.slow

CHILD = str(Path(__file__).parent / "streams" / "stream_child.py")

#: Every record is a new item (its seq is the key); the first evaluation fires too.
EACH_RECORD = {"path": "$.items[*]", "key": "seq", "on": "added", "initial": "fire", "magnitude": 3,
               "description": "record {seq}: {msg}"}


def _stream_sensor(home, name: str, argv: list[str], trigger: dict | None = None, **command) -> None:
    home.write_user_sensor(name, sensor_yaml(
        name, argv, trigger=trigger or EACH_RECORD, interval="1h", min_interval="0.1s",
        command={"output": "stream", **command},
    ))


class Feed:
    """The file a `follow` child prints from; the test appends records to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")

    def add(self, *records: dict) -> None:
        with self.path.open("a") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")

    def crash(self) -> None:
        with self.path.open("a") as f:
            f.write("CRASH\n")


def _line(name: str, seq: int, msg: str) -> str:
    """A record's line without its priority (records of one evaluation accumulate: medium or high)."""
    return f"sensor={name} record {seq}: {msg}"


def _records(lines: list[str]) -> list[str]:
    """The stream lines of stdout as `_line` writes them."""
    out = []
    for line in lines:
        head, _, text = line.partition("] ")
        if head.startswith("[attend sensor="):
            out.append(f"{head.split()[1]} {text}")
    return out


def test_a_streamed_record_reaches_stdout(daemon, quiet_home) -> None:
    feed = Feed(quiet_home.root / "feed.jsonl")
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path)])
    d = daemon()
    wait_until(lambda: "stream running" in sensors_json(quiet_home).get("feed", {}).get("message", ""),
               what="the stream's process")
    feed.add({"seq": 1, "msg": "hello"})
    assert d.wait_for(lambda ls: _line("feed", 1, "hello") in _records(ls))
    assert d.stop() == 0


def test_attend_sensors_still_says_the_stream_runs_after_its_records_are_evaluated(daemon, quiet_home) -> None:
    # an evaluation's status used to replace the message with its notes: "" once a record came
    feed = Feed(quiet_home.root / "feed.jsonl")
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path)])
    d = daemon()
    feed.add({"seq": 1, "msg": "hello"})
    assert d.wait_for(lambda ls: _line("feed", 1, "hello") in _records(ls))
    status = sensors_json(quiet_home)["feed"]
    assert status["state"] == "ok" and "stream running (pid " in status["message"], status
    assert d.stop() == 0


def test_a_crashed_child_is_restarted_and_resumes_at_its_cursor_without_repeat_or_gap(daemon, quiet_home) -> None:
    feed = Feed(quiet_home.root / "feed.jsonl")
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path), "--after={cursor}"],
                   cursor="seq")
    d = daemon()
    feed.add({"seq": 1, "msg": "a"}, {"seq": 2, "msg": "b"})
    d.wait_for(lambda ls: _line("feed", 2, "b") in _records(ls))
    feed.crash()
    feed.add({"seq": 3, "msg": "c"})  # written while the child is dead: read by the restarted one
    d.wait_for(lambda ls: _line("feed", 3, "c") in _records(ls))
    feed.add({"seq": 4, "msg": "d"})
    lines = d.wait_for(lambda ls: _line("feed", 4, "d") in _records(ls))
    status = sensors_json(quiet_home)["feed"]
    assert "restarted 1 time(s)" in status["message"] and "crashing on purpose" in status["message"], status
    assert d.stop() == 0
    assert _records(lines) == [_line("feed", n, m) for n, m in ((1, "a"), (2, "b"), (3, "c"), (4, "d"))]
    # A new daemon resumes after the stored cursor: nothing repeated, and what came meanwhile is read.
    feed.add({"seq": 5, "msg": "e"})
    d2 = daemon()
    lines = d2.wait_for(lambda ls: _line("feed", 5, "e") in _records(ls))
    assert _records(lines) == [_line("feed", 5, "e")]
    # The child itself never printed a record twice: each start began after the cursor.
    assert Path(str(feed.path) + ".printed").read_text().split() == ["1", "2", "3", "4", "5"]
    assert d2.stop() == 0


#: The bound docs/runtime.md states for the daemon's resident size through a 100,000-line flood, in MiB. A stream
#: buffers at most ~1.2 MiB (kinds/stream.py); holding the 100k records (~6 MB of text, ~60 MB as objects)
#: would go past it. Measured: 37 MiB at its peak, a daemon's usual size.
FLOOD_RSS_BOUND_MIB = 64


def test_a_flood_neither_blocks_the_daemon_nor_grows_its_memory(daemon, quiet_home, items_sensor) -> None:
    import threading

    import psutil

    flooded = quiet_home.root / "flooded"
    rare = {"path": "$.items[*]", "key": "seq", "on": "added", "initial": "fire", "where": {"level": "error"},
            "magnitude": 3, "description": "flood ended: {seq}"}
    _stream_sensor(quiet_home, "flood", [sys.executable, CHILD, "flood", "100000", str(flooded)], trigger=rare)
    items = items_sensor(interval="0.5s", min_interval="0.2s")  # a polled sensor beside it keeps working
    d = daemon()
    process = psutil.Process(d.proc.pid)
    samples: list[int] = []
    done = threading.Event()

    def sample() -> None:  # the daemon's RSS through the flood, every 10 ms
        while not done.wait(0.01):
            try:
                samples.append(process.memory_info().rss)
            except psutil.NoSuchProcess:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        # The last record survives any coalescing (the oldest go first), so its line arrives.
        d.wait_for(lambda ls: "sensor=flood flood ended: done" in _records(ls))
        items.set([{"id": 7}])
        d.wait_for(lambda ls: "sensor=items new item 7" in _records(ls))
    finally:
        done.set()
        sampler.join(timeout=PATIENCE)
    assert flooded.read_text() == "flooded"  # the child printed all 100,001 lines: nothing blocked it
    assert "coalesced under pressure" in sensors_json(quiet_home)["flood"]["message"]  # the pressure path ran
    peak_kib = int(next(line.split()[1] for line in Path(f"/proc/{d.proc.pid}/status").read_text().splitlines()
                        if line.startswith("VmHWM:")))  # the kernel's own peak, between the samples too
    assert samples and max(samples) < FLOOD_RSS_BOUND_MIB << 20, max(samples) >> 20
    assert peak_kib < FLOOD_RSS_BOUND_MIB << 10, peak_kib >> 10
    assert d.stop() == 0


def test_stopping_the_daemon_ends_a_stream_child_that_ignores_sigterm(daemon, quiet_home) -> None:
    _stream_sensor(quiet_home, "hang", [sys.executable, CHILD, "hang"])
    d = daemon()
    wait_until(lambda: "stream running" in sensors_json(quiet_home).get("hang", {}).get("message", ""),
               what="the stream's process")
    pid = int(sensors_json(quiet_home)["hang"]["message"].split("pid ")[1].split(")")[0])
    assert alive(pid)
    assert d.stop(signal.SIGTERM) == 0
    wait_until(lambda: not alive(pid), timeout=PATIENCE, what="the hanging child to end")


def test_a_stream_that_cannot_start_is_exec_failed_and_retried(daemon, quiet_home) -> None:
    _stream_sensor(quiet_home, "missing", [str(quiet_home.root / "no-such-program")])
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home).get("missing", {}).get("state") == "exec_failed",
               what="exec_failed")
    assert "restarting in" in sensors_json(quiet_home)["missing"]["message"]
    assert d.stop() == 0
    assert journal_rows(quiet_home) == []


def _stream_children(d, mode: str) -> list:
    """The daemon's stream children running `stream_child.py MODE`."""
    import psutil

    return [p for p in psutil.Process(d.proc.pid).children() if p.cmdline()[1:3] == [CHILD, mode]]


def test_a_stream_child_dies_with_a_sigkilled_daemon_and_a_restarted_daemon_runs_one_child(daemon, quiet_home) -> None:
    feed = Feed(quiet_home.root / "feed.jsonl")
    # `hang` ignores SIGTERM: the child must end even so.
    _stream_sensor(quiet_home, "hang", [sys.executable, CHILD, "hang"])
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path), "--after={cursor}"],
                   cursor="seq")
    d = daemon()
    feed.add({"seq": 1, "msg": "a"})
    d.wait_for(lambda ls: _line("feed", 1, "a") in _records(ls))
    wait_until(lambda: _stream_children(d, "hang"), what="the hanging stream's process")
    children = _stream_children(d, "hang") + _stream_children(d, "follow")
    assert len(children) == 2
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL  # no cleanup runs in the daemon
    for child in children:
        wait_until(lambda child=child: not alive(child.pid), timeout=PATIENCE, what=f"orphan {child.pid} to end")
    # The next daemon runs one `follow` child, and each record reaches stdout once.
    d2 = daemon()
    feed.add({"seq": 2, "msg": "b"})
    lines = d2.wait_for(lambda ls: _line("feed", 2, "b") in _records(ls))
    assert len(_stream_children(d2, "follow")) == 1
    assert Path(str(feed.path) + ".printed").read_text().split() == ["1", "2"]
    assert _records(lines).count(_line("feed", 2, "b")) == 1
    assert d2.stop() == 0


def test_a_restarted_daemon_ends_what_a_dead_daemons_stream_left_behind(daemon, quiet_home) -> None:
    # The kernel's death signal reaches the process attend started, not the processes that one started:
    # they are marked with the daemon that owns them, and the next daemon ends those of a daemon gone.
    pid_file = quiet_home.root / "grandchild.pid"
    _stream_sensor(quiet_home, "spawner", [sys.executable, CHILD, "spawn", str(pid_file)])
    d = daemon()
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), what="the stream's grandchild")
    (child,) = _stream_children(d, "spawn")
    grandchild = int(pid_file.read_text())
    pid_file.unlink()
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL
    wait_until(lambda: not alive(child.pid), what="the stream's own process to end with the daemon")
    # The grandchild, reparented and ignoring SIGTERM, is an orphan now (before the sweep it stayed forever).
    d2 = daemon()
    wait_until(lambda: not alive(grandchild), what="the orphan to be ended by the next daemon")
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), what="the new stream's grandchild")
    assert alive(int(pid_file.read_text()))  # the running daemon's own are kept
    assert d2.stop() == 0


@pytest.mark.parametrize("stage", NOTIFICATION_STAGES)
def test_a_daemon_killed_at_each_stage_of_a_streams_evaluation_resumes_at_its_cursor(daemon, quiet_home, stage) -> None:
    # The cursor is stored with the evaluation that read its record (one transaction): the next daemon's
    # child starts right after it, so a record is evaluated once (one that was read but not evaluated when the
    # daemon died is read again), none is skipped, and each line is journaled once.
    feed = Feed(quiet_home.root / "feed.jsonl")
    printed = Path(str(feed.path) + ".printed")
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path), "--after={cursor}"],
                   cursor="seq")
    feed.add({"seq": 1, "msg": "a"}, {"seq": 2, "msg": "b"})
    crashed = daemon(env={"ATTEND_CRASH_AT": stage})
    assert crashed.proc.wait(timeout=PATIENCE) == -signal.SIGKILL, crashed.stderr
    crashed.stop()
    (stored,) = query(quiet_home, "SELECT state FROM crate_state WHERE sensor = 'feed'")[0]
    cursor = int(json.loads(stored)["cursor"])  # every stage comes after the evaluation's commit
    first = printed.read_text().split()
    feed.add({"seq": 3, "msg": "c"})
    final = daemon()
    expected = [_line("feed", n, m) for n, m in ((1, "a"), (2, "b"), (3, "c"))]
    final.wait_for(lambda ls: set(_records(crashed.stdout + ls)) >= set(expected))
    wait_until(lambda: all(r["printed"] == 1 for r in journal_rows(quiet_home)), what="every row printed")
    assert final.stop() == 0
    assert str(cursor) in first
    assert printed.read_text().split()[len(first):] == [str(n) for n in (1, 2, 3) if n > cursor]
    assert sorted(r["key"] for r in journal_rows(quiet_home)) == ["1", "2", "3"]


def _stored_cursor(home) -> str:
    (stored,) = query(home, "SELECT state FROM crate_state WHERE sensor = 'feed'")[0]
    return json.loads(stored)["cursor"]


@pytest.mark.parametrize(("bad", "why"), [("a\u0000b", "NUL"), ("x" * 200_000, "200,000 bytes long")],
                         ids=["nul", "200kb"])
def test_a_record_cursor_that_cannot_be_an_argument_is_refused_and_touches_no_other_sensor(
        daemon, quiet_home, items_sensor, bad, why) -> None:
    # A NUL cursor made the next start raise ValueError (only OSError was caught), which ended every sensor's
    # loop; a 200 KB one failed every start (E2BIG). Both stayed so across daemons through the stored cursor.
    feed = Feed(quiet_home.root / "feed.jsonl")
    _stream_sensor(quiet_home, "feed", [sys.executable, CHILD, "follow", str(feed.path), "--after={cursor}"],
                   cursor="c", max_line=1 << 20)
    items = items_sensor(interval="1s", min_interval="0.2s")
    d = daemon()
    feed.add({"seq": 1, "msg": "a", "c": 1}, {"seq": 2, "msg": "bad cursor", "c": bad})
    d.wait_for(lambda ls: _line("feed", 2, "bad cursor") in _records(ls))
    assert _stored_cursor(quiet_home) == "1"
    feed.crash()  # the restart starts from the last good cursor
    feed.add({"seq": 3, "msg": "c", "c": 3})
    d.wait_for(lambda ls: _line("feed", 3, "c") in _records(ls))
    items.set([{"id": 7}])
    d.wait_for(lambda ls: "sensor=items new item 7" in _records(ls))
    status = sensors_json(quiet_home)["feed"]
    assert "cursor was refused" in status["message"] and why in status["message"], status
    assert "restarted 1 time(s)" in status["message"], status
    assert d.stop() == 0
    assert _stored_cursor(quiet_home) == "3"
    d2 = daemon()
    feed.add({"seq": 4, "msg": "d", "c": 4})
    lines = d2.wait_for(lambda ls: _line("feed", 4, "d") in _records(ls))
    assert _records(lines) == [_line("feed", 4, "d")]
    assert d2.stop() == 0
