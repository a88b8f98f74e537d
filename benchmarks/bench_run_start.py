"""The CPU an `attend run` spends to start and reach its first poll, against `python -c pass`.

Every session's Monitor stream starts one (`attend run`), and so does every daemon test. One command sensor
(`/bin/echo` of a small JSON result, a 1 h interval: it polls once, at start) in a fresh temporary XDG home
with the shipped sensors turned off, as the tests' `quiet_home`: the daemon is started as its own process,
and once the store shows the sensor's first poll its user + system CPU is read from /proc/<pid>/stat (the
echo child is not in it); then SIGTERM, and the CPU of the whole run, exit included, from its rusage.
Interleaved with the baseline and the best of each kept: on a shared machine the load changes between
rounds, and CPU time, unlike wall time, hardly grows with it.
"""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped, _write_sensor
from benchmarks.timing import report

#: Daemon starts measured (the best is kept).
ROUNDS = 12
#: Seconds to wait for a first poll before giving up.
PATIENCE = 60.0
_TICKS = os.sysconf("SC_CLK_TCK")


def _polled(db: Path) -> bool:
    if not db.exists():
        return False
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT 1 FROM sensor_status WHERE sensor = 'bench' AND last_poll IS NOT NULL").fetchone() is not None
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of the live process `pid`, its waited children not included."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _one_start() -> tuple[float, float]:
    """(CPU to the first poll, CPU of the whole run with its exit) of one `attend run` in a fresh home."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        _quiet_shipped(root)
        _write_sensor(root, "bench", "1h")
        project = root / "project"
        project.mkdir()
        db = root / "state" / "attend" / "attend.db"
        proc = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "bench"], cwd=project, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + PATIENCE
            while not _polled(db):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("attend run ended or did not poll")
                time.sleep(0.01)
            first = _cpu_of(proc.pid)
            proc.send_signal(signal.SIGTERM)
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = 0  # reaped above
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
        return first, usage.ru_utime + usage.ru_stime


def _baseline() -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    base = first = whole = float("inf")
    for _ in range(ROUNDS):
        base = min(base, _baseline())
        to_poll, total = _one_start()
        first, whole = min(first, to_poll), min(whole, total)
    report("`python -c pass` (baseline)", base * 1000, "ms CPU")
    report("`attend run`: start to its first poll", first * 1000, "ms CPU", note=f"{first / base:.1f}x the baseline")
    report("`attend run`: start, first poll, SIGTERM and exit", whole * 1000, "ms CPU",
           note=f"{whole / base:.1f}x the baseline")
