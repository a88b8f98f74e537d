"""Hostile sensor files: worst-case seconds and MB of `compile --check` per file, against a valid file;
and large poll outputs: seconds and MB of `sensors poll` per output shape, against the output cap.

Each file of tests/hostile_files.py (the cases of issues 14 and 17), plus scaled-up variants of the
floods (more unknown fields, longer argv lists, more operators on one line, more costly triggers),
is checked on its own by a real `attend compile --check` subprocess; its wall time and peak memory are
compared with the same command on one valid file in the same run. Every bound of `attend.bounds`
should keep each ratio small and flat as the hostile input grows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.timing import report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.hostile_files import HOSTILE, VALID  # noqa: E402

#: The floods again, larger: the cost must stay bounded, not grow with them.
SCALED: dict[str, str] = {
    "unknown-fields-20k": "spec: 1\nname: unknown-fields-20k\nkind: command\ncommand: {argv: [a]}\ntriggers:\n"
    "  t:\n    on: changed\n" + "".join(f"    u{i}: 1\n" for i in range(20000)),
    "argv-lists-30k": "spec: 1\nname: argv-lists-30k\nkind: command\ncommand: {argv: [" + ", ".join(["[]"] * 30000)
    + "]}\n",
    "operators-one-line-20k": "spec: 1\nname: operators-one-line-20k\nkind: command\ncommand: {argv: [a]}\n"
    "triggers:\n  t: {on: enters, where: {f: {" + ", ".join(f"op{i}: 1" for i in range(20000)) + "}}}\n",
    "env-values-20k": "spec: 1\nname: env-values-20k\nkind: command\ncommand:\n  argv: [a]\n  env: {"
    + ", ".join(f"K{i}: []" for i in range(20000)) + "}\n",
    "triggers-256-costly": "spec: 1\nname: triggers-256-costly\nkind: command\ncommand: {argv: [a]}\ntriggers:\n"
    + "".join(f"  t{i}: {{on: enters, where: {{f: {{matches: '(?:a|b{i}){{1000}}'}}}}}}\n" for i in range(256)),
    "bad-types-256-triggers": "spec: 1\nname: bad-types-256-triggers\nkind: command\ncommand: {argv: [a]}\n"
    "triggers:\n" + "".join(f"  t{i}: {{on: [], key: {{}}, path: 1, match: 2, magnitude: x, description: []}}\n"
                            for i in range(256)),
}

#: Runs `argv` as the only child of a fresh process and prints that child's peak memory (KiB).
MEASURE = ("import resource, subprocess, sys; subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, "
           "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def _check(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak MB of `attend compile --check path` (best of two runs)."""
    best = (float("inf"), float("inf"))
    for _ in range(2):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "attend", "compile", "--check",
                              str(path)], env=env, capture_output=True, text=True, timeout=600)
        seconds = time.perf_counter() - started
        best = min(best, (seconds, int(out.stdout.strip()) / 1024))
    return best


#: The output cap of the poll figures: outputs of several MB, each poll a real `attend sensors poll`.
POLL_CAP = 8 << 20

#: Output shapes under POLL_CAP, each polled by a sensor with one keyed trigger (docs/runtime.md, Memory
#: per poll): the densest output the value cap lets in, ordinary issue items, and `[{},{},…]` filling
#: the byte cap (past the value cap: refused before it is parsed).
POLL_OUTPUTS: dict[str, str] = {
    "dense keyed items": '{"items":[' + ",".join(f'{{"id":{i}}}' for i in range(POLL_CAP // 16 // 3 - 8)) + "]}",
    "ordinary issue items": '{"items":[' + ",".join(
        f'{{"id":{i},"title":"issue title number {i} with some words","url":"https://example.com/o/r/issues/{i}",'
        f'"state":"open"}}' for i in range(POLL_CAP // 170)) + "]}",  # 14 bytes a value: within the value cap
    "empty mappings past the value cap": "[" + ",".join(["{}"] * ((POLL_CAP - 2) // 3)) + "]",
}


def _poll(folder: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Seconds, peak MB and the state of `attend sensors poll big`."""
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m",
                          "attend", "sensors", "poll", "big"], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=600)
    seconds = time.perf_counter() - started
    first = subprocess.run([sys.executable, "-m", "attend", "sensors", "--json"], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=600)
    state = next((row["state"] for row in json.loads(first.stdout) if row["name"] == "big"), "?")
    return seconds, int(out.stdout.split()[0]) / 1024, state


def poll_figures(folder: Path, env: dict[str, str]) -> None:
    """Seconds and peak MB of a first and a steady poll of each POLL_OUTPUTS shape, over a tiny output's."""
    sensors = folder / "config" / "attend" / "sensors"
    sensors.mkdir(parents=True, exist_ok=True)
    shipped = Path(__file__).resolve().parents[1] / "src" / "attend" / "sensors.d"
    for path in shipped.glob("*.yaml"):
        if not path.name.endswith(".test.yaml"):
            (sensors / path.name).write_text("spec: 1\nenabled: false\n")
    env = {**env, "XDG_STATE_HOME": str(folder / "state"), "XDG_CACHE_HOME": str(folder / "cache"),
           "XDG_DATA_HOME": str(folder / "data")}
    cap_mb = POLL_CAP / 2**20
    base_mb = 0.0
    for name, text in {"tiny output (baseline)": '{"items":[{"id":1}]}', **POLL_OUTPUTS}.items():
        output = folder / "output.json"
        output.write_text(text)
        (folder / "state").mkdir(exist_ok=True)
        for db in (folder / "state").rglob("attend.db*"):
            db.unlink()
        (sensors / "big.yaml").write_text(
            f"spec: 1\nname: big\nkind: command\ncommand:\n  argv: [cat, {output}]\n  timeout: 600s\n"
            f"  max_output: {POLL_CAP}\ntriggers:\n  t: {{path: '$.items[*]', key: id, on: changed}}\n")
        for which in ("first", "steady"):
            seconds, mb, state = _poll(folder, env)
            if not base_mb and which == "steady":
                base_mb = mb
            report(f"poll {name}, {len(text) / 2**20:.1f} MB, {which}", seconds, "s",
                   note=f"{state}; {mb:.0f} MB, {(mb - base_mb) / cap_mb:.1f} x max_output {cap_mb:.0f} MiB over the "
                        "baseline" if base_mb else f"{state}; {mb:.0f} MB")


def main() -> None:
    """Print each hostile file's seconds and MB, the worst case, and the ratios against a valid file."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        env.update(HOME=str(folder), XDG_CONFIG_HOME=str(folder / "config"))
        valid = folder / "calm.yaml"
        valid.write_text(VALID)
        base_seconds, base_mb = _check(valid, env)
        report("valid file (baseline): seconds", base_seconds, "s")
        report("valid file (baseline): peak memory", base_mb, "MB")
        figures = {}
        for name, text in {**HOSTILE, **SCALED}.items():
            path = folder / f"{name}.yaml"
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
            figures[name] = _check(path, env)
            seconds, mb = figures[name]
            report(f"{name} ({path.stat().st_size:,} bytes)", seconds, "s", note=f"{mb:.0f} MB")
        worst_time = max(figures, key=lambda n: figures[n][0])
        worst_mb = max(figures, key=lambda n: figures[n][1])
        report(f"worst seconds per file ({worst_time})", figures[worst_time][0], "s")
        report("  vs the valid file", figures[worst_time][0] / base_seconds, "x")
        report(f"worst peak memory per file ({worst_mb})", figures[worst_mb][1], "MB")
        report("  vs the valid file", figures[worst_mb][1] / base_mb, "x")
        poll_figures(folder, env)


if __name__ == "__main__":
    main()
