"""An attached session at rest: the CPU an `attend run` that prints but does not poll uses (goal ≤ 0.1 % of a core).

Two real `attend run` sessions on one project with the shipped sensors (what a user runs): the first polls,
the second attaches and prints the journal. After both settled (trio's idle worker threads end after 10 s),
the CPU of each over the same `WINDOW` seconds, as a share of one core (/proc/<pid>/task/*/schedstat, ns),
against an idle interpreter that imported the same libraries (the baseline: what any Python process at
rest costs). The attached session's figure is what each further session of a project costs.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_runtime import _cpu_between, _cpu_reading, _env, _rss_mib
from benchmarks.bench_sessions import _attached, _lock_pid, _session, _wait
from benchmarks.timing import report

#: Seconds over which the sessions' CPU is measured (the clock ticks at 10 ms: a long window resolves it).
WINDOW = 30.0
#: Seconds the sessions settle before the window (trio's idle worker threads end after 10 s).
SETTLE = 12.0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        project = root / "project"
        project.mkdir()
        db = root / "state" / "attend" / "attend.db"
        procs: list[subprocess.Popen] = []
        try:
            poller = _session(project, env, "poller")
            procs.append(poller)
            _wait(lambda: _lock_pid(root / "state") == poller.pid, "the poller")
            attached = _session(project, env, "attached")
            procs.append(attached)
            _wait(lambda: _attached(db, "attached"), "the attached session")
            baseline = subprocess.Popen([sys.executable, "-c", "import trio, sqlite3, yaml, lark, time; time.sleep(600)"],
                                        stdout=subprocess.DEVNULL)
            procs.append(baseline)
            time.sleep(SETTLE)
            pids = {"attached": attached.pid, "poller": poller.pid, "baseline": baseline.pid}
            before = {k: _cpu_reading(p) for k, p in pids.items()}
            t0 = time.monotonic()
            time.sleep(WINDOW)
            after = {k: _cpu_reading(p) for k, p in pids.items()}
            wall = time.monotonic() - t0
            rss = _rss_mib(attached.pid)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=60)
    share = {k: _cpu_between(before[k], after[k]) / wall * 100 for k in pids}
    report("idle interpreter, same imports (baseline)", share["baseline"], "% of a core")
    report("attached `attend run` at rest", share["attached"], "% of a core",
           note=f"goal <= 0.1 %; {share['attached'] - share['baseline']:+.3f} over the baseline; RSS {rss:.0f} MiB")
    report("polling `attend run` at rest (shipped sensors)", share["poller"], "% of a core")


if __name__ == "__main__":
    main()
