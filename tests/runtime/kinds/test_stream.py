"""The streaming command's parts with explicit inputs: framing, the bounded buffer, argv's cursor and the
keyed state of a streaming trigger (the process itself is exercised by test_stream_e2e.py)."""

from __future__ import annotations

import attend
from attend.compiler.sensors import Framer
from attend.compiler.triggers import STREAM_KEYS_KEPT, CompiledTrigger
from attend.runtime.kinds.stream import LineBuffer, stream_argv
from waiting import wait_until


def test_lines_longer_than_max_line_are_cut_and_counted_and_blank_lines_skipped() -> None:
    lines: list[bytes] = []
    framer = Framer(5, lines.append)
    framer.feed(b"ab\ncdefghij\n\nkl")
    framer.feed(b"mnopqrst")
    framer.feed(b"uv\nw")
    framer.close()
    assert lines == [b"ab", b"cdefg", b"klmno", b"w"]
    assert framer.cut == 2


def test_a_full_buffer_drops_the_oldest_lines_and_counts_them() -> None:
    buffer = LineBuffer(max_lines=3, max_bytes=1000)
    for n in range(10):
        buffer.push(b"%d" % n)
    lines, coalesced = buffer.take()
    assert lines == [b"7", b"8", b"9"] and coalesced == 7
    assert buffer.take() == ([], 0)


def test_the_buffer_is_bounded_by_bytes_too() -> None:
    buffer = LineBuffer(max_lines=100, max_bytes=10)
    for _ in range(5):
        buffer.push(b"xxxx")
    lines, coalesced = buffer.take()
    assert lines == [b"xxxx", b"xxxx"] and coalesced == 3


def test_the_cursor_fills_its_placeholder_and_an_argument_without_a_cursor_is_left_out() -> None:
    argv = ["journalctl", "-f", "--after-cursor={cursor}"]
    assert stream_argv(argv, None) == ["journalctl", "-f"]
    assert stream_argv(argv, "s=1;i=2") == ["journalctl", "-f", "--after-cursor=s=1;i=2"]


def _stream_trigger(definition: dict) -> CompiledTrigger:
    return CompiledTrigger(attend.compile_trigger(definition, name="t").ir, stream=True)


def test_a_streaming_keyed_trigger_keeps_the_newest_record_per_key_across_evaluations() -> None:
    trigger = _stream_trigger({"path": "$.items[*]", "key": "unit", "on": "enters", "where": {"state": "failed"},
                               "description": "{unit} failed"})
    fires, state = trigger.step(None, {"items": [{"unit": "a", "state": "active"}]}, now=0)
    assert fires == []
    # b fails; a sends nothing (it is not removed, it stays active); a repeated key: the newest wins.
    fires, state = trigger.step(state, {"items": [{"unit": "b", "state": "active"}, {"unit": "b", "state": "failed"}]}, now=1)
    assert [f.description for f in fires] == ["b failed"]
    fires, state = trigger.step(state, {"items": [{"unit": "b", "state": "failed"}]}, now=2)
    assert fires == []  # still failed: no new entry
    fires, state = trigger.step(state, {"items": [{"unit": "a", "state": "failed"}]}, now=3)
    assert [f.description for f in fires] == ["a failed"]


def test_a_streaming_trigger_forgets_the_oldest_keys_past_its_bound() -> None:
    trigger = _stream_trigger({"path": "$.items[*]", "key": "id", "on": "added", "description": "{id}"})
    _, state = trigger.step(None, {"items": [{"id": n} for n in range(STREAM_KEYS_KEPT + 10)]}, now=0)
    assert len(state["items"]) == STREAM_KEYS_KEPT
    fires, _ = trigger.step(state, {"items": [{"id": 0}, {"id": STREAM_KEYS_KEPT + 9}]}, now=1)
    assert [f.key for f in fires] == [0]  # forgotten, so new again; the newest is still known


def _runs(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_sweep_ends_what_a_gone_daemons_stream_left_in_its_group_and_keeps_the_rest(monkeypatch) -> None:
    import os
    import signal
    import subprocess
    import sys

    from attend.runtime.kinds import stream

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone_tag = stream._owner_tag(gone.pid)
    gone.wait()  # exited and reaped: its tag names a daemon that no longer runs
    assert gone_tag is not None and stream._owner_tag(gone.pid) != gone_tag
    live_tag = stream._owner_tag(os.getpid())
    assert live_tag is not None

    def stream_like(tag: str) -> tuple[subprocess.Popen, int]:
        """A stream's session (its leader killed, as the death signal does) and the member it started."""
        leader = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True, env={**os.environ, stream.OWNER_VAR: tag})
        assert leader.stdout is not None
        member = int(leader.stdout.readline())
        leader.stdout.close()
        leader.kill()
        leader.wait()
        return leader, member

    _, orphan = stream_like(gone_tag)
    _, running = stream_like(live_tag)  # a running daemon's
    # An agent a command started in a session of its own (as gpg-agent does): not the stream's to end.
    agent = subprocess.Popen(["sleep", "60"], start_new_session=True, env={**os.environ, stream.OWNER_VAR: gone_tag})
    try:
        monkeypatch.setattr(stream, "_swept", False)
        ended = stream.sweep_orphans()  # (any other such orphan of this user on the machine goes too)
        assert running not in ended and agent.pid not in ended
        wait_until(lambda: not _runs(orphan), what="the orphan to end")  # (ended here, or by another sweep)
        assert agent.poll() is None and _runs(running)
        assert stream.sweep_orphans() == []  # once per process
    finally:
        agent.kill()
        agent.wait()
        for pid in (orphan, running):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_streaming_trigger_forgets_the_oldest_keys_past_its_byte_bound() -> None:
    from attend.bounds import STREAM_KEPT_BYTES

    trigger = _stream_trigger({"path": "$.items[*]", "key": "id", "on": "added", "description": "{id}"})
    pad = "x" * (STREAM_KEPT_BYTES // 4)  # four such records are just over the bound
    _, state = trigger.step(None, {"items": [{"id": n, "pad": pad} for n in range(6)]}, now=0)
    def kept(state: dict) -> list[int]:
        return [item["id"] for item in state["items"].values()]

    assert kept(state) == [3, 4, 5]
    fires, state = trigger.step(state, {"items": [{"id": 2, "pad": pad}]}, now=1)
    assert [f.key for f in fires] == [2] and kept(state) == [4, 5, 2]  # forgotten, so new again
    _, state = trigger.step(state, {"items": [{"id": 9, "pad": pad * 5}]}, now=2)
    assert kept(state) == [9]  # the newest is kept whatever its size


def test_a_records_line_holds_at_most_one_json_value_per_16_bytes_of_max_line() -> None:
    # A 1 MiB line of `{}`s is 22 MB of objects: the cap bounds a parsed record to a few times max_line.
    import pytest

    from attend.compiler import MalformedOutput
    from attend.compiler.sensors import read_record

    assert read_record("[1,2,3,4,5,6,7,8,9]", "json", max_line=160) == list(range(1, 10))
    with pytest.raises(MalformedOutput, match="a max_line of 160 bytes reads at most 10"):
        read_record("[1,2,3,4,5,6,7,8,9,10,11]", "json", max_line=160)
    assert read_record("[1,2,3,4,5,6,7,8,9,10,11]", "lines", max_line=160) == {"line": "[1,2,3,4,5,6,7,8,9,10,11]"}
