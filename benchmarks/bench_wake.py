"""Event to line (issue 39: attend's own part ≤ 50 ms median): `wake_on`, a peer message and a test fire, each
stage's share; idle CPU with 200 sensors and 50 watched paths.

Latency: `attend run` as a real subprocess with command sensors (`/bin/cat` of a JSON file, a trigger on
new items) in two set-ups, one after the other in the same run:
- wake: `CHANGES` sensors at `interval: 1h`, each with `wake_on` on its own file, `min_interval: 0.1s`;
  change n is sensor n's first, so each finds its sensor at rest (a sensor that keeps reporting halves its
  interval down to `min_interval` and then polls on it, which would time the interval, not the wake);
- polling (the baseline): one sensor without `wake_on`, `interval` and `min_interval` both `POLL_INTERVAL`.
Each change writes items (an atomic rename, at spacings that do not divide the interval) and is timed
until its line is read from the daemon's stdout: median and worst of each, and the ratio of the medians.
The shipped git sensor's 30 s interval would average 15 s without a wake. Each wake's stages
(`WAKE_STAGES`) come from the store's own times: the history trace of the poll that fired (`woken`: when
the watcher's change reached the sensor; `took`: how long the poll ran; `time`: its end), the commit's
`trigger_state.updated` and the journal row's `time`; the printer's is the line's arrival.

Peer message and test fire: one `attend run --session b` with the shipped messages sensor (its `wake_on`
on the peers folders and its 250 ms `min_interval`; its interval made 1 h, as above) and a command sensor,
the governors out of the way (`FAST_CONFIG`). `attend peers send --to PROJECT TEXT` (as session a) is
timed from its spawn to b's line, split into the send process (spawn until the message file is linked
into the tray: the file's ctime) and the wake's stages; `attend sensors fire feed/new --input -` from its
spawn to b's `[test]` line, split at the journal row's time (the command: start-up, imports, the sensor
set, evaluation; then the commit, the bell and b's printer). The commands' floor is measured beside them:
`python -c pass`, and python importing attend's CLI front.

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
  message: {cooldown: 0, limit: 100000, window: 60}
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


def _fast_home(root: Path, **files: str) -> None:
    """A home at `root` with the shipped sensors off but for the user files given (name: text) and the noise
    controls out of the way (`FAST_CONFIG`)."""
    _quiet_shipped(root)
    for name, text in files.items():
        (root / "config" / "attend" / "sensors" / f"{name}.yaml").write_text(text)
    (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)


def _write_items(path: Path, count: int, first: int = 0) -> None:
    """Items `first` .. `count - 1`, written atomically."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"items": [{"id": i} for i in range(first, count)]}))
    tmp.replace(path)


class _Daemon:
    """`attend run` with its stdout lines timestamped as they arrive."""

    def __init__(self, root: Path, *args: str) -> None:
        project = root / "project"
        project.mkdir(exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "attend", "run", *args], cwd=project, env=_env(root),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        for stream in (self.proc.stdout, self.proc.stderr):  # low-priority lines go to stderr
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def line_with(self, text: str, timeout: float = 60.0, *, contains: bool = False) -> float:
        """When the first line ending with `text` (or holding it) was read."""
        deadline = time.monotonic() + timeout
        while True:
            at, line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line.endswith(text) or (contains and text in line):
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


#: The stages of a change's way to its line, as the store's own times split it (`_wake_stages`).
WAKE_STAGES = (
    "watcher: change -> seen (watchfiles' step and quiet step)",
    "cadence: seen -> poll starts (settle, min_interval)",
    "poll: the kind's work (spawn, output; a crate's thread)",
    "evaluation: poll -> its commit starts",
    "journal: commit, discloser -> journal row",
    "printer: journal row -> line read (bell, print, pipe)",
)
#: Each timed wake's stages (seconds, in `WAKE_STAGES` order), filled by `_latencies(wake=True)`.
STAGES: list[tuple[float, ...]] = []


def _wake_stages(db: Path, sensor: str, text: str, changed_wall: float, line_wall: float) -> tuple[float, ...]:
    """The stages of the change made at `changed_wall` whose line (holding `text`) was read at `line_wall`:
    from the trace of the poll that fired it, the commit's time and the journal row's time."""
    conn = sqlite3.connect(db)
    try:
        traces = [json.loads(row[0]) for row in conn.execute(
            "SELECT trace FROM poll_history WHERE sensor = ? ORDER BY id DESC LIMIT 20", (sensor,))]
        trace = next(t for t in traces
                     if any(text in (o.get("description") or "") for g in t["triggers"] for o in g["outcomes"]))
        committed = conn.execute("SELECT MAX(updated) FROM trigger_state WHERE sensor = ?", (sensor,)).fetchone()[0]
        journaled = conn.execute("SELECT time FROM journal WHERE description LIKE ? ORDER BY id DESC LIMIT 1",
                                 (f"%{text}%",)).fetchone()[0]
    finally:
        conn.close()
    started = trace["time"] - trace["took"]
    return (trace["woken"] - changed_wall, started - trace["woken"], trace["took"], committed - trace["time"],
            journaled - committed, line_wall - journaled)


def _latencies(wake: bool) -> list[float]:
    """Seconds from each change to its line. With `wake`, change n is the first of sensor `feed<n>` (one sensor a
    change: each finds its sensor at rest, its interval still long, so only the wake polls it; a sensor that
    keeps reporting halves its interval down to `min_interval` and then polls on it); without, one sensor polls
    every `POLL_INTERVAL`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _fast_home(root)
        files = [root / "data" / f"feed{n:02d}.json" for n in range(CHANGES)] if wake else [root / "feed.json"]
        for n, data in enumerate(files):
            data.parent.mkdir(exist_ok=True)
            _write_items(data, 0)
            if wake:
                _sensor(root, f"feed{n:02d}", data, interval="1h", min_interval="0.1s", wake_on=[str(data)])
            else:
                _sensor(root, "feed", data, interval=POLL_INTERVAL, min_interval=POLL_INTERVAL)
        daemon = _Daemon(root)
        try:
            _wait_polled(root, len(files))  # each first poll is a baseline: an empty list
            db = root / "state" / "attend" / "attend.db"

            def stages(changed: float, printed: float, n: int) -> None:
                STAGES.append(_wake_stages(db, f"feed{n:02d}", f"new item {n}", changed, printed))

            if wake:
                return _time_changes(daemon, lambda n: _write_items(files[n], n + 1, first=n),
                                     lambda n: f"new item {n}", stages=stages)
            return _time_changes(daemon, lambda n: _write_items(files[0], n + 1), lambda n: f"new item {n}")
        finally:
            daemon.stop()


def _time_changes(daemon: _Daemon, change: Callable[[int], object], line: Callable[[int], str],
                  stages: Callable[[float, float, int], None] | None = None, count: int = CHANGES) -> list[float]:
    """Make change n (0 .. count-1) and time it until the daemon prints a line ending with `line(n)`
    (`stages(change wall time, line wall time, n)` after each)."""
    out = []
    for n in range(count):
        # Spacings that do not divide the polling interval, so changes land at every phase of it.
        time.sleep(0.3 + (n * 0.37) % POLL_INTERVAL)
        changed, changed_wall = time.monotonic(), time.time()
        change(n)
        at = daemon.line_with(line(n))
        out.append(at - changed)
        if stages is not None:
            stages(changed_wall, changed_wall + (at - changed), n)
    return out


#: Peer messages and test fires timed (each a process of its own: fewer than the wakes).
SENDS = 10


def _command(root: Path, *args: str, stdin: str = "", session: str = "a") -> None:
    """Run `attend ARGS` in the project as session `session`; fail loudly when it fails."""
    done = subprocess.run([sys.executable, "-m", "attend", *args], cwd=root / "project", input=stdin, text=True,
                          env={**_env(root), "ATTEND_SESSION": session}, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"attend {' '.join(args)}: exit {done.returncode}: {done.stdout}{done.stderr}")


def _sends_and_fires() -> tuple[list[tuple[float, ...]], list[tuple[float, ...]], list[tuple[float, ...]]]:
    """Each peer message's (total, send process until its file, *the wake's stages), each test fire's (total,
    command until its journal row, row -> line) and, before each fire, one round of `FLOORS`, in seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # The shipped messages sensor runs, its shipped wake_on and min_interval (250 ms), its 5 s interval made
        # 1 h: each message it reports halves its interval, and from 250 ms it would poll on the interval often
        # enough to catch a message before its wake does; with 1 h only the wake polls (what is timed).
        _fast_home(root, messages="spec: 1\ninterval: 1h\n")
        data = root / "feed.json"
        _write_items(data, 0)
        _sensor(root, "feed", data, interval="1h", min_interval="0.1s")
        db = root / "state" / "attend" / "attend.db"
        daemon = _Daemon(root, "--session", "b")
        try:
            _wait_polled(root, 2)  # both baselines
            _command(root, "peers", "send", "--to", str(root / "project"), "warm")
            daemon.line_with("warm", contains=True)  # b's cold start is done and the sensor has its baseline
            trays = root / "cache" / "attend" / "peers"
            sends = []
            for n in range(SENDS):
                time.sleep(0.3 + (n * 0.37) % POLL_INTERVAL)
                text = f"round {n} of the benchmark"
                spawned, spawned_wall = time.monotonic(), time.time()
                _command(root, "peers", "send", "--to", str(root / "project"), text)
                at = daemon.line_with(text, contains=True)
                line_wall = spawned_wall + (at - spawned)
                [file] = [p for p in trays.rglob("*.json") if text in p.read_text()]
                linked = file.stat().st_ctime_ns / 1e9  # the link into the tray (files.write_atomically, exclusive)
                wake = _wake_stages(db, "messages", text, linked, line_wall)
                sends.append((line_wall - spawned_wall, linked - spawned_wall, *wake))
            fires: list[tuple[float, ...]] = []
            floors: list[tuple[float, ...]] = []
            for n in range(SENDS):
                floors.append(_floor_round(root, data))  # in the same minute as the fire: a shared machine's load moves
                time.sleep(0.3 + (n * 0.37) % POLL_INTERVAL)
                spawned, spawned_wall = time.monotonic(), time.time()
                _command(root, "sensors", "fire", "feed/new", "--input", "-", stdin=json.dumps({"items": [{"id": f"t{n}"}]}),
                         session="b")
                at = daemon.line_with(f"[test] new item t{n}")
                line_wall = spawned_wall + (at - spawned)
                conn = sqlite3.connect(db)
                try:
                    journaled = conn.execute("SELECT time FROM journal WHERE description = ?",
                                             (f"new item t{n}",)).fetchone()[0]
                finally:
                    conn.close()
                fires.append((line_wall - spawned_wall, journaled - spawned_wall, line_wall - journaled))
            return sends, fires, floors
        finally:
            daemon.stop()


#: What the stages stand on: the interpreter's start, attend's CLI front imported, `attend compile --check` (the
#: most trimmed start of a command that loads the sensor set: a test fire's command does that and more), `attend
#: peers whoami` (what every peers command does before its own work: `peers send`'s baseline, as in bench_peers),
#: and a `/bin/cat` spawned from Python, plainly and as a command poll spawns it (its poll is mostly that spawn).
FLOORS = (
    "`python -c pass`",
    "python importing attend's CLI front (attend.cli)",
    "`attend compile --check` (loads the sensor set)",
    "`attend peers whoami` (the peers commands' start)",
    "`/bin/cat FILE` spawned from Python (vfork)",
    "`/bin/cat FILE` as attend spawns a child (attend.children)",
)


def _floor_round(root: Path, data: Path) -> tuple[float, ...]:
    """One timing of each of `FLOORS` (seconds), in the home at `root`; `data` is a file to `cat`."""
    env = _env(root)

    def timed(*argv: str) -> float:
        started = time.monotonic()
        subprocess.run(list(argv), check=True, capture_output=True, env=env, cwd=root / "project")
        return time.monotonic() - started

    return (timed(sys.executable, "-c", "pass"), timed(sys.executable, "-c", "import attend.cli"),
            timed(sys.executable, "-m", "attend", "compile", "--check"),
            timed(sys.executable, "-m", "attend", "peers", "whoami"), timed("/bin/cat", str(data)),
            _timed_child(["/bin/cat", str(data)], env))


def _timed_child(argv: list[str], env: dict[str, str]) -> float:
    """Seconds `argv` takes through `attend.children.run`, the way a command poll starts its command: forked by
    attend's spawner thread, with the death signal set between fork and exec."""
    from attend.children import run

    started = time.monotonic()
    run(argv, env=env, timeout=10)
    return time.monotonic() - started


def _report_stages(title: str, labels: tuple[str, ...], rows: list[tuple[float, ...]]) -> None:
    for i, label in enumerate(labels):
        values = [r[i] * 1000 for r in rows]
        report(f"  {title}: {label}", statistics.median(values), "ms",
               note=f"median of {len(values)}; worst {max(values):.1f} ms")


def _latency() -> None:
    woken = _latencies(wake=True)
    polled = _latencies(wake=False)
    for label, values in (("wake_on (interval 1h)", woken), (f"interval polling every {POLL_INTERVAL:g} s", polled)):
        report(f"change-to-line, {label}: median of {len(values)}", statistics.median(values) * 1000, "ms",
               note=f"worst {max(values) * 1000:.0f} ms")
    report("wake_on median vs interval polling median", statistics.median(woken) / statistics.median(polled), "x")
    _report_stages("wake_on", WAKE_STAGES, STAGES)
    own = [sum(st[:2]) + sum(st[3:]) for st in STAGES]  # all but the poll, which is the command's spawn
    report(f"  wake_on: attend's own part (all but the poll): median of {len(own)}", statistics.median(own) * 1000, "ms")
    sends, fires, floors = _sends_and_fires()
    report(f"peer message, `attend peers send` -> line: median of {len(sends)}",
           statistics.median(s[0] for s in sends) * 1000, "ms", note=f"worst {max(s[0] for s in sends) * 1000:.0f} ms")
    _report_stages("message", ("send process: spawn -> message file", *WAKE_STAGES), [s[1:] for s in sends])
    report(f"  message: attend's own part past the send (file -> line): median of {len(sends)}",
           statistics.median(sum(s[2:]) for s in sends) * 1000, "ms")
    report(f"test fire, `attend sensors fire` -> line: median of {len(fires)}",
           statistics.median(f[0] for f in fires) * 1000, "ms", note=f"worst {max(f[0] for f in fires) * 1000:.0f} ms")
    _report_stages("test fire", ("command: spawn -> journal row", "printer: journal row -> line read"),
                   [f[1:] for f in fires])
    _report_stages("floor", FLOORS, floors)
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
        _fast_home(root, git="spec: 1\nenabled: true\n")
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
