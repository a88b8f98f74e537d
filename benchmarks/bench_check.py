"""compile --check: files per second over 1,000 generated sensor files, and the command's start-up vs `python -c pass`.

Throughput runs in-process (load, validate, compile-check every file), compared with plain
`yaml.load(CSafeLoader)` of the same files as the baseline. Start-up runs `attend compile --check` on
one file as a subprocess (the installed `attend` script, as a user types it; `python -m attend` adds
runpy's imports and is shown too), against `python -c pass`, all best of several interleaved runs. The largest valid file
(256 triggers, the most where properties each that the 100,000-node cap leaves) is checked in-process,
split into the spec's part and the compiler's `diagnose`, which must stay linear in the file's size.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks.timing import best_of, report

#: How many sensor files the throughput figure checks.
FILES = 1000

TEMPLATE = """\
spec: 1
name: {name}
description: generated sensor {index}
kind: command
interval: {interval}s
min_interval: 5s
requires: ["Bash(curl:*)"]
command:
  argv: [curl, -sf, "https://example.invalid/{index}"]
  timeout: 10s
triggers:
  high-wind:
    path: $.current
    on: enters
    where:
      wind_speed_*: {{above: {index}}}
    magnitude: 3.0
    description: "wind {{wind_speed_10m}} km/h"
  new-item:
    path: $.items[*]
    key: id
    on: added
    where: {{state: [open, "re*"]}}
    description: "new item {{id}}: {{title}}"
"""


def _generate(folder: Path) -> list[Path]:
    paths = []
    for index in range(FILES):
        path = folder / f"sensor-{index:04d}.yaml"
        path.write_text(TEMPLATE.format(name=path.stem, index=index, interval=30 + index % 60))
        paths.append(path)
    return paths


#: The largest file the caps allow: MAX_TRIGGERS triggers of this many where properties (one more
#: trips the loader's 100,000-node cap).
MAXIMAL_TRIGGERS, MAXIMAL_PROPERTIES = 256, 189


def _maximal(folder: Path) -> None:
    from attend.bounds import MAX_TRIGGERS
    from attend.compiler.diagnostics import diagnose
    from attend.spec import load_paths

    assert MAXIMAL_TRIGGERS == MAX_TRIGGERS
    lines = ["spec: 1", "name: maximal", "description: the largest valid sensor", "kind: command",
             "interval: 30s", "command:", "  argv: [echo, '{}']", "triggers:"]
    for t in range(MAXIMAL_TRIGGERS):
        lines += [f"  t{t}:", "    path: $.items[*]", "    key: id", "    on: added", f"    description: 'item {{id}} {t}'",
                  "    where:", *(f"      p{i}: {i}" for i in range(MAXIMAL_PROPERTIES))]
    (folder / "maximal.yaml").write_text("\n".join(lines) + "\n")
    env = {"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    loaded: list[Any] = []

    def run_spec() -> None:
        loaded[:] = [load_paths([folder], str(folder), env)]

    seconds_spec = best_of(run_spec, repeat=2)
    (sensor,) = loaded[0].sensors.values()
    assert not list(loaded[0].all_diagnostics()), "the maximal file must be valid"
    seconds_diagnose = best_of(lambda: diagnose(sensor), repeat=2)
    report(f"maximal file ({MAXIMAL_TRIGGERS} triggers × {MAXIMAL_PROPERTIES} where properties): spec", seconds_spec, "s")
    report("  and diagnose (expressions)", seconds_diagnose, "s")


def _throughput(folder: Path, paths: list[Path]) -> None:
    from attend.compiler.check import check
    from attend.spec import load_paths

    env = {"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    found = check(load_paths([folder], str(folder), env))
    assert not found, found[:3]  # every generated file is valid: the figure measures the clean path

    def run_check() -> None:
        check(load_paths([folder], str(folder), env))

    def run_baseline() -> None:
        for path in paths:
            yaml.load(path.read_text(), Loader=yaml.CSafeLoader)

    def run_spec_only() -> None:
        load_paths([folder], str(folder), env)

    seconds = best_of(run_check, repeat=3)
    spec_only = best_of(run_spec_only, repeat=3)
    baseline = best_of(run_baseline, repeat=3)
    report("compile --check, files per second (in-process)", FILES / seconds, "files/s")
    report("  of which spec (read, merge, validate), files per second", FILES / spec_only, "files/s")
    report("time per file vs yaml.load(CSafeLoader) of the same file", seconds / baseline, "x")
    report("  spec only vs yaml.load(CSafeLoader)", spec_only / baseline, "x")


def _startup(folder: Path, one: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    # What a user's machine does: bytecode written once and reused (a CI or agent shell may turn it off,
    # which would time the compiler of every module instead of attend's start-up).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=str(folder), XDG_CONFIG_HOME=str(folder / "config"), XDG_DATA_HOME=str(folder / "data"))
    project = folder / "project"
    project.mkdir(exist_ok=True)

    script = Path(sys.executable).with_name("attend")  # the console script users type

    def attend(*args: str, module: bool = False) -> Callable[[], None]:
        front = [sys.executable, "-m", "attend"] if module or not script.exists() else [str(script)]

        def run() -> None:
            subprocess.run([*front, "compile", "--check", *args], env=env, check=True, capture_output=True,
                           cwd=project)
        return run

    def python() -> None:
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True, capture_output=True)

    attend()()  # writes the bytecode of every module the check imports
    # Interleaved rounds, best of each: a busy machine slows all four alike within a round.
    rounds = [(best_of(python, repeat=1), best_of(attend(str(one)), repeat=1), best_of(attend(), repeat=1),
               best_of(attend(module=True), repeat=1)) for _ in range(15)]
    baseline, seconds, shipped, as_module = (min(r[i] for r in rounds) for i in range(4))
    report("attend compile --check ONE.yaml start-up", seconds * 1000, "ms")
    report("start-up vs `python -c pass`", seconds / baseline, "x", note=f"baseline {baseline * 1000:.1f} ms")
    report("attend compile --check, the shipped set (whole process)", shipped * 1000, "ms")
    report("  shipped set vs `python -c pass` (goal <= 5x)", shipped / baseline, "x")
    report("  the same as `python -m attend` (runpy's own imports added)", as_module / baseline, "x")
    probe = ("import sys; from attend.cli import main; main(['compile', '--check', sys.argv[1]]); "
             "print(len([m for m in sys.modules if m.split('.')[0] in "
             "('trio', 'mcp', 'anyio', 'textual', 'watchfiles')]))")
    loaded = subprocess.run([sys.executable, "-c", probe, str(one)], env=env, capture_output=True, text=True)
    report("trio/mcp/anyio/textual/watchfiles modules imported by the check",
           float(loaded.stdout.strip().splitlines()[-1]), "")


def main() -> None:
    """Print the throughput and start-up figures."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sensors = folder / "sensors"
        sensors.mkdir()
        paths = _generate(sensors)
        _throughput(sensors, paths)
        _startup(folder, paths[0])
        maximal = folder / "maximal"
        maximal.mkdir()
        _maximal(maximal)


if __name__ == "__main__":
    main()
