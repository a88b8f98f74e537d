"""Peers across machines: two machines (two XDG homes, each its own machine id) on one real `nats-server -js`.

One server per module (tests/nats_rig.py: a port the kernel picks, a temporary store, ready on its own
`Server is ready`). Each machine has a clone of one repository (`github.com/ada/api`, by ssh on one and by
https on the other: one project identity), its own config.yaml choosing the nats transport, and real
`attend run` sessions with only the messages (and, where a test says, peers) sensors on. Senders are
`attend peers ...` in the sender's home (in-process, `run_in_process`, with that home's environment).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from daemon_rig import DaemonProcess, query, sensors_json, wait_until
from tests.conftest import Home, run_in_process

from nats_rig import NatsServer, machine_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    nats = NatsServer(tmp_path_factory.mktemp("nats"))
    yield nats
    nats.stop()


class Machine:
    """One machine: an XDG home with a clone of the shared repository as its project."""

    def __init__(self, root: Path, server: NatsServer, remote: str, *, sensors: tuple[str, ...] = ("messages",),
                 config: str | None = None) -> None:
        self.home = Home(root=root / "home", config=root / "home" / ".config", data=root / "home" / ".local/share",
                         state=root / "home" / ".local/state", cache=root / "home" / ".cache", project=root / "api")
        for folder in (self.home.config, self.home.data, self.home.state, self.home.cache, self.home.project):
            folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.home.project)], check=True)
        subprocess.run(["git", "-C", str(self.home.project), "remote", "add", "origin", remote], check=True)
        shipped = Path(__file__).resolve().parents[2] / "src" / "attend" / "sensors.d"
        for path in sorted(shipped.glob("*.yaml")):
            if not path.name.endswith(".test.yaml") and path.stem not in sensors:
                self.home.write_user_sensor(path.stem, "spec: 1\nenabled: false\n")
        self.home.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.home.config_file.write_text(config if config is not None else machine_config(server.url))
        self.daemons: list[DaemonProcess] = []

    def peers(self, *args: str, session: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = self.home.env(**({"ATTEND_SESSION": session} if session else {}))
        return run_in_process(["peers", *args], env=env, cwd=cwd or self.home.project)

    def send(self, *args: str, session: str = "a") -> str:
        done = self.peers("send", *args, session=session)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def run(self, session: str, **env: str) -> DaemonProcess:
        """`attend run --session SESSION` here, once its messages sensor has its baseline and its cold start."""
        daemon = DaemonProcess(self.home, "--session", session, env=env)
        self.daemons.append(daemon)
        wait_until(lambda: any("sensor(s) running" in line or "attached" in line for line in daemon.stderr),
                   what=f"{session} runs")
        wait_until(lambda: sensors_json(self.home)["messages"]["last_poll"] is not None, what="the baseline")
        wait_until(lambda: query(self.home, "SELECT 1 FROM session_seen WHERE session = ? AND item = ?",
                                 session, ":cold-start"), what=f"{session}'s cold start")
        return daemon

    def close(self) -> None:
        for daemon in self.daemons:
            if daemon.proc.poll() is None:
                daemon.proc.kill()
            daemon.proc.wait(timeout=30)
            for reader in daemon._readers:
                reader.join(timeout=5)


@pytest.fixture
def machines(tmp_path, server):
    made: list[Machine] = []

    def make(name: str, remote: str = "git@github.com:ada/api.git", **kwargs) -> Machine:
        machine = Machine(tmp_path / name, server, remote, **kwargs)
        made.append(machine)
        return machine

    yield make
    for machine in made:
        machine.close()


def message_ids(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[4] for line in lines if line.startswith("[attend sensor=messages "))


def test_a_message_sent_on_one_machine_is_one_line_on_the_other_machines_session(machines) -> None:
    laptop = machines("laptop", "git@github.com:ada/api.git")
    devbox = machines("devbox", "https://github.com/ada/api")  # another clone of the same repository
    b = devbox.run("b")
    wait_until(lambda: "b" in laptop.peers("list").stdout, what="b in the laptop's peers list")
    mid = laptop.send("--to", str(laptop.home.project), "please rebase onto main")
    line = f"[attend sensor=messages priority=high] message {mid} from a to this project: please rebase onto main"
    b.wait_for(lambda lines: line in lines)
    inbox = devbox.peers("inbox", "--json", session="b")
    [stored] = json.loads(inbox.stdout)
    assert (stored["id"], stored["to"], stored["project"]) == (mid, "github.com/ada/api", "github.com/ada/api")

    # b answers from the devbox: the reply reaches the laptop's project (a's), with `re`.
    a = laptop.run("a")
    answer = devbox.peers("reply", "rebased", session="b")
    assert answer.returncode == 0, answer.stderr
    reply_id = answer.stdout.strip()
    a.wait_for(lambda lines: any(reply_id in x and "from b" in x for x in lines))
    [back] = [m for m in json.loads(laptop.peers("inbox", "--json", session="a").stdout) if m["id"] == reply_id]
    assert back["re"] == mid and back["text"] == "rebased"
    assert message_ids(b.stdout)[mid] == 1 and message_ids(a.stdout)[reply_id] == 1
