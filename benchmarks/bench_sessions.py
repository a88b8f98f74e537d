"""Failover between sessions: the delay from the poller's death to the first poll by its successor.

Two real `attend run` sessions on one project (one command sensor): the poller is killed (SIGKILL, then
SIGTERM rounds) and the time until the sensor's `last_poll`, written by the attached session that takes
over, is measured. The baseline is a cold `attend run` in the same home: from its start to its first
poll. The goal (issue 10) is a failover under 3 s.
"""

from __future__ import annotations

import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped, _write_sensor
from benchmarks.timing import report

#: Failovers measured per signal.
ROUNDS = 6
#: Seconds to wait for anything before giving up.
PATIENCE = 60.0


def _last_poll(db: Path) -> float:
    if not db.exists():
        return 0.0
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT MAX(last_poll) FROM sensor_status WHERE sensor = 'bench'").fetchone()
        return float(row[0] or 0.0)
    except sqlite3.OperationalError:
        return 0.0
    finally:
        conn.close()


def _lock_pid(state: Path) -> int | None:
    for lock in (state / "attend").glob("run-*.lock"):
        text = lock.read_text().strip()
        return int(text) if text.isdigit() else None
    return None


def _wait(predicate, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _session(project: Path, env: dict[str, str], name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", name], cwd=project, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _attached(db: Path, name: str) -> bool:
    conn = sqlite3.connect(db)
    try:
        return bool(conn.execute("SELECT 1 FROM sessions WHERE session = ? AND role = 'attached'", (name,)).fetchone())
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        _quiet_shipped(root)
        _write_sensor(root, "bench", "1h")  # polls once at start: its last_poll marks the poller's first poll
        project = root / "project"
        project.mkdir()
        db = root / "state" / "attend" / "attend.db"
        colds: list[float] = []
        delays: dict[signal.Signals, list[float]] = {signal.SIGKILL: [], signal.SIGTERM: []}
        procs: list[subprocess.Popen] = []
        try:
            for _ in range(3):
                before = _last_poll(db)
                start = time.time()
                cold = _session(project, env, f"cold-{len(colds)}")
                procs.append(cold)
                _wait(lambda before=before: _last_poll(db) > before, "a cold start's first poll")
                colds.append(_last_poll(db) - start)
                cold.terminate()
                cold.wait(timeout=PATIENCE)
            poller = _session(project, env, "p-0")
            procs.append(poller)
            _wait(lambda: _lock_pid(root / "state") == poller.pid, "the first poller")
            serial = 0
            for sig in (signal.SIGKILL, signal.SIGTERM):
                for _ in range(ROUNDS):
                    serial += 1
                    name = f"p-{serial}"
                    successor = _session(project, env, name)
                    procs.append(successor)
                    _wait(lambda name=name: _attached(db, name), "an attached session")
                    time.sleep(0.5)
                    before = _last_poll(db)
                    killed_at = time.time()
                    poller.send_signal(sig)
                    poller.wait(timeout=PATIENCE)
                    _wait(lambda before=before: _last_poll(db) > before, "the successor's first poll")
                    delays[sig].append(_last_poll(db) - killed_at)
                    poller = successor
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=PATIENCE)
    cold_start = statistics.median(colds)
    report("cold `attend run` to its first poll (baseline)", cold_start, "s")
    for sig, label in ((signal.SIGKILL, "SIGKILL"), (signal.SIGTERM, "SIGTERM")):
        values = delays[sig]
        median = statistics.median(values)
        report(f"poller {label}ed -> successor's first poll (median of {len(values)})", median, "s",
               note=f"{median / cold_start:.2f}x a cold start; max {max(values):.2f} s; goal < 3 s")
