"""The daemon's own cost per poll (excluding the child process), and its CPU and memory with 200 idle sensors.

Per poll: one command sensor polled through the real code (kinds.poll, record_poll into a real SQLite
store, a discloser round), against the bare spawn of the same child (`/bin/echo` of a 20-item JSON
result) through the same runner: the difference is attend's own work. The pipeline alone (record_poll +
discloser round on a pre-made result, no child) is timed too.

Idle: `attend run` as a real subprocess with 200 command sensors at a 1 h interval, after each has
polled once; CPU seconds over a window from /proc/<pid>/stat, and RSS from /proc/<pid>/status, against
an idle Python interpreter that imported the same libraries (trio, sqlite3, yaml, lark).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from benchmarks.timing import report

#: Sensors the idle daemon holds.
IDLE_SENSORS = 200
#: Seconds over which the idle daemon's CPU is measured.
IDLE_WINDOW = 10.0
#: Polls per timed round for the per-poll figures.
POLLS = 50
#: Interleaved rounds (bare, full) of which the best is kept.
ROUNDS = 7

_ITEMS = json.dumps({"items": [{"id": i, "name": f"item {i}"} for i in range(20)]})
_TICKS = os.sysconf("SC_CLK_TCK")


def _env(root: Path) -> dict[str, str]:
    """The environment of an attend process the benchmarks start: its XDG folders under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    # What a user's machine does: bytecode written once and reused (a CI or agent shell may turn it off,
    # which would time the compiler of attend's modules at every start instead of the start itself).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(root),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
    )
    return env


def _write_sensor(root: Path, name: str, interval: str) -> None:
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "spec": 1,
        "name": name,
        "kind": "command",
        "interval": interval,
        "min_interval": interval,
        "command": {"argv": ["/bin/echo", _ITEMS]},
        "triggers": {"new": {"path": "$.items[*]", "key": "id", "on": "added", "description": "new {name}"}},
    }
    (folder / f"{name}.yaml").write_text(json.dumps(doc))


def _quiet_shipped(root: Path) -> None:
    shipped = Path(__file__).resolve().parents[1] / "src" / "attend" / "sensors.d"
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True, exist_ok=True)
    for path in shipped.glob("*.yaml"):
        if not path.name.endswith(".test.yaml"):
            (folder / path.name).write_text("spec: 1\nenabled: false\n")


def _per_poll(root: Path) -> None:
    from attend.compiler import compile_sensor
    from attend.runtime import kinds
    from attend.runtime.kinds import PollContext, PollOutcome
    from attend.runtime.kinds.command import run_command
    from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
    from attend.runtime.store import Store, default_db_path, scope_for
    from attend.spec import layer_paths, load_set

    env = _env(root)
    _quiet_shipped(root)
    _write_sensor(root, "bench", "1h")
    project = root / "project"
    project.mkdir(exist_ok=True)
    paths = layer_paths(project, env)
    compiled = compile_sensor(load_set(project, env).sensors["bench"])
    store = Store(default_db_path(paths.state_dir), scope=scope_for(project))
    ctx = PollContext(project_dir=project, env=env, paths=paths, store=store)
    with open(os.devnull, "w") as devnull:
        discloser = Discloser(store, lambda _n: SensorTerms(), stdout=devnull, stderr=devnull)

        async def bare() -> float:
            start = time.perf_counter()
            for _ in range(POLLS):
                await run_command(["/bin/echo", _ITEMS], env=env, cwd=project)
            return (time.perf_counter() - start) / POLLS

        async def full() -> float:
            start = time.perf_counter()
            for _ in range(POLLS):
                outcome = await kinds.poll(compiled, ctx)
                record_poll(store, compiled, outcome, now=time.time())
                discloser.run_once()
            return (time.perf_counter() - start) / POLLS

        async def both() -> tuple[float, float]:
            await full()  # warm up: imports, the first baseline
            # Interleaved rounds, best of each: the machine's load moves both the same way.
            bares, fulls = [], []
            for _ in range(ROUNDS):
                bares.append(await bare())
                fulls.append(await full())
            return min(bares), min(fulls)

        spawn, polled = trio.run(both)
        result = json.loads(_ITEMS)
        start = time.perf_counter()
        for _ in range(POLLS * 10):
            record_poll(store, compiled, PollOutcome(result=result), now=time.time())
            discloser.run_once()
        pipeline = (time.perf_counter() - start) / (POLLS * 10)
    store.close()
    report("bare spawn of the child (baseline)", spawn * 1000, "ms")
    report("full command poll (spawn + parse + evaluate + store)", polled * 1000, "ms",
           note=f"{polled / spawn:.2f}x the bare spawn")
    report("attend's own cost per poll (full - bare)", (polled - spawn) * 1000, "ms",
           note=f"{(polled - spawn) / spawn:.0%} of the spawn")
    report("pipeline alone on a pre-made result (evaluate + store)", pipeline * 1000, "ms",
           note=f"{pipeline / spawn:.2f}x the bare spawn")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


#: One reading of a process's CPU: utime + stime (seconds, at the clock tick's 10 ms) and each thread's time
#: on a CPU (/proc/<pid>/task/<tid>/schedstat, nanoseconds).
CpuReading = tuple[float, dict[str, int]]


def _cpu_reading(pid: int) -> CpuReading:
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            threads[tid] = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended meanwhile
    return _cpu_seconds(pid), threads


def _cpu_between(before: CpuReading, after: CpuReading) -> float:
    """CPU seconds between two readings: the threads' nanoseconds when every thread of the first lived through
    the window (a thread that ended takes its time with it), else the ticks."""
    if set(before[1]) <= set(after[1]):
        return sum(ns - before[1].get(tid, 0) for tid, ns in after[1].items()) / 1e9
    return after[0] - before[0]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _idle(root: Path) -> None:
    env = _env(root)
    _quiet_shipped(root)
    for i in range(IDLE_SENSORS):
        _write_sensor(root, f"idle-{i:03d}", "1h")
    project = root / "project"
    project.mkdir(exist_ok=True)
    db = root / "state" / "attend" / "attend.db"
    daemon = subprocess.Popen([sys.executable, "-m", "attend", "run"], cwd=project, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    baseline = subprocess.Popen([sys.executable, "-c", "import trio, sqlite3, yaml, lark, time; time.sleep(600)"],
                                stdout=subprocess.DEVNULL)
    try:
        started = time.monotonic()
        while True:
            polled = 0
            if db.exists():
                conn = sqlite3.connect(db)
                try:
                    polled = conn.execute("SELECT COUNT(*) FROM sensor_status WHERE last_poll IS NOT NULL").fetchone()[0]
                except sqlite3.OperationalError:
                    polled = 0
                finally:
                    conn.close()
            if polled >= IDLE_SENSORS:
                break
            if time.monotonic() - started > 120:
                raise RuntimeError(f"only {polled} of {IDLE_SENSORS} sensors polled in 120 s")
            time.sleep(0.2)
        startup = time.monotonic() - started
        time.sleep(2.0)  # let the last commits and the first watcher rounds pass
        cpu0, t0 = _cpu_seconds(daemon.pid), time.monotonic()
        time.sleep(IDLE_WINDOW)
        cpu = _cpu_seconds(daemon.pid) - cpu0
        wall = time.monotonic() - t0
        rss, rss_base = _rss_mib(daemon.pid), _rss_mib(baseline.pid)
    finally:
        daemon.terminate()
        baseline.terminate()
        daemon.wait(timeout=30)
        baseline.wait(timeout=30)
    report(f"start-up until all {IDLE_SENSORS} sensors polled once", startup, "s")
    report(f"idle CPU with {IDLE_SENSORS} sensors", cpu / wall * 100, "% of a core",
           note=f"{cpu:.3f} CPU s over {wall:.1f} s")
    report(f"idle RSS with {IDLE_SENSORS} sensors", rss, "MiB",
           note=f"{rss / rss_base:.2f}x an idle interpreter with the same imports ({rss_base:.1f} MiB)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _per_poll(Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        _idle(Path(tmp))


if __name__ == "__main__":
    main()
