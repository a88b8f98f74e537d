"""Peers across machines: two machines (two XDG homes, each its own machine id) on one real `nats-server -js`.

One server per module (tests/nats_rig.py: a port the kernel picks, a temporary store, ready on its own
`Server is ready`). Each machine has a clone of one repository (`github.com/ada/api`, by ssh on one and by
https on the other: one project identity), its own config.yaml choosing the nats transport, and real
`attend run` sessions with only the messages (and, where a test says, peers) sensors on. Senders are
`attend peers ...` in the sender's home (in-process, `run_in_process`, with that home's environment).
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from daemon_rig import DaemonProcess, query, sensors_json, wait_until
from tests.conftest import Home, run_in_process

from attend.peers.mailbox import Mailbox
from nats_rig import NatsServer, machine_config, operator_mode

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
        # Each test its own repository on the shared server (`ada/api` becomes `ada/api-<test>`): a machine's
        # new consumer is handed everything the stream holds for its project, other tests' messages included.
        remote = remote.replace("ada/api", f"ada/api-{tmp_path.name}").replace("ada/web", f"ada/web-{tmp_path.name}")
        machine = Machine(tmp_path / name, server, remote, **kwargs)
        made.append(machine)
        return machine

    yield make
    for machine in made:
        machine.close()


def identity(machine: Machine) -> str:
    from attend.peers.machine import project_identity

    return project_identity(machine.home.project, machine.home.env())


def stored_machine(machine: Machine) -> str:
    return (machine.home.state / "attend" / "machine-id").read_text().strip()


#: The user the tests run as: whom a message is sent for by default (`on_behalf_of`).
USER = pwd.getpwuid(os.getuid()).pw_name


def message_ids(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[4] for line in lines if line.startswith("[attend sensor=messages "))


def test_a_message_sent_on_one_machine_is_one_line_on_the_other_machines_session(machines) -> None:
    laptop = machines("laptop", "git@github.com:ada/api.git")
    devbox = machines("devbox", "https://github.com/ada/api")  # another clone of the same repository
    b = devbox.run("b")
    wait_until(lambda: "b" in laptop.peers("list").stdout, what="b in the laptop's peers list")
    mid = laptop.send("--to", str(laptop.home.project), "please rebase onto main")
    line = (f"[attend sensor=messages priority=high] message {mid} [from_kind=session from_id=a on_behalf_of={USER} "
            f'to={identity(devbox)}]: please rebase onto main (attend peers reply {mid} "..." answers it)')
    b.wait_for(lambda lines: line in lines)
    inbox = devbox.peers("inbox", "--json", session="b")
    [stored] = json.loads(inbox.stdout)
    assert (stored["id"], stored["to"], stored["project"]) == (mid, identity(devbox), identity(laptop))
    assert identity(devbox).startswith("github.com/ada/api-")
    me = json.loads(devbox.peers("whoami", "--json", session="b").stdout)
    assert me["identity"] == identity(devbox) and me["machine"] == stored_machine(devbox)

    # b answers from the devbox: the reply reaches the laptop's project (a's), with `re`.
    a = laptop.run("a")
    answer = devbox.peers("reply", "rebased", session="b")
    assert answer.returncode == 0, answer.stderr
    reply_id = answer.stdout.strip()
    a.wait_for(lambda lines: any(reply_id in x and "from_id=b " in x for x in lines))
    [back] = [m for m in json.loads(laptop.peers("inbox", "--json", session="a").stdout) if m["id"] == reply_id]
    assert back["re"] == mid and back["text"] == "rebased"
    assert message_ids(b.stdout)[mid] == 1 and message_ids(a.stdout)[reply_id] == 1


# -- what the server holds, read with nats-py itself (the tests' explicit signals) --------------------------


def consumer_state(server: NatsServer, machine: Machine) -> tuple[int, int, int]:
    """(messages not yet delivered, delivered but not acked, deliveries made) of the machine's consumer for its project."""
    import asyncio

    import nats

    from attend.peers.machine import identity_hash, machine_id, project_identity

    name = f"m-{machine_id(machine.home.env())}-{identity_hash(project_identity(machine.home.project, machine.home.env()))}"

    async def go() -> tuple[int, int, int]:
        nc = await nats.connect(server.url)
        try:
            info = await nc.jetstream().consumer_info("ATTEND_PEERS", name)
            return info.num_pending, info.num_ack_pending, info.delivered.consumer_seq
        finally:
            await nc.close()
    return asyncio.run(go())


def stream_texts(server: NatsServer) -> list[str]:
    """The text of every message in the stream, in the order it was stored."""
    import asyncio

    import nats

    async def go() -> list[str]:
        nc = await nats.connect(server.url)
        try:
            js = nc.jetstream()
            info = await js.stream_info("ATTEND_PEERS")
            out = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                msg = await js.get_msg("ATTEND_PEERS", seq)
                out.append(json.loads(msg.data)["text"])
            return out
        finally:
            await nc.close()
    return asyncio.run(go())


def test_a_channel_reaches_its_members_on_every_machine(machines) -> None:
    laptop = machines("laptop")
    devbox = machines("devbox", "https://github.com/ada/api")
    b = devbox.run("b")
    # Channels are the server's, shared by every project: this test's own name keeps other tests' off it.
    joined = devbox.peers("join", "release-this-test", session="b")
    assert joined.returncode == 0, joined.stderr
    assert json.loads(laptop.peers("channels", "--json").stdout)["release-this-test"] == ["b"]
    mid = laptop.send("--channel", "release-this-test", "tagging 2.0 now")
    line = (f"[attend sensor=messages priority=high] message {mid} [from_kind=session from_id=a on_behalf_of={USER} "
            f'to=@release-this-test]: tagging 2.0 now (attend peers reply {mid} "..." answers it)')
    b.wait_for(lambda lines: line in lines)
    assert message_ids(b.stdout)[mid] == 1
    refused = laptop.peers("send", "--channel", "nobody-here", "hello?", session="a")
    assert refused.returncode == 1 and "no other live member on channel nobody-here" in refused.stderr


def test_to_takes_another_machines_project_by_the_identity_peers_list_shows(machines, tmp_path) -> None:
    laptop = machines("laptop")
    devbox = machines("devbox", "git@github.com:ada/web.git")  # a project the laptop has no clone of
    b = devbox.run("b")
    rows = json.loads(laptop.peers("list", "--json").stdout)
    web = identity(devbox)
    [row] = [r for r in rows if r["session"] == "b" and r["project"] == web]
    assert row["project"] == web and web.startswith("github.com/ada/web-") and row["machine"] != ""
    assert row["path"] == str(devbox.home.project.resolve())
    mid = laptop.send("--to", web, "your API changed")
    b.wait_for(lambda lines: any(mid in x for x in lines))
    unknown = laptop.peers("send", "--to", "github.com/ada/nothing", "anyone?", session="a")
    assert unknown.returncode == 1 and "not a directory" in unknown.stderr


@pytest.fixture
def own_server(tmp_path):
    """A server of the test's own: nothing another test sent (a channel's messages reach every project) is on it."""
    nats = NatsServer(tmp_path / "own-nats")
    yield nats
    nats.stop()


def test_a_receiver_killed_between_writing_a_message_and_acking_it_shows_it_once(machines, own_server) -> None:
    server = own_server
    laptop = machines("laptop", config=machine_config(server.url))
    devbox = machines("devbox", "https://github.com/ada/api", config=machine_config(server.url))
    b = devbox.run("b", ATTEND_CRASH_AT="peer-handed-over:1")
    mid = laptop.send("--to", str(laptop.home.project), "do not lose me")
    assert b.proc.wait(timeout=60) == -signal.SIGKILL  # killed after the file was written, before the ack
    assert consumer_state(server, devbox)[1] == 1  # delivered, not acked
    again = devbox.run("b")
    again.wait_for(lambda lines: any(mid in x for x in lines))
    # The server delivers it again after its ack wait; the file already there drops the repeat and acks it.
    wait_until(lambda: consumer_state(server, devbox) == (0, 0, 2), what="the redelivery acked")
    assert message_ids(b.stdout + again.stdout)[mid] == 1
    assert devbox.peers("inbox", "--json", session="b").stdout.count(mid) == 1


def test_a_server_restart_loses_nothing_waiting_or_sent_after_it(machines, own_server) -> None:
    server = own_server  # its own: the delivery counts below are of this test's messages alone
    laptop = machines("laptop", config=machine_config(server.url))
    devbox = machines("devbox", "https://github.com/ada/api", config=machine_config(server.url))
    waiting = laptop.peers("send", "--to", str(laptop.home.project), "sent while nobody ran", session="a")
    assert waiting.returncode == 0 and "waits on the server" in waiting.stderr
    first = waiting.stdout.strip()
    server.restart()
    b = devbox.run("b")  # its cold start hands over what waited
    b.wait_for(lambda lines: any(first in x for x in lines))
    server.restart()  # under a running session: its mirror reconnects and resumes from its consumer
    later = laptop.send("--to", str(laptop.home.project), "sent after the second restart")
    b.wait_for(lambda lines: any(later in x for x in lines))
    counts = message_ids(b.stdout)
    assert counts[first] == 1 and counts[later] == 1
    # Each delivered once: no pull request made while the server was away took a message for nobody (it
    # would have come again only after the consumer's ack wait).
    wait_until(lambda: consumer_state(server, devbox)[:2] == (0, 0), what="both acked")
    assert consumer_state(server, devbox)[2] == 2


def test_sends_with_the_server_down_are_spooled_and_published_in_order_when_it_returns(machines, own_server) -> None:
    server = own_server  # its own: the delivery counts below are of this test's messages alone
    laptop = machines("laptop", sensors=("messages", "peers"), config=machine_config(server.url))
    devbox = machines("devbox", "https://github.com/ada/api", config=machine_config(server.url))
    b = devbox.run("b")
    a = laptop.run("a")  # publishes the spool once the server is back
    server.stop()
    sent = []
    for n in range(3):
        done = laptop.peers("send", "--to", str(laptop.home.project), f"offline {n}", session="a")
        assert done.returncode == 0, done.stderr
        assert "unavailable: Connect call failed" in done.stderr and f"{n + 1} message(s) wait" in done.stderr
        sent.append(done.stdout.strip())
    doctor = laptop.home.attend("doctor").stdout
    assert "FAIL peers server: unavailable: Connect call failed" in doctor, doctor
    assert "warn peers spool: 3 sent message(s) wait to go out" in doctor
    for sensor in ("messages", "peers"):  # their state, in the connection's own words; never a crash
        poll = laptop.home.attend("sensors", "poll", sensor)
        assert f"sensor {sensor}: unavailable" in poll.stdout and "Connect call failed" in poll.stdout, poll.stdout
    server.start()
    b.wait_for(lambda lines: all(any(m in x for x in lines) for m in sent))
    # Each delivered to b's machine once: no pull request made while the server was away took them for a fetch
    # that had given up (they would have come again only after the consumer's ack wait).
    wait_until(lambda: consumer_state(server, devbox)[:2] == (0, 0), what="all acked")
    assert consumer_state(server, devbox)[2] == len(sent)
    texts = [t for t in stream_texts(server) if t.startswith("offline ")]
    assert texts == ["offline 0", "offline 1", "offline 2"]
    assert all(message_ids(b.stdout)[m] == 1 for m in sent)
    assert not list((laptop.home.state / "attend" / "peers-spool").glob("*.json"))
    assert a.proc.poll() is None


def test_a_refused_credential_is_auth_failed_in_the_servers_words(machines, tmp_path) -> None:
    guarded = NatsServer(tmp_path / "guarded", "--user", "ada", "--pass", "right")
    try:
        config = machine_config(guarded.url, extra="    user: ada\n    password: wrong-s3cret\n")
        laptop = machines("laptop", config=config)
        doctor = laptop.home.attend("doctor")
        assert "FAIL peers server: auth_failed: Authorization Violation" in doctor.stdout
        assert "wrong-s3cret" not in doctor.stdout + doctor.stderr
        poll = laptop.home.attend("sensors", "poll", "messages")
        assert "auth_failed" in poll.stdout and "Authorization Violation" in poll.stdout
        listed = laptop.peers("list")
        assert listed.returncode == 1 and "auth_failed: Authorization Violation" in listed.stderr
        laptop.home.config_file.write_text(machine_config(guarded.url, extra="    user: ada\n    password: right\n"))
        assert "ok   peers server: connected to 127.0.0.1" in laptop.home.attend("doctor").stdout
    finally:
        guarded.stop()


def test_a_backlog_of_ten_thousand_messages_reaches_a_starting_session_as_one_cold_start(machines, server) -> None:
    import asyncio

    import nats

    from attend.peers.machine import identity_hash

    devbox = machines("devbox", "https://github.com/ada/api")
    total = 10_000
    project = identity(devbox)

    async def publish() -> None:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        subject = f"attend.peers.p.{identity_hash(project)}"
        start = int(time.time() * 1000) - total
        for n in range(total):
            mid = f"{start + n:013d}-{n:06x}"
            body = {"id": mid, "from": "a", "from_kind": "session", "project": project,
                    "to": project, "channel": None, "re": None, "text": f"backlog {n}",
                    "ts": (start + n) / 1000}
            await js.publish(subject, json.dumps(body).encode(), headers={"Nats-Msg-Id": mid})
        await nc.close()

    asyncio.run(publish())
    b = devbox.run("b")
    wait_until(lambda: consumer_state(server, devbox)[:2] == (0, 0), what="the backlog drained")
    tray = devbox.home.cache / "attend" / "peers" / f"p-{identity_hash(project)}"
    assert len(Mailbox(tray.parent).read_folder(tray)) == total
    # Stored a batch file per fetch, not a file per message (creating 10,000 files took seconds on a busy disk).
    assert len(list(tray.glob("*.jsonl"))) < total / 100
    # Mirrored before the sensor's baseline, the cold start hands over the newest 50 and counts the rest in one
    # line; mirrored after it, the sensor's digest makes the burst one line. Never ten thousand lines.
    b.wait_for(lambda lines: any("earlier messages not shown" in x or "new messages from a" in x for x in lines))
    assert len(message_ids(b.stdout)) <= 51


def test_peers_list_shows_every_machine_and_a_dead_machines_sessions_leave_within_the_ttl(machines) -> None:
    laptop = machines("laptop")
    devbox = machines("devbox", "https://github.com/ada/api")
    a = laptop.run("a-list")
    b = devbox.run("b-list")
    rows = {r["session"]: r for r in json.loads(laptop.peers("list", "--json").stdout)}
    assert set(rows) >= {"a-list", "b-list"} and rows["a-list"]["machine"] != rows["b-list"]["machine"]
    assert rows["b-list"]["project"] == rows["a-list"]["project"] == identity(laptop)
    b.stop(signal.SIGKILL)  # the machine dies: nothing removes its key, the bucket's TTL does

    def listed() -> set[str]:
        return {r["session"] for r in json.loads(laptop.peers("list", "--json").stdout)}
    # Gone while a-list, beating on, is still listed: a list that came back empty is no sign of the TTL.
    wait_until(lambda: {"a-list", "b-list"} & listed() == {"a-list"}, what="b-list gone from the laptop's list")
    assert a.proc.poll() is None


def test_peers_list_reads_every_live_session_each_time(machines) -> None:
    # peers list and channels read the buckets with nats-py's watchall, which said now and then that it had read
    # every key before the first one (the server had delivered them before the watcher asked how many were
    # pending): no session listed, no channel member (3 lists of 300 here). And each watch left a consumer on
    # the server for 5 minutes: past about a thousand lists the server refused new ones.
    laptop = machines("laptop")
    devbox = machines("devbox", "https://github.com/ada/api")
    laptop.run("a-each")
    devbox.run("b-each")
    joined = devbox.peers("join", "each-this-test", session="b-each")
    assert joined.returncode == 0, joined.stderr
    for n in range(1200):
        listed = laptop.peers("list", "--json")
        assert listed.returncode == 0, f"list {n}: {listed.stderr}"
        assert {"a-each", "b-each"} <= {r["session"] for r in json.loads(listed.stdout)}, f"list {n}"
        if n % 100 == 0:
            assert json.loads(laptop.peers("channels", "--json").stdout)["each-this-test"] == ["b-each"]


def publish_raw(server: NatsServer, subject: str, bodies: list[dict]) -> None:
    """Publish `bodies` as they are (what anyone holding the credentials can put on the stream)."""
    import asyncio

    import nats

    async def go() -> None:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        for n, body in enumerate(bodies):
            await js.publish(subject, json.dumps(body).encode(), headers={"Nats-Msg-Id": f"raw-{time.time_ns()}-{n}"})
        await nc.close()
    asyncio.run(go())


def test_a_message_from_the_server_cannot_name_a_file_outside_the_peers_folder_or_a_folder_to_run_git_in(
        machines, server, tmp_path) -> None:
    from attend.peers.machine import identity_hash

    devbox = machines("devbox", "https://github.com/ada/api")
    b = devbox.run("b")
    project = identity(devbox)
    base = {"from": "mallory", "from_kind": "session", "project": "x", "re": None, "ts": time.time()}
    publish_raw(server, f"attend.peers.p.{identity_hash(project)}", [
        {**base, "id": "../../../../escaped", "to": project, "channel": None, "text": "path"},
        {**base, "id": "1700000000000-aaaaaa", "to": project, "channel": "../../escaped", "text": "channel"},
        {**base, "id": "1700000000001-aaaaab", "to": str(tmp_path), "channel": None, "text": "a folder as to"},
        {**base, "id": "1700000000002-aaaaac", "to": project, "channel": None, "text": "the honest one"},
    ])
    b.wait_for(lambda lines: any("1700000000002-aaaaac" in x for x in lines))
    wait_until(lambda: consumer_state(server, devbox)[:2] == (0, 0), what="all four settled")
    assert not list(tmp_path.rglob("escaped*")) and not list(devbox.home.root.rglob("escaped*"))
    # `to` naming a folder is an identity like any other: its own tray, nothing resolved, no git run there.
    assert (devbox.home.cache / "attend" / "peers" / f"p-{identity_hash(str(tmp_path))}" /
            "1700000000001-aaaaab.json").exists()
    shown = message_ids(b.stdout)
    assert shown["1700000000002-aaaaac"] == 1
    assert not {"1700000000000-aaaaaa", "1700000000001-aaaaab"} & set(shown)  # another project's, and terminated


def test_a_session_started_with_the_server_down_receives_once_it_is_up(machines, own_server) -> None:
    server = own_server
    laptop = machines("laptop", config=machine_config(server.url))
    devbox = machines("devbox", "https://github.com/ada/api", config=machine_config(server.url))
    server.stop()
    b = DaemonProcess(devbox.home, "--session", "b")
    devbox.daemons.append(b)
    wait_until(lambda: any("sensor(s) running" in line for line in b.stderr), what="b runs")
    wait_until(lambda: sensors_json(devbox.home)["messages"]["state"] == "unavailable", what="unavailable")
    assert "Connect call failed" in sensors_json(devbox.home)["messages"]["message"]
    server.start()
    mid = laptop.send("--to", str(laptop.home.project), "you came up after the server")
    b.wait_for(lambda lines: any(mid in x for x in lines))
    assert message_ids(b.stdout)[mid] == 1


def test_a_three_node_cluster_loses_no_message_when_any_one_node_dies(machines, tmp_path) -> None:
    from nats_rig import NatsCluster

    cluster = NatsCluster(tmp_path / "cluster")
    try:
        cluster.wait_for_jetstream()
        config = machine_config(cluster.urls, extra="    replicas: 3\n")
        laptop = machines("laptop", config=config)
        devbox = machines("devbox", "https://github.com/ada/api", config=config)
        b = devbox.run("b")
        # A send while the cluster elects a new leader for the stream (the dead node led it) waits in the spool;
        # the laptop's running session publishes it once the election is over.
        laptop.run("a")
        sent = [laptop.send("--to", str(laptop.home.project), "before any loss")]
        b.wait_for(lambda lines: any(sent[0] in x for x in lines))
        for n, node in enumerate(cluster.nodes):  # each node in turn, so the ones b and the laptop use die too
            node.stop(signal.SIGKILL)
            sent.append(laptop.send("--to", str(laptop.home.project), f"with node {n} dead"))
            b.wait_for(lambda lines: any(sent[-1] in x for x in lines))
            node.start()
            cluster.wait_for_jetstream()
        assert all(message_ids(b.stdout)[m] == 1 for m in sent)
    finally:
        cluster.stop()


def test_a_session_starting_on_another_machine_wakes_the_peers_sensor_and_is_news_here(machines) -> None:
    # Session ids of their own: the peers sensor keys sessions by id, and other tests' `b` may still be live on
    # the module's server (another machine's, until the presence TTL).
    laptop = machines("laptop", sensors=("messages", "peers"))
    devbox = machines("devbox", "https://github.com/ada/api")
    a = laptop.run("a-wake")
    wait_until(lambda: sensors_json(laptop.home)["peers"]["last_poll"] is not None, what="the peers baseline")
    marker = laptop.home.cache / "attend" / "peers" / "heartbeat" / ".remote"
    before = marker.stat().st_mtime_ns if marker.exists() else 0
    devbox.run("b-wake")
    # The presence bucket's watch on the laptop touched the heartbeat folder the peers sensor wakes on.
    wait_until(lambda: marker.exists() and marker.stat().st_mtime_ns != before, what="the laptop's wake")
    try:
        a.wait_for(lambda lines: any("session b-wake started in this project" in x for x in lines))
    except AssertionError:
        print(sensors_json(laptop.home)["peers"])
        print(laptop.home.attend("sensors", "history", "peers").stdout)
        raise


def test_a_send_retried_after_it_was_stored_is_stored_once(machines, own_server) -> None:
    """A spool entry published, then published again (the sender died after the server stored it and before
    it removed the entry): `Nats-Msg-Id` makes the server store it once."""
    from attend.peers.machine import identity_hash
    from attend.peers.transport import open_mailbox

    laptop = machines("laptop", config=machine_config(own_server.url))
    mid = laptop.send("--to", str(laptop.home.project), "only once please")
    mailbox = open_mailbox(laptop.home.env())
    spool = laptop.home.state / "attend" / "peers-spool"
    assert not list(spool.glob("*.json"))
    [stored] = json.loads(laptop.peers("inbox", "--json", session="a").stdout)
    entry = {"subject": f"attend.peers.p.{identity_hash(stored['to'])}", "message": stored}
    (spool / f"{time.time_ns():020d}-{mid}.json").write_text(json.dumps(entry))
    assert mailbox.flush() == 1  # published again, and taken off the spool
    assert stream_texts(own_server) == ["only once please"]


def test_the_stream_keeps_messages_on_file_within_its_stated_limits(machines, own_server) -> None:
    """docs/peers.md, "What is stored where": file storage, 7 days, 1 GiB (the oldest going first), and no
    message larger than attend's bound on a peer file; a retried send stored once within 10 minutes."""
    import asyncio

    import nats
    from nats.js import api

    from attend.bounds import MAX_PEER_MESSAGE_BYTES

    laptop = machines("laptop", config=machine_config(own_server.url))
    laptop.send("--to", str(laptop.home.project), "the stream is made by the first send")

    async def config() -> api.StreamConfig:
        nc = await nats.connect(own_server.url)
        try:
            return (await nc.jetstream().stream_info("ATTEND_PEERS")).config
        finally:
            await nc.close()
    made = asyncio.run(config())
    assert made.storage == api.StorageType.FILE and made.subjects == ["attend.peers.>"]
    assert (made.max_age, made.max_bytes, made.discard) == (7 * 24 * 3600, 1 << 30, api.DiscardPolicy.OLD)
    assert made.max_msg_size == MAX_PEER_MESSAGE_BYTES == 256 * 1024
    assert made.duplicate_window == 600


def test_an_nkey_seed_file_logs_in_and_a_token_from_the_environment_too_neither_ever_shown(machines, tmp_path) -> None:
    import os

    import nkeys

    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    user = nkeys.from_seed(bytearray(seed)).public_key.decode()
    conf = tmp_path / "nkey.conf"
    conf.write_text(f'authorization {{ users = [ {{ nkey: "{user}" }} ] }}\n')
    seed_file = tmp_path / "user.nk"
    seed_file.write_bytes(seed)
    keyed = NatsServer(tmp_path / "keyed", "-c", str(conf))
    token = NatsServer(tmp_path / "token", "--auth", "t0ken-s3cret")
    try:
        laptop = machines("laptop", config=machine_config(keyed.url, extra=f"    nkey: {seed_file}\n"))
        doctor = laptop.home.attend("doctor")
        assert "ok   peers server: connected to 127.0.0.1" in doctor.stdout, doctor.stdout
        assert seed.decode() not in doctor.stdout + doctor.stderr
        other = tmp_path / "other.nk"
        other.write_bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER))
        laptop.home.config_file.write_text(machine_config(keyed.url, extra=f"    nkey: {other}\n"))
        assert "FAIL peers server: auth_failed: Authorization Violation" in laptop.home.attend("doctor").stdout

        devbox = machines("devbox", config=machine_config(token.url, extra="    token: ${PEERS_TOKEN}\n"))
        env = devbox.home.env(PEERS_TOKEN="t0ken-s3cret")
        doctor = run_in_process(["doctor"], env=env, cwd=devbox.home.project)
        assert "ok   peers server: connected to 127.0.0.1" in doctor.stdout, doctor.stdout
        assert "t0ken" not in doctor.stdout + doctor.stderr
        shown = run_in_process(["settings", "get", "attend.peers.nats.token"], env=env, cwd=devbox.home.project)
        assert shown.stdout.splitlines()[0] == "${PEERS_TOKEN}"
    finally:
        keyed.stop()
        token.stop()


def _certificates(folder: Path) -> dict[str, Path]:
    """A certificate authority, a server certificate for 127.0.0.1 and a client certificate it signed (openssl)."""
    folder.mkdir()
    made = {name: folder / name for name in ("ca.pem", "ca.key", "server.pem", "server.key", "client.pem",
                                               "client.key")}

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)
    curve = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=attend test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, extensions in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
                             ("client", "extendedKeyUsage=clientAuth")):
        (folder / f"{name}.ext").write_text(extensions.replace("\\n", "\n") + "\nauthorityKeyIdentifier=keyid\n")
        openssl("req", *curve, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=attend test {name}")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "1", "-extfile", f"{name}.ext")
    return made


def test_tls_with_the_users_certificate_authority_and_client_certificate_connects_and_without_them_is_refused(
        machines, tmp_path) -> None:
    certs = _certificates(tmp_path / "certs")
    guarded = NatsServer(tmp_path / "tls", "--tls", "--tlscert", str(certs["server.pem"]), "--tlskey",
                         str(certs["server.key"]), "--tlscacert", str(certs["ca.pem"]), "--tlsverify")
    try:
        whole = (f"    tls_ca: {certs['ca.pem']}\n    tls_cert: {certs['client.pem']}\n"
                 f"    tls_key: {certs['client.key']}\n")
        laptop = machines("laptop", config=machine_config(guarded.url, extra=whole))
        doctor = laptop.home.attend("doctor")
        assert "ok   peers server: connected to 127.0.0.1" in doctor.stdout, doctor.stdout
        mid = laptop.send("--to", str(laptop.home.project), "over tls")
        assert not list((laptop.home.state / "attend" / "peers-spool").glob("*.json"))  # the server stored it
        assert json.loads(laptop.peers("inbox", "--json", session="a").stdout)[0]["id"] == mid

        # The server's certificate is not one the system trusts (the connection's words say so); and the server
        # wants the client's: it ends the handshake, and the connection's words are either the TLS alert or, when
        # the alert came after nats-py's read, only that the connection was lost (both seen).
        for extra, words in (("", ("certificate verify failed",)),
                             (f"    tls_ca: {certs['ca.pem']}\n", ("connection lost", "certificate_required"))):
            laptop.home.config_file.write_text(machine_config(guarded.url, extra=extra))
            doctor = laptop.home.attend("doctor")
            [line] = [x for x in doctor.stdout.splitlines() if "peers server:" in x]
            assert line.startswith("FAIL peers server: unavailable: ") and any(w in line.lower() for w in words), line
            assert "Traceback" not in doctor.stdout + doctor.stderr
    finally:
        guarded.stop()


def test_a_credentials_file_from_nsc_logs_in_and_one_of_an_account_the_server_does_not_know_is_refused(
        machines, tmp_path) -> None:
    conf, ada, mallory = operator_mode(tmp_path / "operator")
    trusted = NatsServer(tmp_path / "trusted", "-c", str(conf))
    try:
        laptop = machines("laptop", config=machine_config(trusted.url, extra=f"    creds: {ada}\n"))
        doctor = laptop.home.attend("doctor")
        assert "ok   peers server: connected to 127.0.0.1" in doctor.stdout, doctor.stdout
        mid = laptop.send("--to", str(laptop.home.project), "signed by ada")
        assert not list((laptop.home.state / "attend" / "peers-spool").glob("*.json"))  # the server stored it
        assert json.loads(laptop.peers("inbox", "--json", session="a").stdout)[0]["id"] == mid
        seed = ada.read_text().split("-----BEGIN USER NKEY SEED-----\n")[1].split("\n")[0]
        assert seed not in doctor.stdout + doctor.stderr

        laptop.home.config_file.write_text(machine_config(trusted.url, extra=f"    creds: {mallory}\n"))
        doctor = laptop.home.attend("doctor")
        assert "FAIL peers server: auth_failed: Authorization Violation" in doctor.stdout, doctor.stdout
        assert "Traceback" not in doctor.stdout + doctor.stderr
    finally:
        trusted.stop()

