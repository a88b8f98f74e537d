"""Peers across machines: send -> line through a real nats-server, against the files transport in the same run.

Two machines are two XDG homes with clones of one repository (one project identity) on one `nats-server -js`
(tests/nats_rig.py). A real `attend run --session b` on the receiving machine runs the shipped messages
sensor; each round the sending machine posts one message the way `attend peers send` does (its mailbox's
`post`: this machine's folder, the spool, the publish) and times the moment its line appears on b's stdout.
The same rounds with the files transport (one machine, one home) are the baseline. Both homes use the end-to-end
tests' short message-lane governor (0.1 s between disclosures), so no line waits on the governor. Each round
also times the message's file appearing in the receiving machine's peers folder: the transport's own part of
the latency (the rest, the sensor's wake, poll and print, is one path for both transports, and varies with where
the sensor's 250 ms `min_interval` stands when the file lands).

Then the trio/asyncio bridge alone (one call to the loop's thread and back, and one publish through it), and a
backlog: 10,000 messages waiting for a project drained by a starting session (from `attend run`'s start to
its consumer holding nothing unacked), against the floor of any folder with a file per message: the same
10,000 files written whole (temporary file, rename) and nothing else.
Goals (issue 37): median send -> line at most 0.3 s; the backlog in at most 2 s.
"""

from __future__ import annotations

import asyncio
import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_runtime import _env, _quiet_shipped
from benchmarks.timing import report

_TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

#: Messages timed per transport.
ROUNDS = 20
#: Seconds between two sends (past the short governor's 0.1 s).
SPACING = 0.5
#: The backlog.
BACKLOG = 10_000
PATIENCE = 60.0
#: When the backlog's `attend run` said its sensors run (seconds after its start; set by `_backlog`).
STARTED = float("nan")
FAST = ("engagement:\n  absolute_refractory: 0\ngovernor:\n  event: {cooldown: 0.1, limit: 1000, window: 60}\n"
        "  message: {cooldown: 0.1, limit: 1000, window: 60}\n")


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


def _machine(root: Path, url: str | None, remote: str) -> tuple[dict[str, str], Path]:
    env = _env(root)
    _quiet_shipped(root)
    (root / "config" / "attend" / "sensors" / "messages.yaml").unlink()
    peers = f"peers:\n  transport: nats\n  nats:\n    url: {url}\n" if url else ""
    (root / "config" / "attend" / "config.yaml").write_text(peers + FAST)
    project = root / "api"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", remote], check=True)
    return env, project


def _rounds(sender_env: dict[str, str], sender_project: Path, receiver_env: dict[str, str],
            receiver: Path) -> tuple[list[float], list[float]]:
    """Start b on the receiving machine, then time ROUNDS posts from the sending one: to the message's file in
    the receiving machine's peers folder (the transport's own part), and to its line."""
    import glob

    from attend.peers.mailbox import Message, peers_dir
    from attend.peers.transport import open_mailbox

    session = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "b"], cwd=receiver,
                               env=receiver_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(session, lines), daemon=True).start()
    mailbox = open_mailbox(sender_env)
    to = mailbox.project_key(sender_project)
    out, landed = [], []
    folder = str(peers_dir(receiver_env))
    try:
        def post(text: str) -> str:
            message = Message(mailbox.new_id(), "a", "session", to, to, None, None, text, time.time())
            mailbox.post(message)
            return message.id

        _wait_line(lines, post("warm"))  # b has its baseline and its cold start
        for n in range(ROUNDS):
            time.sleep(SPACING)
            sent = time.perf_counter()
            mid = post(f"round {n}")
            while not glob.glob(f"{folder}/p-*/{mid}.json"):
                time.sleep(0.0005)
            landed.append(time.perf_counter() - sent)
            out.append(_wait_line(lines, mid) - sent)
    finally:
        session.terminate()
        session.wait(timeout=PATIENCE)
    return out, landed


def _consumer_idle(url: str, name: str) -> bool:
    import nats

    async def go() -> bool:
        nc = await nats.connect(url)
        try:
            info = await nc.jetstream().consumer_info("ATTEND_PEERS", name)
            return info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.stream_seq > 0
        except Exception:  # noqa: BLE001 - not made yet
            return False
        finally:
            await nc.close()
    return asyncio.run(go())


def _backlog(url: str, root: Path) -> tuple[float, float]:
    import nats

    from attend.peers.machine import identity_hash, machine_id, project_identity

    env, project = _machine(root / "late", url, "git@github.com:ada/backlog.git")
    identity = project_identity(project, env)
    subject = f"attend.peers.p.{identity_hash(identity)}"
    start = int(time.time() * 1000) - BACKLOG

    def body(n: int) -> dict:
        mid = f"{start + n:013d}-{n:06x}"
        return {"id": mid, "from": "a", "from_kind": "session", "project": identity, "to": identity,
                "channel": None, "re": None, "text": f"backlog {n}", "ts": (start + n) / 1000}

    async def publish() -> None:
        nc = await nats.connect(url)
        js = nc.jetstream()
        for n in range(BACKLOG):
            data = body(n)
            await js.publish(subject, json.dumps(data).encode(), headers={"Nats-Msg-Id": data["id"]})
        await nc.close()

    asyncio.run(publish())
    consumer = f"m-{machine_id(env)}-{identity_hash(identity)}"
    started = time.perf_counter()
    session = subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", "late"], cwd=project, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    up: list[float] = []

    def watch() -> None:
        assert session.stderr is not None  # started with stderr=PIPE
        for line in session.stderr:
            if "sensor(s) running" in line and not up:
                up.append(time.perf_counter() - started)

    threading.Thread(target=watch, daemon=True).start()
    try:
        while not _consumer_idle(url, consumer):
            if time.perf_counter() - started > PATIENCE:
                raise RuntimeError("the backlog was not drained")
            time.sleep(0.05)
        drained = time.perf_counter() - started
    finally:
        session.terminate()
        session.wait(timeout=PATIENCE)
    global STARTED
    STARTED = up[0] if up else float("nan")
    # The floor of any folder with a file per message: the same 10,000 files written whole (temporary file,
    # rename), with no parsing, no server and no fsync, in a folder of their own.
    import os

    floor = root / "floor"
    floor.mkdir()
    began = time.perf_counter()
    for n in range(BACKLOG):
        data = body(n)
        tmp = floor / f".{data['id']}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.write(fd, json.dumps(data).encode())
        os.close(fd)
        os.replace(tmp, floor / f"{data['id']}.json")
    return drained, time.perf_counter() - began


def _bridge(url: str) -> tuple[float, float]:
    from attend.peers.natslink import Link, NatsSettings

    link = Link(NatsSettings(urls=(url,)))

    async def nothing() -> None:
        return None

    try:
        link.publish("attend.peers.bench", b"{}", "warm")
        calls, publishes = [], []
        for n in range(200):
            began = time.perf_counter()
            link.call(nothing)
            calls.append(time.perf_counter() - began)
            began = time.perf_counter()
            link.publish("attend.peers.bench", b"{}", f"bench-{n}")
            publishes.append(time.perf_counter() - began)
    finally:
        link.close()
    return statistics.median(calls), statistics.median(publishes)


def main() -> None:
    from nats_rig import NatsServer

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = NatsServer(root / "nats")
        try:
            files_env, files_project = _machine(root / "files", None, "git@github.com:ada/api.git")
            files, files_landed = _rounds(files_env, files_project, files_env, files_project)
            laptop_env, laptop_project = _machine(root / "laptop", server.url, "git@github.com:ada/api.git")
            devbox_env, devbox_project = _machine(root / "devbox", server.url, "https://github.com/ada/api")
            across, across_landed = _rounds(laptop_env, laptop_project, devbox_env, devbox_project)
            call, publish = _bridge(server.url)
            drained, written = _backlog(server.url, root)
        finally:
            server.stop()
    base = statistics.median(files)
    report(f"files transport: send -> line, one machine (baseline, median of {ROUNDS})", base, "s")
    report(f"files transport: send -> line (worst of {ROUNDS})", max(files), "s")
    median = statistics.median(across)
    report(f"nats transport: send -> line across two machines (median of {ROUNDS})", median, "s",
           note=f"{median / base:.2f}x the files transport; goal <= 0.3 s")
    report(f"nats transport: send -> line across two machines (worst of {ROUNDS})", max(across), "s",
           note=f"{max(across) / max(files):.2f}x the files transport's worst")
    here = statistics.median(files_landed)
    report("files transport: send -> file in the peers folder (baseline, median)", here * 1e3, "ms")
    there = statistics.median(across_landed)
    report("nats transport: send -> file in the other machine's folder (median)", there * 1e3, "ms",
           note=f"{there / here:.1f}x the files transport; the rest of send -> line is the sensor's wake, as above")
    report("bridge: one call to the asyncio thread and back (median of 200)", call * 1e6, "us")
    report("bridge: one publish stored by the server (median of 200)", publish * 1e3, "ms",
           note=f"{publish / call:.0f}x the bare call")
    report(f"{BACKLOG} files written whole, nothing else (baseline: the floor)", written, "s")
    report(f"{BACKLOG} waiting messages drained by a starting attend run", drained, "s",
           note=f"{drained / written:.2f}x the floor; goal <= 2 s")
    report("  of which attend run's start until its sensors run", STARTED, "s")
