"""Peers: `attend peers inbox` and `attend peers list` with 10,000 stored messages, against CLI start-up.

A temporary XDG home holds 10,000 messages (9,000 on the open channel, 1,000 addressed to the
project) written the way `attend peers send` writes them, and 20 live sessions. Each figure is the
whole process, best of interleaved rounds, as a ratio against `attend peers whoami` (the same CLI's
start-up: argparse, session resolution) and `python -c pass` in the same run. Goal (issue 11): `inbox`
under 200 ms with 10,000 messages; it parses only the newest 20 files (`Mailbox.newest_visible`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_runtime import _env
from benchmarks.timing import best_of, report

#: Messages stored before timing.
MESSAGES = 10_000
#: Live sessions (heartbeats) for `peers list`.
SESSIONS = 20
#: Interleaved rounds; the best of each command is kept.
ROUNDS = 9


def _fill(env: dict[str, str], project: Path) -> None:
    from attend.peers.mailbox import Mailbox, Message, peers_dir

    mailbox = Mailbox(peers_dir(env))
    start = time.time() - MESSAGES
    for i in range(MESSAGES):
        ts = start + i
        to = str(project) if i % 10 == 0 else None
        mailbox.post(Message(f"{int(ts * 1000):013d}-{i:06x}", f"s{i % 7}", "session", "/elsewhere", to,
                             None if to else "open", None, f"message {i}: rebase onto main please", ts))
    for i in range(SESSIONS):
        mailbox.beat(f"live-{i}", project, pid=None, started=time.time())


def main() -> None:
    """Print the inbox and list figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = _env(root)
        env["ATTEND_SESSION"] = "reader"
        project = root / "project"
        project.mkdir()
        _fill(env, project)

        def attend(*args: str) -> Callable[[], None]:
            def run() -> None:
                subprocess.run([sys.executable, "-m", "attend", "peers", *args], env=env, check=True,
                               capture_output=True, cwd=project)
            return run

        def python() -> None:
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True, capture_output=True)

        commands = {"pass": python, "whoami": attend("whoami"), "inbox": attend("inbox"),
                    "inbox --all": attend("inbox", "--all"), "list": attend("list")}
        for run in commands.values():
            run()  # writes the bytecode of every module each command imports
        best = {name: float("inf") for name in commands}
        for _ in range(ROUNDS):  # interleaved: a busy machine slows every command of a round alike
            for name, run in commands.items():
                best[name] = min(best[name], best_of(run, repeat=1))
        stored = sum(1 for _ in (root / "cache" / "attend" / "peers").rglob("*.json"))
        report("messages stored", stored, "")
        report("attend peers inbox, 10,000 stored (goal < 200 ms)", best["inbox"] * 1000, "ms")
        report("  inbox vs `attend peers whoami` (CLI start-up)", best["inbox"] / best["whoami"], "x",
               note=f"whoami {best['whoami'] * 1000:.1f} ms")
        report("  inbox vs `python -c pass`", best["inbox"] / best["pass"], "x",
               note=f"python {best['pass'] * 1000:.1f} ms")
        report("attend peers inbox --all (parses all 10,000)", best["inbox --all"] * 1000, "ms")
        report(f"attend peers list, {SESSIONS} live sessions", best["list"] * 1000, "ms")
        report("  list vs `attend peers whoami`", best["list"] / best["whoami"], "x")
