"""`wake_on`: change-to-line latency against interval polling, and idle CPU with 200 sensors and 50 watched paths.

Latency: `attend run` as a real subprocess with one command sensor (`/bin/cat` of a JSON file, a
trigger on new items) in two set-ups, one after the other in the same run:
- wake: `interval: 1h`, `wake_on` on the file, `min_interval: 0.1s`;
- polling (the baseline): no `wake_on`, `interval` and `min_interval` both `POLL_INTERVAL`.
Each adds an item `CHANGES` times (an atomic rename, at spacings that do not divide the interval)
and times the change until its line is read from the daemon's stdout: median and worst of each, and
the ratio of the medians. The shipped git sensor's 30 s interval would average 15 s without a wake.

Idle: the same 200 command sensors at a 1 h interval, without and with `wake_on` (50 of them each
watch a file in its own folder: 50 watched paths), after every sensor has polled once; the daemon's
CPU over `IDLE_WINDOW` seconds from /proc/<pid>/stat, and the ratio of the two.
"""

from __future__ import annotations

import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_runtime import IDLE_SENSORS, _cpu_seconds, _env, _quiet_shipped
from benchmarks.timing import report

#: Changes timed per set-up.
CHANGES = 20
#: The polling baseline's interval, in seconds.
POLL_INTERVAL = 1.0
#: Sensors (of the 200) that watch a path of their own in the idle figure.
WATCHED = 50
#: Seconds over which each idle daemon's CPU is measured (the clock ticks at 10 ms: a long window resolves it).
IDLE_WINDOW = 30.0

#: Governor and refractory short enough that 20 lines in a few seconds are all printed at once.
FAST_CONFIG = """\
engagement:
  absolute_refractory: 0
governor:
  event: {cooldown: 0, limit: 100000, window: 60}
"""


def _sensor(root: Path, name: str, data: Path, **fields: object) -> None:
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "spec": 1, "name": name, "kind": "command", "threshold": 0,
        "command": {"argv": ["/bin/cat", str(data)]},
        "triggers": {"new": {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 5,
                             "description": "new item {id}"}},
        **fields,
    }
    (folder / f"{name}.yaml").write_text(json.dumps(doc))


def _write_items(path: Path, count: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"items": [{"id": i} for i in range(count)]}))
    tmp.replace(path)


class _Daemon:
    """`attend run` with its stdout lines timestamped as they arrive."""

    def __init__(self, root: Path) -> None:
        project = root / "project"
        project.mkdir(exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "attend", "run"], cwd=project, env=_env(root),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def line_with(self, text: str, timeout: float = 60.0) -> float:
        deadline = time.monotonic() + timeout
        while True:
            at, line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line.endswith(text):
                return at

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _wait_polled(root: Path, count: int, timeout: float = 180.0) -> None:
    """Wait until `count` sensors have polled once (`attend sensors list --json`)."""
    started = time.monotonic()
    while True:
        listed = subprocess.run([sys.executable, "-m", "attend", "sensors", "list", "--json"],
                                cwd=root / "project", env=_env(root), capture_output=True, text=True)
        rows = json.loads(listed.stdout or "[]")
        if sum(1 for r in rows if r.get("last_poll")) >= count:
            return
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"fewer than {count} sensors polled in {timeout:g} s")
        time.sleep(0.5)


def _latencies(wake: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
        data = root / "feed.json"
        _write_items(data, 0)
        if wake:
            _sensor(root, "feed", data, interval="1h", min_interval="0.1s", wake_on=[str(data)])
        else:
            _sensor(root, "feed", data, interval=POLL_INTERVAL, min_interval=POLL_INTERVAL)
        daemon = _Daemon(root)
        try:
            _wait_polled(root, 1)  # the first poll is the baseline: an empty list
            out = []
            for n in range(CHANGES):
                # Spacings that do not divide the polling interval, so changes land at every phase of it.
                time.sleep(0.3 + (n * 0.37) % POLL_INTERVAL)
                changed = time.monotonic()
                _write_items(data, n + 1)
                out.append(daemon.line_with(f"new item {n}") - changed)
            return out
        finally:
            daemon.stop()


def _latency() -> None:
    woken = _latencies(wake=True)
    polled = _latencies(wake=False)
    for label, values in ((f"wake_on (interval 1h)", woken), (f"interval polling every {POLL_INTERVAL:g} s", polled)):
        report(f"change-to-line, {label}: median of {len(values)}", statistics.median(values) * 1000, "ms",
               note=f"worst {max(values) * 1000:.0f} ms")
    report("wake_on median vs interval polling median", statistics.median(woken) / statistics.median(polled), "x",
           note="the git sensor's 30 s interval alone would average 15 s")


def _idle_cpu(watched: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        for i in range(IDLE_SENSORS):
            data = root / "data" / f"d{i:03d}" / "feed.json"
            data.parent.mkdir(parents=True)
            _write_items(data, 1)
            extra = {"wake_on": [str(data)]} if i < watched else {}
            _sensor(root, f"idle-{i:03d}", data, interval="1h", min_interval="1h", **extra)
        daemon = _Daemon(root)
        try:
            _wait_polled(root, IDLE_SENSORS)
            time.sleep(2.0)  # the last commits and the watchers' first rounds
            cpu0, t0 = _cpu_seconds(daemon.proc.pid), time.monotonic()
            time.sleep(IDLE_WINDOW)
            return (_cpu_seconds(daemon.proc.pid) - cpu0) / (time.monotonic() - t0)
        finally:
            daemon.stop()


def _idle() -> None:
    without = _idle_cpu(0)
    with_wake = _idle_cpu(WATCHED)
    report(f"idle CPU, {IDLE_SENSORS} sensors, no wake_on (baseline)", without * 100, "% of a core")
    report(f"idle CPU, {IDLE_SENSORS} sensors, {WATCHED} watched paths", with_wake * 100, "% of a core",
           note=f"{with_wake / without:.2f}x the baseline" if without else "baseline measured 0")


def main() -> None:
    """Print the latency and idle figures."""
    _latency()
    _idle()


if __name__ == "__main__":
    main()
