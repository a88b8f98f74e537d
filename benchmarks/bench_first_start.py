"""The plugin's first start: its monitor command, as Claude Code runs it, with no virtualenv yet, to a polling `attend run`.

A new user's first session runs the plugin's monitor (`bin/attend --plugin-data DATA run --project DIR`)
before anything is installed: the launcher builds its virtualenv from the plugin's source, then runs
`attend run`, which polls. Timed here from `sh -c <command>` to the daemon's first poll of one command
sensor (a fresh temporary home, the shipped sensors off), for a build with uv (`uv venv`, `uv pip
install`; the launcher takes it when `uv` is on PATH) and one with pip (`python -m venv`, `pip install`),
both from the tests' local wheelhouse (tests/plugin/pip_rig.py: the same packages, no network) and with
cold caches (each round has its own home, so pip's and uv's caches start empty, as on a first install).
pip byte-compiles what it installs; uv does not (the first start compiles the modules it imports).
The baseline is the same monitor's start once its virtualenv is set up (the second session's start).
Wall time (the user waits for it) and the CPU of the whole process tree (less dependent on the load of a
shared machine). Goal (issue 34, item 4): a running monitor within 10 s with uv.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.bench_run_start import _polled
from benchmarks.bench_runtime import _env, _quiet_shipped, _write_sensor
from benchmarks.timing import report

_TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(_TESTS))
from claude_rig import REPO, as_installed  # noqa: E402
from pip_rig import launcher_env, pip_env, uv_env, wheelhouse  # noqa: E402

#: Rounds of each build (the best is kept): a pip build is half a minute of CPU.
ROUNDS = 2
#: Seconds to wait for a first poll before giving up.
PATIENCE = 600.0


def _monitor_command(root: Path, data: Path, project: Path) -> str:
    """The plugin's monitor command with Claude Code's substitutions made (its environment gets none)."""
    (monitor,) = json.loads((root / "monitors" / "monitors.json").read_text())
    command = str(monitor["command"])
    for name, value in (("CLAUDE_PLUGIN_ROOT", root), ("CLAUDE_PLUGIN_DATA", data), ("CLAUDE_PROJECT_DIR", project)):
        command = command.replace("${" + name + "}", str(value))
    return command


def _start(command: str, env: dict[str, str], project: Path, db: Path) -> tuple[float, float]:
    """(wall seconds to the first poll, CPU seconds of the whole process tree to its exit) of one monitor start."""
    started = time.perf_counter()
    proc = subprocess.Popen(["sh", "-c", command], cwd=project, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while not _polled(db):
            if proc.poll() is not None or time.perf_counter() - started > PATIENCE:
                raise RuntimeError(f"the monitor ended or did not poll: {command}")
            time.sleep(0.02)
        wall = time.perf_counter() - started
        for child in psutil.Process(proc.pid).children():  # `attend run`: sh waits for it, and so counts its CPU
            child.terminate()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped above
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return wall, usage.ru_utime + usage.ru_stime


def _first_start(installer: str, wheels: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    """(the first start, the second start) of the monitor in a fresh home, building with `installer`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plugin = as_installed(REPO, root / "plugin")
        data, project = root / "plugin-data", root / "project"
        project.mkdir()
        _quiet_shipped(root)
        _write_sensor(root, "bench", "1h")
        # pip byte-compiles what it installs, as a user's pip does (the tests turn that off: PIP_COMPILE=0)
        build = uv_env(wheels, root / "cache" / "uv") if installer == "uv" else {
            k: v for k, v in pip_env(wheels).items() if k != "PIP_COMPILE"}
        # The temporary home's XDG folders, then the launcher's environment of the tests (no CLAUDE_ variables,
        # as Claude Code runs a monitor; the build's switches)
        env = {k: v for k, v in _env(root).items() if k.startswith("XDG_")}
        env.update(launcher_env(root, None, **build))
        db = root / "state" / "attend" / "attend.db"
        command = _monitor_command(plugin, data, project)
        first = _start(command, env, project, db)
        db.unlink()  # the second start polls afresh
        return first, _start(command, env, project, db)


def main() -> None:
    wheels = wheelhouse()
    best = {"uv": (float("inf"),) * 2, "pip": (float("inf"),) * 2, "ready": (float("inf"),) * 2}
    for _ in range(ROUNDS):
        for installer in ("uv", "pip"):  # interleaved: the machine's load changes between rounds
            first, second = _first_start(installer, wheels)
            best[installer] = (min(best[installer][0], first[0]), min(best[installer][1], first[1]))
            best["ready"] = (min(best["ready"][0], second[0]), min(best["ready"][1], second[1]))
    ready = best["ready"]
    report("monitor start, virtualenv set up (baseline)", ready[0], "s", note=f"CPU {ready[1]:.2f} s")
    for installer, goal in (("uv", " ; goal <= 10 s"), ("pip", "")):
        wall, cpu = best[installer]
        report(f"monitor first start, built with {installer}", wall, "s",
               note=f"{wall / ready[0]:.1f}x the baseline; CPU {cpu:.1f} s, {cpu / ready[1]:.1f}x{goal}")
    print(f"   with uv: {best['uv'][0] / best['pip'][0]:.2f}x pip's wall time, "
          f"{best['uv'][1] / best['pip'][1]:.2f}x its CPU", flush=True)
