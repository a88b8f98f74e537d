"""`wake_on`: change-to-line latency against interval polling, and idle CPU with 200 sensors and 50 watched paths.

Latency: `attend run` as a real subprocess with one command sensor (`/bin/cat` of a JSON file, a
trigger on new items) in two set-ups, one after the other in the same run:
- wake: `interval: 1h`, `wake_on` on the file, `min_interval: 0.1s`;
- polling (the baseline): no `wake_on`, `interval` and `min_interval` both `POLL_INTERVAL`.
Each adds an item `CHANGES` times (an atomic rename, at spacings that do not divide the interval)
and times the change until its line is read from the daemon's stdout: median and worst of each, and
the ratio of the medians. The shipped git sensor's 30 s interval would average 15 s without a wake.

Git: the shipped git sensor at its shipped cadence (30 s, min 5 s) in a real repository; each
branch switch comes after its min_interval and is timed until its line (on stderr: low priority).

Idle: the same 200 command sensors at a 1 h interval, without and with `wake_on` (50 of them each
watch a file in its own folder: 50 watched paths), after every sensor has polled once; the daemon's
CPU over the same `IDLE_WINDOW` seconds (both daemons side by side) from /proc/<pid>/task/*/schedstat (ns), and
the ratio.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_runtime import IDLE_SENSORS, _cpu_between, _cpu_reading, _env, _quiet_shipped
from benchmarks.timing import report

#: Changes timed per set-up.
CHANGES = 20
#: The polling baseline's interval, in seconds.
POLL_INTERVAL = 1.0
#: Sensors (of the 200) that watch a path of their own in the idle figure.
WATCHED = 50
#: Seconds over which each idle daemon's CPU is measured (the clock ticks at 10 ms: a long window resolves it).
IDLE_WINDOW = 30.0
#: Seconds an idle daemon settles before its window (trio's idle worker threads end after 10 s).
SETTLE = 12.0

#: Branch switches timed for the shipped git sensor, and its shipped min_interval (seconds).
GIT_SWITCHES = 5
GIT_MIN_INTERVAL = 5.0

#: Governor and refractories out of the way, so every change prints its line at once (the figure is the wake,
#: not the noise controls).
FAST_CONFIG = """\
engagement:
  absolute_refractory: 0
  relative_peak: 1.0
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
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        for stream in (self.proc.stdout, self.proc.stderr):  # low-priority lines go to stderr
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
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


def _wait_polled(root: Path, count: int, timeout: float = 180.0, since: float = 0.0) -> None:
    """Wait until `count` sensors have polled (after `since`, epoch seconds), per `attend sensors list --json`."""
    from datetime import datetime

    started = time.monotonic()
    while True:
        listed = subprocess.run([sys.executable, "-m", "attend", "sensors", "list", "--json"],
                                cwd=root / "project", env=_env(root), capture_output=True, text=True)
        rows = json.loads(listed.stdout or "[]")
        polled = [r for r in rows if r.get("last_poll") and datetime.fromisoformat(r["last_poll"]).timestamp() >= since]
        if len(polled) >= count:
            return
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"fewer than {count} sensors polled in {timeout:g} s")
        time.sleep(0.5)


#: Each wake_on change's stages (seconds), from the store's own times: change -> the poll's `last_poll`
#: (watcher step and debounce, the cadence), -> the journal row's time (poll, evaluation, journal),
#: -> the line read from stdout (the printer, the pipe).
STAGES: list[tuple[float, float, float]] = []


def _stages(db: Path, changed_wall: float, line_wall: float, n: int) -> None:
    conn = sqlite3.connect(db)
    try:
        polled = conn.execute("SELECT last_poll FROM sensor_status WHERE sensor = 'feed'").fetchone()[0]
        journaled = conn.execute("SELECT time FROM journal WHERE description = ?", (f"new item {n}",)).fetchone()[0]
    finally:
        conn.close()
    STAGES.append((polled - changed_wall, journaled - polled, line_wall - journaled))


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
            db = root / "state" / "attend" / "attend.db"
            return _time_changes(daemon, lambda n: _write_items(data, n + 1), lambda n: f"new item {n}",
                                 stages=(lambda changed, printed, n: _stages(db, changed, printed, n)) if wake else None)
        finally:
            daemon.stop()


def _time_changes(daemon: _Daemon, change: Callable[[int], None], line: Callable[[int], str],
                  stages: Callable[[float, float, int], None] | None = None) -> list[float]:
    """Make change n (0 .. CHANGES-1) and time it until the daemon prints a line ending with `line(n)`
    (`stages(change wall time, line wall time, n)` after each)."""
    out = []
    for n in range(CHANGES):
        # Spacings that do not divide the polling interval, so changes land at every phase of it.
        time.sleep(0.3 + (n * 0.37) % POLL_INTERVAL)
        changed, changed_wall = time.monotonic(), time.time()
        change(n)
        at = daemon.line_with(line(n))
        out.append(at - changed)
        if stages is not None:
            stages(changed_wall, changed_wall + (at - changed), n)
    return out


def _latency() -> None:
    woken = _latencies(wake=True)
    polled = _latencies(wake=False)
    for label, values in (("wake_on (interval 1h)", woken), (f"interval polling every {POLL_INTERVAL:g} s", polled)):
        report(f"change-to-line, {label}: median of {len(values)}", statistics.median(values) * 1000, "ms",
               note=f"worst {max(values) * 1000:.0f} ms")
    report("wake_on median vs interval polling median", statistics.median(woken) / statistics.median(polled), "x")
    for i, stage in enumerate(("watcher step/debounce and cadence (change -> poll)",
                               "poll, evaluation, journal (poll -> journal row)", "printer and pipe (row -> line)")):
        values = [s[i] * 1000 for s in STAGES]
        report(f"  wake_on stage: {stage}", statistics.median(values), "ms",
               note=f"median of {len(values)}; worst {max(values):.0f} ms")
    switches = _git_switches()
    report(f"shipped git sensor, branch switch to line: median of {len(switches)}", statistics.median(switches) * 1000,
           "ms", note=f"worst {max(switches) * 1000:.0f} ms; its 30 s interval alone would average 15 s")


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "A",
           "GIT_COMMITTER_EMAIL": "a@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": os.environ.get("PATH", "")}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _git_switches() -> list[float]:
    """The shipped git sensor at its shipped cadence: seconds from `git checkout` to its line."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        (root / "config" / "attend" / "sensors" / "git.yaml").write_text("spec: 1\nenabled: true\n")
        (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
        repo = root / "project"
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        (repo / "README").write_text("x\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "initial")
        out, branch = [], "main"
        for n in range(GIT_SWITCHES):
            # A daemon per switch: each switch finds the sensor at rest (its first poll done, its 30 s
            # interval running), as a user's branch switch usually does. A sensor that just reported
            # a change polls faster, and a switch then waits out its min_interval (5 s).
            daemon = _Daemon(root)
            try:
                _wait_polled(root, 1, since=time.time())
                time.sleep(GIT_MIN_INTERVAL + 0.5)  # past the shipped min_interval since that poll
                target = f"b{n}"
                changed = time.monotonic()
                _git(repo, "checkout", "-q", "-b", target)
                out.append(daemon.line_with(f"branch changed: {branch} → {target}") - changed)
                branch = target
            finally:
                daemon.stop()
        return out


#: One idle set-up: how many of the 200 sensors watch a path, and a function that writes more sensors into the
#: home (returning how many of them poll) or None.
IdleSetup = tuple[int, Callable[[Path], int] | None]


def _idle_cpus(setups: list[IdleSetup], window: float = IDLE_WINDOW) -> list[float]:
    """Each set-up's idle daemon's CPU (share of a core) with the 200 sensors, measured over the same
    window: the daemons run side by side, so the machine's load moves every figure the same way."""
    with contextlib.ExitStack() as stack:
        daemons = []
        for watched, also in setups:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            _quiet_shipped(root)
            for i in range(IDLE_SENSORS):
                data = root / "data" / f"d{i:03d}" / "feed.json"
                data.parent.mkdir(parents=True)
                _write_items(data, 1)
                extra = {"wake_on": [str(data)]} if i < watched else {}
                _sensor(root, f"idle-{i:03d}", data, interval="1h", min_interval="1h", **extra)
            polled = IDLE_SENSORS + (also(root) if also is not None else 0)
            daemon = _Daemon(root)
            stack.callback(daemon.stop)
            daemons.append((root, daemon, polled))
        for root, _daemon, polled in daemons:
            _wait_polled(root, polled)
        # The last commits, the watchers' first rounds, and trio's worker threads of the first polls ended
        # (10 s idle), so the threads are the same throughout the window and their nanoseconds count.
        time.sleep(SETTLE)
        pids = [daemon.proc.pid for _root, daemon, _polled in daemons]
        cpu0, t0 = [_cpu_reading(pid) for pid in pids], time.monotonic()
        time.sleep(window)
        elapsed = time.monotonic() - t0
        return [_cpu_between(before, _cpu_reading(pid)) / elapsed for pid, before in zip(pids, cpu0, strict=True)]


def _idle() -> None:
    without, with_wake = _idle_cpus([(0, None), (WATCHED, None)])
    report(f"idle CPU, {IDLE_SENSORS} sensors, no wake_on (baseline)", without * 100, "% of a core")
    report(f"idle CPU, {IDLE_SENSORS} sensors, {WATCHED} watched paths", with_wake * 100, "% of a core",
           note=f"{with_wake / without:.2f}x the baseline" if without else "baseline measured 0")


def main() -> None:
    """Print the latency and idle figures."""
    _latency()
    _idle()


if __name__ == "__main__":
    main()
