"""The sensors tab: time to first paint with 50 sensors, and the refresh cost while idle (goal: < 2 % of a core).

First paint is measured in a fresh interpreter (imports included: what a user waits for after typing
`attend tui`), from start to the first frame of the real app, run headless; the baseline is a bare
Textual app showing a 50-row DataTable in a fresh interpreter, so the ratio is what attend adds
(loading and compiling 50 sensor files, reading the store); a second baseline is `attend sensors list
--json` over the same sensors, the CLI doing the same loading. The refresh cost is one live refresh
(the store's status rows, a stat of the layer folders, the cells) measured in-process, best of many,
and the CPU the open tab uses while idle over a few seconds of its real timer, as a share of one core.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_check import TEMPLATE as SENSOR
from benchmarks.timing import best_of, report

#: How many sensors the tab lists.
SENSORS = 50

#: How long the idle CPU figure watches the open tab (its redraw tick fires every 5 s).
IDLE_SECONDS = 20.0

FIRST_PAINT = """
import asyncio, sys, time
start = time.perf_counter()
from attend.tui import SensorsApp
async def main():
    app = SensorsApp(sys.argv[1], refresh_seconds=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.query_one("#sensors").row_count >= 50
        print(time.perf_counter() - start)
asyncio.run(main())
"""

#: A bare Textual app with a 50-row DataTable: the baseline of both figures.
BARE_APP = """
import asyncio, sys, time
start = time.perf_counter()
from textual.app import App
from textual.widgets import DataTable, Footer
class Bare(App):
    def compose(self):
        yield DataTable(id="t")
        yield Footer()
    def on_mount(self):
        t = self.query_one(DataTable)
        t.add_columns(*"abcdefghij")
        for i in range(50):
            t.add_row(*(f"cell {i}" for _ in range(10)))
"""

BASELINE_PAINT = BARE_APP + """
async def main():
    app = Bare()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        print(time.perf_counter() - start)
asyncio.run(main())
"""

#: The tail of both idle scripts: open the app made by `make()`, then measure its CPU while idle.
MEASURE_IDLE = """
async def main():
    app = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(float(sys.argv[2]))
        print((time.process_time() - cpu) / (time.perf_counter() - wall))
asyncio.run(main())
"""

IDLE = """
import asyncio, sys, time
from attend.tui import SensorsApp
def make():
    return SensorsApp(sys.argv[1])  # the shipped refresh: on change and on keys, the times redrawn every 5 s
""" + MEASURE_IDLE

BASELINE_IDLE = BARE_APP + "make = Bare\n" + MEASURE_IDLE


def _home(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(root), XDG_CONFIG_HOME=str(root / "config"), XDG_STATE_HOME=str(root / "state"),
               XDG_DATA_HOME=str(root / "data"), XDG_CACHE_HOME=str(root / "cache"))
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True)
    for i in range(SENSORS):
        name = f"gen-{i:02d}"
        (folder / f"{name}.yaml").write_text(SENSOR.format(name=name, index=i, interval=30 + i))
    (root / "project").mkdir()
    return env


def _run(script: str, env: dict[str, str], *args: str) -> float:
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return float(done.stdout.strip().splitlines()[-1])


def _timed_cli(env: dict[str, str], project: str) -> float:
    """Wall time of `attend sensors list --json` (the same loading and store read, printed as JSON)."""
    import time

    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "attend", "sensors", "list", "--json", "--project", project],
                          env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return time.perf_counter() - started


def main() -> None:
    import asyncio

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _home(root)
        project = str(root / "project")
        _run(FIRST_PAINT, env, project)  # warm the grammar's parser cache and the OS file cache
        ours = min(_run(FIRST_PAINT, env, project) for _ in range(3))
        bare = min(_run(BASELINE_PAINT, env, project) for _ in range(3))
        report(f"first paint, {SENSORS} sensors (fresh interpreter)", ours * 1000, "ms")
        report("first paint, bare Textual app with a 50-row DataTable", bare * 1000, "ms")
        report("ratio (attend tui / bare app)", ours / bare, "x")
        listed = min(_timed_cli(env, project) for _ in range(3))
        report(f"attend sensors list --json, {SENSORS} sensors (fresh interpreter)", listed * 1000, "ms")
        report("ratio (attend tui first paint / attend sensors list)", ours / listed, "x")

        saved = dict(os.environ)
        os.environ.update(env)
        try:
            from attend.tui import SensorsApp
            from attend.tui.app import SensorsScreen

            async def refresh_cost() -> float:
                app = SensorsApp(project, refresh_seconds=None)
                async with app.run_test(size=(120, 40)) as pilot:
                    await pilot.pause()
                    screen = app.screen
                    assert isinstance(screen, SensorsScreen)
                    return best_of(screen.refresh_live, repeat=5, number=20)

            per_refresh = asyncio.run(refresh_cost())
        finally:
            os.environ.clear()
            os.environ.update(saved)
        report("one live refresh (store, file stat, cells)", per_refresh * 1000, "ms")
        report("refresh share of one core at one refresh per 2 s", per_refresh / 2.0 * 100, "%",
               note="goal < 2 %")
        idle = _run(IDLE, env, project, str(IDLE_SECONDS))
        bare_idle = _run(BASELINE_IDLE, env, project, str(IDLE_SECONDS))
        report(f"open tab idle CPU over {IDLE_SECONDS:g} s (its real timer)", idle * 100, "% of a core")
        report("bare Textual app idle CPU", bare_idle * 100, "% of a core")


if __name__ == "__main__":
    main()
