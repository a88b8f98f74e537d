"""Messages: send-to-line latency of the shipped messages sensor, against its interval and a CLI send.

A real `attend run --session b` polls a project with only the shipped messages sensor on, at its
shipped cadence (wake_on on the peers folders, min_interval 250 ms, interval 5 s) and the default
message-lane governor (3 s between disclosures, so sends are spaced 3.5 s apart). Each round writes one
message to the project's tray the way `attend peers send` does (temporary file, rename) and times the
moment its line appears on b's stdout. Baselines in the same run: the shipped interval (what a send
would wait for at worst without wake_on) and `attend peers send` itself (the process a sender waits for).

Then one poll of the sensor with 10,000 stored messages (the cost of every wake and every interval),
against listing the same folders' names alone (`os.scandir`, the floor of any poll that finds new files).
"""

from __future__ import annotations

import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped
from benchmarks.timing import best_of, report

#: Messages timed.
ROUNDS = 10
#: Seconds between two sends: past the message lane's 3 s governor cooldown, so no line waits on it.
SPACING = 3.5
#: Messages stored for the per-poll figure (one in ten addressed to the project, the rest open).
STORED = 10_000
#: Seconds to wait for anything before giving up.
PATIENCE = 60.0


def _lines(proc: subprocess.Popen, into: queue.Queue) -> None:
    assert proc.stdout is not None  # started with stdout=PIPE
    for line in proc.stdout:
        into.put((time.perf_counter(), line.rstrip("\n")))


def _wait_line(lines: queue.Queue, needle: str) -> float:
    deadline = time.perf_counter() + PATIENCE
    while True:
        at, line = lines.get(timeout=max(deadline - time.perf_counter(), 0.01))
        if needle in line:
            return at


def main() -> None:
    from attend.peers.mailbox import Mailbox, Message, peers_dir
    from attend.spec import load_set

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        _quiet_shipped(root)
        (root / "config" / "attend" / "sensors" / "messages.yaml").unlink()
        project = root / "project"
        project.mkdir()
        interval = float(load_set(project, env).sensors["messages"].data["interval"])
        mailbox = Mailbox(peers_dir(env))
        session = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "b"], cwd=project,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(session, lines), daemon=True).start()
        latencies, sends = [], []
        try:
            # Its line (by the cold start or the sensor) proves the sensor has its baseline and b its cold start.
            warm = Message(mailbox.new_id(), "a", "session", "/a", str(project.resolve()), None, None, "warm",
                           time.time())
            mailbox.post(warm)
            _wait_line(lines, warm.id)
            for n in range(ROUNDS):
                time.sleep(SPACING)
                message = Message(mailbox.new_id(), "a", "session", "/a", str(project.resolve()), None, None,
                                  f"round {n}", time.time())
                sent = time.perf_counter()
                mailbox.post(message)
                latencies.append(_wait_line(lines, message.id) - sent)
            for n in range(5):
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "attend", "peers", "send", "--to", str(project), f"cli {n}"],
                               cwd=root, env={**env, "ATTEND_SESSION": "a"}, capture_output=True, check=True)
                sends.append(time.perf_counter() - started)
        finally:
            session.terminate()
            session.wait(timeout=PATIENCE)
    median, worst = statistics.median(latencies), max(latencies)
    send = statistics.median(sends)
    report("shipped interval (baseline: the wait without wake_on)", interval, "s")
    report("`attend peers send` process (baseline, median of 5)", send, "s")
    report(f"send -> line on the Monitor stream (median of {ROUNDS})", median, "s",
           note=f"{median / interval:.3f}x the interval; {median / send:.2f}x a CLI send")
    report(f"send -> line on the Monitor stream (worst of {ROUNDS})", worst, "s",
           note=f"{worst / interval:.3f}x the interval")
    _per_poll()


def _per_poll() -> None:
    import os

    from attend.peers.mailbox import Mailbox, Message, peers_dir
    from attend.sensors.base import Focus
    from attend.spec import load_set

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        project = root / "project"
        project.mkdir()
        mailbox = Mailbox(peers_dir(env))
        for n in range(STORED):
            addressed = n % 10 == 0
            mailbox.post(Message(f"{1_700_000_000_000 + n:013d}-{n:06x}", "a", "session", "/a",
                                 str(project) if addressed else None, None if addressed else "open", None,
                                 f"message {n}", 1_700_000_000 + n / 1000))
        from attend.sensors.messages import MessagesSensor

        config = load_set(project, env).sensors["messages"].data["crate"]
        sensor = MessagesSensor(config)
        focus = Focus(cwd=project, env=env)
        sensor.poll(focus)  # the first poll reads the newest window's files; later ones only list names
        folders = [str(p) for p in mailbox.root.iterdir() if p.is_dir()]

        def listing() -> None:
            for folder in folders:
                with os.scandir(folder) as entries:
                    [e.name for e in entries]

        floor = best_of(listing, repeat=7)
        poll = best_of(lambda: sensor.poll(focus), repeat=7)
    report(f"list the peers folders' {STORED} names (baseline)", floor * 1000, "ms")
    report(f"one messages poll with {STORED} stored", poll * 1000, "ms", note=f"{poll / floor:.1f}x the listing")
