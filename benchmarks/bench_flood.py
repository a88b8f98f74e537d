"""A notification flood (issue 35, item 4): what a server sending updates and log messages as fast as it can
costs `attend run`, against what the flood costs the server itself.

`attend run` as a real subprocess with one `mcp.resource` sensor (`subscribe: true`, `interval: 1h`,
`min_interval: 1s`) on the tests' flood server (tests/runtime/mcp/servers/flood.py: a handshake-era revision,
`resources/subscribe`); once subscribed, the server sends `FLOOD` updates of the resource, each followed by a
log message, then a `ping` whose answer proves the daemon read them all. Figures: the daemon's own CPU
(psutil, its threads, not its children) over the flood, per notification, as a share of a core over the
flood's wall time, and as a ratio to the server's own CPU to send it (the baseline, same run); the reads the
flood caused (coalesced: one per `min_interval`), and the log messages written and dropped past the rate.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.bench_push import probed_resource_sensor
from benchmarks.bench_runtime import _quiet_shipped
from benchmarks.bench_wake import FAST_CONFIG, _Daemon, _wait_polled
from benchmarks.timing import report

#: Updates the flood sends (each followed by a log message).
FLOOD = 10_000


def _cpu(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def main() -> None:
    """Print the flood's figures."""
    from mcp_rig import Behind  # tests/ is on sys.path once bench_push is imported

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _quiet_shipped(root)
        (root / "config" / "attend" / "config.yaml").write_text(FAST_CONFIG)
        behind = Behind(root / "items.json", root / "starts.txt", root / "crash")
        behind.write_items([{"id": "a", "title": "first"}])
        fifo, reads = root / "flood.fifo", root / "reads.txt"
        os.mkfifo(fifo)
        server = behind.inline("flood", ATTEND_TEST_FLOOD=str(fifo), ATTEND_TEST_READS=str(reads))
        probed_resource_sensor(root, "flooded", server, "1s")
        daemon = _Daemon(root)
        try:
            _wait_polled(root, 1)
            while "subscribe" not in reads.read_text():
                time.sleep(0.05)
            before, reads_before, started = _cpu(daemon.proc.pid), reads.read_text().count("read"), time.monotonic()
            with open(fifo, "w", encoding="utf-8") as go:
                go.write(f"{FLOOD}\n")
            done = Path(f"{fifo}.done")
            while not done.exists():
                time.sleep(0.05)
            spent, wall = _cpu(daemon.proc.pid) - before, time.monotonic() - started
            reads_during = reads.read_text().count("read") - reads_before
        finally:
            daemon.stop()
        flood = json.loads(done.read_text())
        log = root / "state" / "attend" / "mcp" / "flood.py.log"
        written = log.read_text().count("log info flood: update ") if log.exists() else 0
    sent = flood["sent"]
    report(f"flood: {sent:,} notifications, the server's CPU (baseline)", flood["cpu"], "s",
           note=f"{flood['cpu'] / sent * 1e6:.1f} µs each")
    report("the daemon's CPU over the flood", spent, "s", note=f"{spent / sent * 1e6:.1f} µs a notification")
    report("the daemon's CPU vs the server's (goal: bounded, the test's 12x)", spent / flood["cpu"], "x")
    report("the daemon's share of a core over the flood (test's bound 0.15)", spent / wall, "of a core",
           note=f"{wall:.1f} s: the budget of 1,000 a second holds the server back")
    report("resource reads the flood caused (one per min_interval, 1 s)", reads_during, "reads",
           note=f"{FLOOD:,} updates")
    report("log messages written (20 a second), the rest dropped and counted", written, "lines",
           note=f"{FLOOD - written:,} dropped")


if __name__ == "__main__":
    main()
