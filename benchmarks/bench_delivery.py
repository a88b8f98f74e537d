"""Delivery (issue 22): a `high` line's delay while sessions join and leave, and the cost of `scope: session`.

Delay: real `attend run --session a` processes with the shipped defaults (governor, engagement, the shipped
`peers` presence sensor on) and `FIRES` one-shot command sensors (interval `FIRE_INTERVAL`, a `high`
trigger: magnitude 6). Each fire writes one sensor's item file (one sensor per fire: the 60 s absolute
refractory is per sensor) and times it until its line is read from a's stdout. Two set-ups in the same
run: quiet (the baseline: a alone) and churn (three sessions b, c and d start and exit in turn all
along, each a presence line). Fires are `FIRE_SPACING` apart, more than the event lane's 15 s cooldown, so
a fire never waits behind the one before it. Goal: within one poll interval + 1 s.

Session scope: the shipped `context` sensor (`scope: session`, a crate reading each session's own
transcript) polled in-process the way the daemon polls it (`session_foci`, then one `kinds.poll` and
`record_poll` per live session) with 1 and with 10 live sessions: the time of one round, and the ratio
per session against one session's round (goal: linear, at most 1.2x per session).
"""

from __future__ import annotations

import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped
from benchmarks.timing import report

#: High fires timed per set-up.
FIRES = 5
#: Seconds between two fires (above the event lane's 15 s cooldown, so one fire never holds the next).
FIRE_SPACING = 16.0
#: The fire sensors' poll interval (seconds); the goal is this + 1 s.
FIRE_INTERVAL = 2.0
#: Seconds a churning session stays up before it exits and the next starts.
CHURN_UP = 3.0
#: Rounds timed per live-session count, and live sessions in the large round.
SCOPE_ROUNDS = 60
MANY = 10
#: Seconds to wait for anything before giving up.
PATIENCE = 90.0


def _fire_sensor(root: Path, name: str, data: Path) -> None:
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "spec": 1, "name": name, "kind": "command", "interval": f"{FIRE_INTERVAL}s",
        "min_interval": f"{FIRE_INTERVAL}s", "command": {"argv": ["/bin/cat", str(data)]},
        "triggers": {"new": {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 6,
                             "description": "urgent {id}"}},
    }
    (folder / f"{name}.yaml").write_text(json.dumps(doc))


def _write(path: Path, items: list[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"items": items}))
    tmp.replace(path)


class _Session:
    """`attend run --session NAME` with its stdout lines timestamped as they arrive."""

    def __init__(self, project: Path, env: dict[str, str], name: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", name], cwd=project,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def wait_line(self, text: str) -> float:
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                when, line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"timed out waiting for {text!r}") from None
            if line.endswith(text):
                return when

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=PATIENCE)


def _delays(churn: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        _quiet_shipped(root)
        (root / "config" / "attend" / "sensors" / "peers.yaml").unlink()  # the shipped presence sensor runs
        (root / "config" / "attend" / "config.yaml").write_text("{}\n")  # the shipped defaults
        project = root / "project"
        project.mkdir()
        files = [root / f"fire-{n}.json" for n in range(FIRES)]
        for n, path in enumerate(files):
            _write(path, [])
            _fire_sensor(root, f"fire-{n}", path)
        a = _Session(project, env, "a")
        stop = threading.Event()
        churner = threading.Thread(target=_churn, args=(project, env, stop), daemon=True)
        try:
            time.sleep(FIRE_SPACING)  # every fire sensor's baseline, and the first churn
            if churn:
                churner.start()
            out = []
            for n, path in enumerate(files):
                fired = time.monotonic()
                _write(path, [{"id": n}])
                out.append(a.wait_line(f"urgent {n}") - fired)
                time.sleep(max(0.0, FIRE_SPACING - (time.monotonic() - fired)))
            return out
        finally:
            stop.set()
            if churn:
                churner.join(timeout=PATIENCE)
            a.stop()


def _churn(project: Path, env: dict[str, str], stop: threading.Event) -> None:
    """Sessions b, c and d start and exit in turn until `stop`."""
    n = 0
    while not stop.is_set():
        session = _Session(project, env, "bcd"[n % 3])
        stop.wait(CHURN_UP)
        session.stop()
        n += 1


def _scope_rounds() -> tuple[float, float]:
    """One round of the shipped context sensor (seconds, median of `SCOPE_ROUNDS`) with 1 and with `MANY` live sessions."""
    import trio

    from attend.compiler import compile_sensor
    from attend.peers.transcript import project_folder_name
    from attend.runtime import kinds
    from attend.runtime.kinds import PollContext
    from attend.runtime.pipeline import record_poll
    from attend.runtime.sessions.status import session_foci
    from attend.runtime.store import Store, default_db_path, scope_for
    from attend.spec import layer_paths, load_set

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        _quiet_shipped(root)
        (root / "config" / "attend" / "sensors" / "context.yaml").unlink()
        project = root / "project"
        project.mkdir()
        folder = root / ".claude" / "projects" / project_folder_name(project.resolve())
        folder.mkdir(parents=True)
        names = [f"s{n}" for n in range(MANY)]
        for n, name in enumerate(names):
            usage = {"input_tokens": 3, "cache_creation_input_tokens": 1000, "cache_read_input_tokens": 40_000 + n}
            entry = {"type": "assistant", "sessionId": name, "timestamp": "2026-01-05T09:00:00Z",
                     "message": {"role": "assistant", "model": "claude-sonnet-4-5", "usage": usage, "content": []}}
            (folder / f"{name}.jsonl").write_text(json.dumps(entry) + "\n" * 1)
        saved = dict(os.environ)
        os.environ.update(env)  # the crate expands ~ in its projects_dir
        try:
            paths = layer_paths(project, env)
            compiled = compile_sensor(load_set(project, env).sensors["context"])
            store = Store(default_db_path(paths.state_dir), scope=scope_for(project))
            ctx = PollContext(project_dir=project, env=env, paths=paths, store=store)

            async def one_round() -> float:
                from dataclasses import replace

                start = time.perf_counter()
                for session in (s.session for s in session_foci(store)):
                    outcome = await kinds.poll(compiled, replace(ctx, session=session))
                    assert outcome.ok, outcome
                    record_poll(store, compiled, outcome, now=time.time(), session=session)
                return time.perf_counter() - start

            async def rounds(live: int) -> float:
                for name in names:
                    store.set_session_role(name, "stopped", pid=None)
                for name in names[:live]:
                    store.attach_session(name, pid=os.getpid(), resume=True)
                await one_round()  # each session's baseline
                # The median: a round of 10 crosses to the crate's worker thread 10 times, so the best of
                # many rounds would favour the single session's round on a loaded machine.
                return statistics.median([await one_round() for _ in range(SCOPE_ROUNDS)])

            async def both() -> tuple[float, float]:
                return await rounds(1), await rounds(MANY)

            try:
                return trio.run(both)
            finally:
                store.close()
        finally:
            os.environ.clear()
            os.environ.update(saved)


def main() -> None:
    one, many = _scope_rounds()
    report("context (scope: session): one round, 1 live session (baseline)", one * 1000, "ms")
    report(f"context (scope: session): one round, {MANY} live sessions", many * 1000, "ms",
           note=f"{many / one / MANY:.2f}x per session of one session's round; goal <= 1.2x")
    quiet = _delays(churn=False)
    busy = _delays(churn=True)
    base = statistics.median(quiet)
    report(f"high fire -> its line, no other session (baseline, median of {FIRES})", base, "s",
           note=f"max {max(quiet):.2f} s")
    median = statistics.median(busy)
    report(f"high fire -> its line, sessions b, c, d joining and leaving (median of {FIRES})", median, "s",
           note=f"{median / base:.2f}x the baseline; max {max(busy):.2f} s; goal <= {FIRE_INTERVAL + 1:.0f} s")
