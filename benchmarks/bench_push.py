"""Push sensing (issue 26): a stream's record -> line and a subscribed MCP resource's update -> line, against
`wake_on`'s file change -> line, and the idle CPU one stream sensor adds to 200 polled sensors.

Latency: `attend run` as a real subprocess, one sensor each, one set-up after the other in the same run,
each change timed until its line is read from the daemon's stdout (bench_wake's timing loop: `CHANGES`
changes at spacings from 0.3 s to 1.3 s), median and worst:
- wake_on: bench_wake's wake set-up (a command sensor at `interval: 1h` woken by its file, `min_interval:
  0.1s`), the baseline;
- stream: `output: stream` running `/bin/cat` on a FIFO the benchmark writes one JSON record at a time into
  (cat relays it at once, as `journalctl -f` does); `min_interval: 0.1s` (goal: median < 100 ms);
- MCP resource: `mcp.resource` with `subscribe: true` on the tests' resources server
  (tests/runtime/mcp/servers/resources.py, the SDK's `subscriptions/listen`), `interval: 1h`; the server
  publishes an update when its items file changes (it looks every 20 ms, so up to 20 ms of each figure
  are the server's) (goal: median < 250 ms).

Idle CPU: bench_wake's 200 command sensors at a 1 h interval, alone and with one idle stream sensor (cat on
a FIFO nobody writes), both daemons side by side over the same window; the daemon's own CPU (not its
children's) as bench_wake measures it (goal: within 1.1x).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.bench_runtime import IDLE_SENSORS, _env, _quiet_shipped
from benchmarks.bench_wake import FAST_CONFIG, _Daemon, _idle_cpus, _latencies, _time_changes, _wait_polled
from benchmarks.timing import report

_TESTS = Path(__file__).resolve().parents[1] / "tests"
for _folder in (_TESTS, _TESTS / "runtime", _TESTS / "runtime" / "mcp"):
    sys.path.insert(0, str(_folder))
from mcp_rig import Behind, mcp_sensor_yaml  # noqa: E402

#: Every record is a new item, the first one too.
EACH_RECORD = {"path": "$.items[*]", "key": "id", "on": "added", "initial": "fire", "magnitude": 5,
               "description": "record {id}"}


def _stream_sensor(root: Path, name: str, fifo: Path) -> None:
    """A stream sensor relaying the FIFO's JSON lines (`/bin/cat` holds it open for reading)."""
    os.mkfifo(fifo)
    folder = root / "config" / "attend" / "sensors"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"spec": 1, "name": name, "kind": "command", "threshold": 0, "interval": "1h", "min_interval": "0.1s",
           "command": {"argv": ["/bin/cat", str(fifo)], "output": "stream"}, "triggers": {"new": EACH_RECORD}}
    (folder / f"{name}.yaml").write_text(json.dumps(doc))


def _stream_latencies() -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
        fifo = root / "records.fifo"
        _stream_sensor(root, "feed", fifo)
        # Read and write: opening never waits for cat, and cat never sees an end while the benchmark runs.
        writer = os.open(fifo, os.O_RDWR)
        daemon = _Daemon(root)
        try:
            os.write(writer, b'{"id": "warm"}\n')
            daemon.line_with("record warm")  # cat runs and the sensor's first evaluation is done
            return _time_changes(daemon, lambda n: os.write(writer, b'{"id": %d}\n' % n), lambda n: f"record {n}")
        finally:
            daemon.stop()
            os.close(writer)


def _write_items(path: Path, count: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([{"id": f"i{i}", "title": "t"} for i in range(count)]))
    tmp.replace(path)  # atomic: the server never reads half a file


def probed_resource_sensor(root: Path, name: str, server: dict[str, Any], min_interval: str) -> None:
    """A user sensor `name` reading and subscribing to `items://list` on `server` (`interval: 1h`), probed and
    confirmed in the home at `root` (its project folder made)."""
    doc = json.loads(mcp_sensor_yaml(name, server, tool=None, resource="items://list", subscribe=True))
    doc.update(interval="1h", min_interval=min_interval)
    (root / "config" / "attend" / "sensors" / f"{name}.yaml").write_text(json.dumps(doc))
    project = root / "project"
    project.mkdir(exist_ok=True)
    probed = subprocess.run([sys.executable, "-m", "attend", "sensors", "probe", name, "--confirm"],
                            cwd=project, env=_env(root), capture_output=True, text=True)
    if probed.returncode != 0:
        raise RuntimeError(f"probe failed: {probed.stdout}{probed.stderr}")


def _resource_latencies() -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
        behind = Behind(root / "items.json", root / "starts.txt", root / "crash")
        _write_items(behind.items_file, 0)
        probed_resource_sensor(root, "shelf", behind.inline("resources"), "0.1s")
        daemon = _Daemon(root)
        try:
            _wait_polled(root, 1)  # the baseline read, after which the sensor subscribes
            return _time_changes(daemon, lambda n: _write_items(behind.items_file, n + 1),
                                 lambda n: f"new item i{n}: t (server=resources.py, key=i{n})")
        finally:
            daemon.stop()


def _idle_stream(root: Path) -> int:
    _stream_sensor(root, "idle-stream", root / "idle.fifo")
    return 0  # a stream that prints nothing is never evaluated: it adds no poll to wait for


def main() -> None:
    """Print the latency and idle figures."""
    woken = _latencies(wake=True)
    streamed = _stream_latencies()
    updated = _resource_latencies()
    for label, values in (("wake_on file change (baseline)", woken), ("stream record (goal < 100 ms)", streamed),
                          ("subscribed MCP resource update (goal < 250 ms)", updated)):
        report(f"to line, {label}: median of {len(values)}", statistics.median(values) * 1000, "ms",
               note=f"worst {max(values) * 1000:.0f} ms")
    report("stream median vs wake_on median", statistics.median(streamed) / statistics.median(woken), "x")
    report("resource update median vs wake_on median", statistics.median(updated) / statistics.median(woken), "x")
    alone, with_stream = _idle_cpus([(0, None), (0, _idle_stream)])
    report(f"idle CPU, {IDLE_SENSORS} polled sensors (baseline)", alone * 100, "% of a core")
    report(f"idle CPU, {IDLE_SENSORS} polled sensors + 1 idle stream (goal <= 1.1x)", with_stream * 100,
           "% of a core", note=f"{with_stream / alone:.2f}x the baseline" if alone else "baseline measured 0")


if __name__ == "__main__":
    main()
