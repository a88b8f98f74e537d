"""Memory per stream (issue 35, item 2; docs/runtime.md, "Memory per stream"): a daemon running one streaming
command at the largest `max_line` stays under the documented bound whatever the command prints, and ends
within a few seconds of SIGTERM while the stream floods it.

`max_line: 67108864` (the maximum then) with 56 MB lines took a daemon to 2,980 MB and past 15 s after
SIGTERM; 1 MiB lines of `{}`s with a keyed trigger, 902 MB (every record kept, read back at each evaluation).
Each case is a real `attend run` and a real child (streams/stream_child.py `big`); the daemon's peak is the
kernel's own (VmHWM), read once the child has printed everything and the last record's line is out (or, with
no newline ever, once the cut is in the status).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from daemon_rig import PATIENCE, alive, sensor_yaml, sensors_json, wait_until

from attend.bounds import DATA_BYTES_PER_VALUE, MAX_LINE_BYTES

pytestmark = pytest.mark.slow

CHILD = str(Path(__file__).parent / "streams" / "stream_child.py")

#: The bound docs/runtime.md states for the whole daemon with one stream sensor (one keyed trigger) at any
#: allowed max_line, in MiB: its own ~37 MiB, the line being read and the waiting lines (2 MiB), their records
#: parsed (~24 MiB at JSON's densest), the trigger's kept records read back (~24 MiB at the densest).
DAEMON_RSS_BOUND_MIB = 96

#: The most `{}`s one line may hold under the value cap of MAX_LINE_BYTES (each counts its `{` and a `,`).
_DENSEST = (MAX_LINE_BYTES // DATA_BYTES_PER_VALUE - 8) // 2

#: case: (the child's shape, bytes per line, lines printed, seconds between two lines). Every record has a
#: new key, so the keyed trigger keeps records up to its byte bound; lines a pause apart are each evaluated
#: (a flood coalesces most of them), so the kept records grow as far as they can.
CASES = {
    "longest-text-lines": ("text", MAX_LINE_BYTES - 64, 24, 0.15),
    "longest-dense-lines": ("dense", 3 * _DENSEST, 30, 0.15),  # the longest lines of `{}`s the value cap admits
    "dense-lines-past-the-value-cap": ("dense", MAX_LINE_BYTES - 64, 10, 0.15),  # refused before parsing
    "short-dense-lines-flooding": ("dense", 1000, 4000, 0),  # the most objects a full buffer of lines makes
    "no-newline-ever": ("none", 0, 400, 0),  # 25 MiB of one endless line
}

#: Fires only on the last record, which survives any coalescing (the oldest lines go first).
LAST = {"path": "$.items[*]", "key": "seq", "on": "added", "initial": "fire", "where": {"last": True},
        "magnitude": 3, "description": "record {seq}"}


def _stream(home, shape: str, size: int, count: int, done: Path, pause: float = 0) -> None:
    home.write_user_sensor("big", sensor_yaml(
        "big", [sys.executable, CHILD, "big", str(size), shape, str(count), str(done), str(pause)], trigger=LAST,
        interval="1h", min_interval="0.1s", command={"output": "stream", "max_line": MAX_LINE_BYTES}))


def _peak_mib(pid: int) -> float:
    """The kernel's record of the process's peak resident size, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024


@pytest.mark.parametrize("case", list(CASES))
def test_a_stream_at_the_largest_max_line_keeps_the_daemon_under_its_memory_bound(daemon, quiet_home, case) -> None:
    shape, size, count, pause = CASES[case]
    done = quiet_home.root / "done"
    _stream(quiet_home, shape, size, count, done, pause)
    d = daemon()
    wait_until(done.exists, what="the child to print everything")  # the daemon read it all (the pipe is 64 KiB)
    if shape == "none":
        wait_until(lambda: "were cut" in sensors_json(quiet_home).get("big", {}).get("message", ""),
                   what="the endless line's cut to be evaluated")
    else:
        d.wait_for(lambda lines: any(line.endswith("record last") for line in lines))
        message = sensors_json(quiet_home)["big"]["message"]
        refused = "a max_line of 1,048,576 bytes reads at most 65,536" in message  # the value cap's words
        assert refused == case.endswith("past-the-value-cap"), message  # the others' records were all read
    peak = _peak_mib(d.proc.pid)
    assert peak < DAEMON_RSS_BOUND_MIB, f"{case}: {peak:.0f} MiB"
    assert d.stop() == 0


def test_the_largest_max_line_is_the_bound_and_a_larger_one_is_refused(quiet_home) -> None:
    quiet_home.write_user_sensor("big", sensor_yaml("big", ["cat"], trigger=LAST, command={
        "output": "stream", "max_line": 67108864}))
    out = quiet_home.attend("compile", "--check")
    assert out.returncode == 1
    assert "[bad-value] `command.max_line` must be at most 1,048,576, not 67108864" in out.stdout + out.stderr


def test_sigterm_ends_the_daemon_while_a_stream_floods_it(daemon, quiet_home) -> None:
    # The evaluation of what waits is bounded (at most 1 MiB of lines, each under its value cap), so a
    # signal waits for at most one of them; a 56 MB line's evaluation kept a daemon past 15 s.
    done = quiet_home.root / "done"
    _stream(quiet_home, "dense", 3 * _DENSEST, 0, done)  # forever: the costliest records the value cap admits
    d = daemon()
    wait_until(done.exists, what="the stream to flood the daemon")  # it has read 4 MiB of them
    child = int(sensors_json(quiet_home)["big"]["message"].split("pid ")[1].split(")")[0])
    assert d.stop(signal.SIGTERM, timeout=PATIENCE) == 0
    wait_until(lambda: not alive(child), what="the flooding child to end")
