"""Memory per stream (issue 35): peak RSS of a daemon with one stream at the largest max_line, per line shape.

Each figure is a real `attend run` with one streaming command sensor at `max_line: 1048576` (MAX_LINE_BYTES)
and one keyed trigger (every record a new key, so it keeps records up to STREAM_KEPT_BYTES), running
tests/runtime/streams/stream_child.py `big`: the longest text lines, the longest lines of `{}`s the value cap
admits (one a pause apart, so each is evaluated and kept), a flood of short `{}` lines (the most objects a full
buffer makes), lines past the value cap, and one endless line without a newline. The daemon's peak is the
kernel's (VmHWM), read once the child has printed everything and the last record's line is out; it is
reported against the same daemon with an idle stream (the baseline, same run) and against the bound
docs/runtime.md states (96 MiB). Last, the seconds from SIGTERM to the daemon's exit while the longest `{}`
lines the value cap admits flood it (the costliest evaluation).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped
from benchmarks.bench_wake import FAST_CONFIG, _Daemon
from benchmarks.timing import report

CHILD = Path(__file__).resolve().parents[1] / "tests" / "runtime" / "streams" / "stream_child.py"
#: docs/runtime.md, "Memory per stream": the whole daemon with one stream sensor, in MiB.
BOUND_MIB = 96
MAX_LINE = 1 << 20
#: name: (shape, bytes per line, lines, seconds between lines); shape idle: a stream that prints nothing.
CASES = {
    "idle stream (baseline)": ("idle", 0, 0, 0.0),
    "1 MiB text lines x 64": ("text", MAX_LINE - 64, 64, 0.1),
    "98 KB {} lines (value cap) x 60": ("dense", 3 * ((MAX_LINE // 16 - 8) // 2), 60, 0.1),
    "1 KB {} lines flooding x 20,000": ("dense", 1000, 20_000, 0.0),
    "1 MiB {} lines past the value cap x 20": ("dense", MAX_LINE - 64, 20, 0.1),
    "no newline ever, 100 MiB": ("none", 0, 1600, 0.0),
}
LAST = {"path": "$.items[*]", "key": "seq", "on": "added", "initial": "fire", "where": {"last": True},
        "magnitude": 3, "description": "record {seq}"}


def _daemon(root: Path, shape: str, size: int, count: int, pause: float) -> tuple[_Daemon, Path]:
    _quiet_shipped(root)
    (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
    done = root / "done"
    argv = [sys.executable, str(CHILD), "big", str(size), shape, str(count), str(done), str(pause)]
    if shape == "idle":
        argv = [sys.executable, str(CHILD), "hang"]
    doc = {"spec": 1, "name": "big", "kind": "command", "threshold": 0, "interval": "1h", "min_interval": "0.1s",
           "command": {"argv": argv, "output": "stream", "max_line": MAX_LINE}, "triggers": {"last": LAST}}
    (root / "config" / "attend" / "sensors" / "big.yaml").write_text(json.dumps(doc))
    return _Daemon(root), done


def _status(root: Path) -> str:
    listed = subprocess.run([sys.executable, "-m", "attend", "sensors", "list", "--json"], cwd=root / "project",
                            env=_env(root), capture_output=True, text=True)
    return next((r["message"] for r in json.loads(listed.stdout or "[]") if r["name"] == "big"), "")


def _wait(predicate, timeout: float = 600.0) -> None:  # noqa: ANN001 - a callable of no arguments
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.2)


def _peak_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024


def _peak(shape: str, size: int, count: int, pause: float) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        daemon, done = _daemon(root, shape, size, count, pause)
        try:
            if shape == "idle":
                _wait(lambda: "stream running" in _status(root))
            elif shape == "none":
                _wait(done.exists)
                _wait(lambda: "were cut" in _status(root))
            else:
                _wait(done.exists)
                daemon.line_with("record last", timeout=600)
            return _peak_mib(daemon.proc.pid)
        finally:
            daemon.stop()


def _stop_seconds() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        daemon, flooding = _daemon(root, "dense", CASES["98 KB {} lines (value cap) x 60"][1], 0, 0.0)  # forever
        _wait(flooding.exists)
        time.sleep(2)  # a few evaluations into the flood
        started = time.monotonic()
        daemon.stop()
        return time.monotonic() - started


def main() -> None:
    baseline = None
    for name, (shape, size, count, pause) in CASES.items():
        peak = _peak(shape, size, count, pause)
        baseline = baseline or peak
        report(name, peak, "MiB", note=f"{peak / baseline:.2f}x idle, {peak / BOUND_MIB:.2f} of the {BOUND_MIB} MiB bound")
    report("SIGTERM to exit under a flood of 98 KB {} lines", _stop_seconds(), "s")


if __name__ == "__main__":
    main()
