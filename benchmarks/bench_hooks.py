"""The hooks' cost: a PostToolUse hook through bin/attend, as Claude Code runs it, against `python -c pass`.

A `PostToolUse` hook runs after every tool call of a session (DESIGN.md, "Delivery": Conduits). It is
timed as Claude Code runs it: `sh -c '"${CLAUDE_PLUGIN_ROOT}/bin/attend" drain --format hook --project
...'` with the hook's JSON on stdin, the plugin's virtualenv already set up (here: a stamped folder whose
`bin/python` is this interpreter, so no install runs). The baseline is `python -c pass` in the same run.
Goals (issue 23): nothing to hand over ≤ 4×, one line to hand over ≤ 6×.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_runtime import _env
from benchmarks.timing import best_of, report

REPO = Path(__file__).resolve().parent.parent
#: Runs per figure (the best is kept).
REPEAT = 25


def _plugin_data(root: Path) -> Path:
    """A plugin data folder whose virtualenv is set up: stamped with the plugin's version, this interpreter."""
    from attend.runtime.sessions.upkeep import STAMP

    version = next(line.split("=", 1)[1].strip().strip('"') for line in (REPO / "pyproject.toml").read_text().splitlines()
                   if line.startswith("version"))
    venv = root / "plugin-data" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    real = Path(sys.prefix)  # this interpreter's virtualenv: its configuration and packages
    for name in ("pyvenv.cfg", "lib"):
        (venv / name).symlink_to(real / name)
    (venv / STAMP).write_text(version + "\n")
    return root / "plugin-data"


def _best(best: tuple[float, float], fn: Callable[[], object]) -> tuple[float, float]:
    """`best` (wall, CPU seconds) with one more run of `fn`: the lower wall time and the lower CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = best_of(fn, repeat=1)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return min(best[0], wall), min(best[1], cpu)


def main() -> None:
    from attend.files import run_lock_path
    from attend.runtime.store import Observation, Store, scope_for

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        env = _env(root)
        env["CLAUDE_PLUGIN_DATA"] = str(_plugin_data(root))
        env["CLAUDE_PLUGIN_ROOT"] = str(REPO / "plugin")
        env["CLAUDE_PROJECT_DIR"] = str(project)
        # `python3` as a user's machine finds it: the base interpreter itself, not a version manager's shim
        # (a pyenv shim is a bash script costing more than the whole hook).
        base_bin = os.path.dirname(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
        env["PATH"] = os.pathsep.join([base_bin, env.get("PATH", "")])
        # Compiled modules cached, as in the plugin's virtualenv (pip compiles them at install; `_env` lets
        # them be written), in a folder of the benchmark's own.
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        hooks = json.loads((REPO / "plugin" / "hooks" / "hooks.json").read_text())["hooks"]
        command = hooks["PostToolUse"][0]["hooks"][0]["command"]
        for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"):
            command = command.replace("${" + name + "}", env[name])
        payload = json.dumps({"session_id": "bench", "hook_event_name": "PostToolUse", "cwd": str(project),
                              "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}}).encode()
        old = os.environ.copy()
        os.environ.update(env)  # run_lock_path and the store read the XDG variables
        try:
            path = run_lock_path(project)
            path.parent.mkdir(parents=True, exist_ok=True)
            store = Store(path.parent / "attend.db", scope=scope_for(project))
        finally:
            os.environ.clear()
            os.environ.update(old)

        def hook() -> bytes:
            done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, env=env, cwd=project)
            assert done.returncode == 0, done.stderr
            return done.stdout

        def baseline() -> None:
            subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)

        def line_waiting() -> None:
            """A line the poller journaled for the session (made before the timed hook, not timed)."""
            store.commit_poll("items", states={}, observations=[Observation("new", 5.0, "deploy finished")])
            store.disclose("items", store.pending("items"), lane="event", priority="high")

        def one_line() -> None:
            assert b"deploy finished" in hook()

        with open(path, "a+") as lock:  # a live poller holds the lock: the hook starts none
            fcntl.flock(lock, fcntl.LOCK_EX)
            assert hook() == b""  # the session's first hook makes its row (and caches the compiled modules)
            line_waiting()
            one_line()  # the modules of a hand-over compiled and cached too
            # Interleaved, the best of each: on a shared machine the load changes between rounds, and a
            # ratio of two figures taken minutes apart would measure the load.
            # The CPU time of each run's processes too (user + system of the children): the time a run
            # spends waiting for a core grows with the machine's load, and more for a longer run.
            base = empty = handed = (float("inf"), float("inf"))
            for _ in range(REPEAT):
                base = _best(base, baseline)
                empty = _best(empty, hook)
                line_waiting()
                handed = _best(handed, one_line)
        store.close()
    report("`python -c pass` (baseline)", base[0] * 1000, "ms", note=f"CPU {base[1] * 1000:.1f} ms")
    for label, (wall, cpu), goal in (("nothing to hand over", empty, 4), ("one line to hand over", handed, 6)):
        report(f"PostToolUse hook, {label} (bin/attend)", wall * 1000, "ms",
               note=f"{wall / base[0]:.2f}x the baseline; CPU {cpu * 1000:.1f} ms, {cpu / base[1]:.2f}x; goal <= {goal}x")
    print(f"   command: {shlex.join(['sh', '-c', command])}", flush=True)
