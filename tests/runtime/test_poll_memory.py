"""Memory per poll (issue 28, item 20; docs/runtime.md, "Memory per poll"): a command's output is at most
`max_output` bytes holding at most one JSON value or key per 16 of them, so one poll of `attend sensors
poll` (first, steady, dry run) peaks at most (READING + KEPT × triggers) × max_output above the same
command on a tiny output, whatever the shape of the output.

Each poll is a real `attend` process whose peak resident memory is read from its parent's
`RUSAGE_CHILDREN` once it has exited (the `cat` it runs is far smaller). The cap is 2 MiB, so the bound
is exercised with outputs of a few MB in a few seconds; the factor does not depend on the cap
(benchmarks/bench_hostile.py measures it at 8 MiB, and a 61 MB output at 64 MiB took 11.5 x).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from daemon_rig import sensor_yaml

from attend.bounds import DATA_BYTES_PER_VALUE

pytestmark = pytest.mark.slow

#: The bound docs/runtime.md states, in multiples of max_output over the process's own memory: reading and
#: evaluating the output, and each trigger's state (the items it keeps) read back from the store.
READING, KEPT = 12, 8
#: And each fire of the poll: about 1 KB and its description (here a few characters), stated with room.
FIRE_KB = 2
CAP = 2 << 20

#: Runs argv as the only child of a fresh interpreter; prints its peak memory (KiB), exit code and output.
MEASURE = ("import json, resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
           "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode, r.stdout, r.stderr]))")


def _poll(home, name: str, *extra: str) -> tuple[float, int, str]:
    """Peak MB, exit code and stdout of `attend sensors poll NAME` as its own process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "attend", "sensors", "poll", name, *extra],
                         cwd=home.project, env=home.env(), capture_output=True, text=True, timeout=120)
    kib, code, stdout, stderr = json.loads(out.stdout)
    assert "Traceback" not in stderr, stderr
    return kib / 1024, code, stdout


def _sensor(home, name: str, text: str, trigger: dict) -> None:
    output = home.root / f"{name}.json"
    output.write_text(text)
    home.write_user_sensor(name, sensor_yaml(name, ["cat", str(output)], trigger=trigger,
                                             command={"max_output": CAP, "timeout": "60s"}))


def _dense_items() -> str:
    """`{"items":[{"id":0},{"id":1},…]}` with as many items as the value budget lets in: the densest
    output a keyed trigger keeps in full (each item read, compared, stored and read back next poll)."""
    items = (CAP // DATA_BYTES_PER_VALUE - 8) // 3  # an item is 3 values and keys: {, "id":, and the number
    return '{"items":[' + ",".join(f'{{"id":{i}}}' for i in range(items)) + "]}"


def _empty_mappings() -> str:
    """`[{},{},…]` filling the byte cap: 24 times its size once parsed, far past the value budget."""
    return "[" + ",".join(["{}"] * ((CAP - 2) // 3)) + "]"


#: The baseline's peak MB, once measured (by the module's first test, in its home).
_BASELINE: list[float] = []


@pytest.fixture
def baseline(quiet_home) -> float:
    """Peak MB of the same command on a tiny output: the process's own memory.

    Measured once per test process, in the first test's home: it is the same interpreter, imports and
    command on the same tiny output in any quiet home, so each test need not start one more `attend`."""
    if not _BASELINE:
        _sensor(quiet_home, "tiny", '{"items":[{"id":1}]}', {"path": "$.items[*]", "key": "id", "on": "changed"})
        peak, code, _ = _poll(quiet_home, "tiny")
        assert code == 0
        _BASELINE.append(peak)
    return _BASELINE[0]


def _bound(baseline: float, triggers: int, fires: int = 0) -> float:
    return baseline + (READING + KEPT * triggers) * CAP / 2**20 + fires * FIRE_KB / 1024


def test_polls_of_the_densest_output_within_the_value_budget_stay_within_the_memory_bound(quiet_home, baseline) -> None:
    text = _dense_items()
    assert len(text) <= CAP
    _sensor(quiet_home, "dense", text, {"path": "$.items[*]", "key": "id", "on": "changed", "description": "{id}"})
    for extra in ((), (), ("--dry-run",)):  # the baseline, a poll with the stored state read back, a dry run
        peak, code, stdout = _poll(quiet_home, "dense", *extra)
        assert code == 0, stdout
        assert peak <= _bound(baseline, 1), (extra, peak, baseline)
        assert "… (more; use --json for the whole result)" in stdout  # a preview, never the whole result


def test_each_trigger_keeping_the_items_adds_its_stored_state_within_the_bound(quiet_home, baseline) -> None:
    _sensor(quiet_home, "dense", _dense_items(), {"path": "$.items[*]", "key": "id", "on": "added"})
    sensor = json.loads(quiet_home.user_sensors.joinpath("dense.yaml").read_text())
    sensor["triggers"] = {on: {"path": "$.items[*]", "key": "id", "on": on, "description": "{id}"}
                          for on in ("added", "removed", "changed")}  # three states, each with every item
    quiet_home.write_user_sensor("dense", json.dumps(sensor))
    for _ in range(2):
        peak, code, stdout = _poll(quiet_home, "dense")
        assert code == 0, stdout
        assert peak <= _bound(baseline, 3), (peak, baseline)


def test_an_output_past_the_value_budget_is_malformed_naming_the_limit_within_the_memory_bound(quiet_home, baseline) -> None:
    _sensor(quiet_home, "wide", _empty_mappings(), {"path": "$", "on": "changed", "description": "changed"})
    for extra in ((), ("--dry-run",)):
        peak, code, stdout = _poll(quiet_home, "wide", *extra)
        assert code == 1, stdout
        assert "sensor wide: malformed" in stdout
        assert (f"a max_output of {CAP:,} bytes reads at most {CAP // DATA_BYTES_PER_VALUE:,} (one per "
                f"{DATA_BYTES_PER_VALUE} bytes" in stdout), stdout
        assert "trigger state untouched" in stdout
        assert peak <= _bound(baseline, 1), (extra, peak, baseline)


def test_a_poll_where_every_item_is_new_adds_its_fires_within_the_bound(quiet_home, baseline) -> None:
    items = 10_000
    _sensor(quiet_home, "burst", '{"items":[]}', {"path": "$.items[*]", "key": "id", "on": "added",
                                                  "description": "new {id}"})
    assert _poll(quiet_home, "burst")[1] == 0  # the baseline: no items
    (quiet_home.root / "burst.json").write_text('{"items":[' + ",".join(f'{{"id":{i}}}' for i in range(items)) + "]}")
    peak, code, stdout = _poll(quiet_home, "burst")
    assert code == 0, stdout
    assert stdout.count("[attend sensor=burst priority=low] new ") == items  # every fire delivered, each as loud as itself
    assert peak <= _bound(baseline, 1, fires=items), (peak, baseline)
