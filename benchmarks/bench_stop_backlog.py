"""The Stop hook over a large backlog: 1M journal rows, 500k of them after the session's position.

Issue 34, item 7: a Stop hook that read every undelivered row before cutting its answer took 27-33 s and
1 GB on this backlog, so Claude Code's hook timeout killed it every time. The hook is run as a process
(`python -m attend drain --format hook`, the Stop hook's JSON on stdin) on a copy of the same store each
round, against `python -c pass` in the same rounds; its peak memory is the child's maximum RSS.
The rows: a processes-like flood of low event lines, one medium line in 50, one high in 500, one message
in 1000, their times spread over the last two hours (most are older than `stale_after`). Goal: <= 1 s.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_runtime import _env
from benchmarks.timing import report

#: Journal rows in the store, and how many of them come after the session's position.
ROWS = 1_000_000
UNDELIVERED = 500_000
#: Timed rounds (each on a fresh copy of the store).
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
SESSION = "bench-session"


def _fill(db: Path, scope: str, now: float) -> None:
    """`ROWS` journal rows (the last `UNDELIVERED` unprinted) and the session's row at the position before them."""
    position = ROWS - UNDELIVERED
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " INSERT INTO journal (id, scope, time, sensor, trigger, key, lane, priority, magnitude, description,"
            " disclosure, test, printed, drained, meta)"
            " SELECT i, ?, ? - 7200.0 * (? - i) / ?,"
            " CASE WHEN i % 1000 = 0 THEN 'messages' ELSE 'processes' END,"
            " CASE WHEN i % 1000 = 0 THEN 'addressed' ELSE 'exited' END,"
            " CASE WHEN i % 1000 = 0 THEN 'm' || i ELSE NULL END,"
            " CASE WHEN i % 1000 = 0 THEN 'message' ELSE 'event' END,"
            " CASE WHEN i % 1000 = 0 OR i % 500 = 0 THEN 'high' WHEN i % 50 = 0 THEN 'medium' ELSE 'low' END,"
            " CASE WHEN i % 1000 = 0 OR i % 500 = 0 THEN 7.0 WHEN i % 50 = 0 THEN 3.0 ELSE 0.5 END,"
            " 'exited: tail -3 build-' || i || '.log (pid ' || (i % 30000) || ')',"
            " i, 0, i <= ?, i <= ?,"
            " CASE WHEN i % 1000 = 0 THEN '{\"author\": \"peer\"}' ELSE '{}' END"
            " FROM n",
            (ROWS, scope, now, ROWS, ROWS, position, position),
        )
        con.execute(
            "INSERT INTO sessions (scope, session, printed_upto, drained_upto, role, started, heartbeat)"
            " VALUES (?, ?, ?, ?, 'stopped', ?, ?)", (scope, SESSION, position, position, now - 7200, now - 7200))
        con.execute("INSERT OR IGNORE INTO session_seen (scope, session, item, time) VALUES (?, ?, ':cold-start', ?)",
                    (scope, SESSION, now))
    con.close()


def _child_run(argv: list[str], **kw: object) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - started, done


def main() -> None:
    import fcntl

    from attend.files import run_lock_path
    from attend.runtime.store import Store, default_db_path, scope_for
    from attend.spec import layer_paths

    with tempfile.TemporaryDirectory() as tmp:
        env = _env(Path(tmp))
        project = Path(tmp) / "project"
        project.mkdir()
        env["ATTEND_HEADLESS_IDLE"] = "0"
        db = default_db_path(layer_paths(project, env).state_dir)
        Store(db, scope=scope_for(project)).close()  # the schema, as attend makes it
        _fill(db, scope_for(project), time.time())
        pristine = db.with_name("pristine.db")
        shutil.copy(db, pristine)
        # A live poller holds the project's run lock, so the hook starts none (it would poll the project).
        lock = open(run_lock_path(project, env), "a+")  # noqa: SIM115 - held for the whole run
        fcntl.flock(lock, fcntl.LOCK_EX)
        payload = json.dumps({"session_id": SESSION, "hook_event_name": "Stop", "stop_hook_active": False,
                              "cwd": str(project)}).encode()
        argv = [sys.executable, "-m", "attend", "drain", "--format", "hook", "--project", str(project)]
        hook_times, base_times, answer = [], [], b""
        for _ in range(REPEAT):
            for suffix in ("-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
            shutil.copy(pristine, db)
            took, _ = _child_run([sys.executable, "-c", "pass"], env=env)
            base_times.append(took)
            took, done = _child_run(argv, input=payload, env=env, cwd=project)
            assert done.returncode == 0, done.stderr.decode()
            hook_times.append(took)
            answer = done.stdout
        lock.close()
        rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    hook, base = min(hook_times), min(base_times)
    reason = json.loads(answer).get("reason", "") if answer.strip() else ""
    report("`python -c pass` (baseline)", base * 1000, "ms")
    report(f"Stop hook, {ROWS:,} journal rows, {UNDELIVERED:,} after its position", hook * 1000, "ms",
           note=f"{hook / base:.1f}x the baseline; worst {max(hook_times) * 1000:.0f} ms of {REPEAT}; goal <= 1000 ms")
    report("peak RSS of a child (the hook's)", rss_mib, "MiB")
    report("lines in its answer", float(sum(line.startswith("[attend ") for line in reason.splitlines())), "",
           note=f"{len(reason)} characters")
