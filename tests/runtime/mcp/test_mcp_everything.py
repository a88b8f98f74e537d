"""The real npm @modelcontextprotocol/server-everything (issue 26): resource subscriptions on the 2025
revisions (`resources/subscribe` + `notifications/resources/updated`) and streamable HTTP, from the pool and
from real `attend run` processes. The package is installed into the tests' npm cache (everything_rig.py)."""

from __future__ import annotations

import gc
import json
import os
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
from everything_rig import TEXT_RESOURCE, everything_stdio, node, text_sensor_yaml
from mcp_rig import GENEROUS, Behind, call_tool, free_port, polled_ok, serving

from attend.runtime.kinds import PollContext
from attend.runtime.mcp.servers import McpSettings
from attend.spec.reader import read_mcp
from waiting import wait_until

if TYPE_CHECKING:
    from attend.runtime.mcp.pool import McpPool


def settings(server: Any) -> McpSettings:
    return McpSettings(read_mcp({"server": server, "resource": TEXT_RESOURCE, "subscribe": True, "timeout": GENEROUS}))


async def wakes(woken: list[str], count: int) -> None:
    """Return once the pool woke users `count` times (failing the test after GENEROUS seconds)."""
    with trio.fail_after(GENEROUS):
        while len(woken) < count:
            await trio.sleep(0.02)


async def test_a_2025_server_wakes_a_subscribed_user_through_resources_subscribe(
    ctx: PollContext, pool: McpPool, behind: Behind, everything: Path
) -> None:
    woken: list[str] = []
    pool.on_update = woken.append
    definition, read = await call_tool(settings(everything_stdio(everything, updates=True, **behind.env())), ctx)
    assert read.document["text"].startswith("Resource 1: This is a plaintext resource")
    assert await pool.subscribe(definition, TEXT_RESOURCE, timeout=GENEROUS, user="clock")
    await wakes(woken, 4)  # the server's simulated updates (one a second): the 4th comes 3 s or more after
    assert set(woken) == {"clock"}
    # the subscription, past a liveness ping (every 2 s): the session held, so the wakes were the updates, not a
    # lost session's
    assert pool.live_servers() == [definition.name] and len(behind.starts()) == 1


async def test_a_lost_2025_session_wakes_its_user_at_once_and_again_after_the_backoff_to_subscribe_anew(
    ctx: PollContext, pool: McpPool, behind: Behind, everything: Path
) -> None:
    pool.restart_delay = lambda failures: 1.0
    woken: list[str] = []
    pool.on_update = woken.append
    server = everything_stdio(everything, updates=False, **behind.env())
    server["args"] = [str(Path(__file__).parent / "servers" / "everything_updates.mjs"), str(everything)]
    definition, _ = await call_tool(settings(server), ctx)
    assert await pool.subscribe(definition, TEXT_RESOURCE, timeout=GENEROUS, user="clock")
    woken.clear()  # an update may have come already
    (started,) = behind.starts()
    os.kill(int(started.split()[-1]), signal.SIGKILL)  # the server dies: the subscription is lost with it
    await wakes(woken, 2)  # at once, and once the restart backoff has passed
    assert woken[:2] == ["clock", "clock"]
    _, read = await call_tool(settings(server), ctx)  # the woken read starts the server again ...
    assert await pool.subscribe(definition, TEXT_RESOURCE, timeout=GENEROUS, user="clock")  # ... and subscribes
    assert len(behind.starts()) == 2


def probe(home: Any, name: str) -> None:
    """Probe and confirm `name`; the resource's text names the second it was read, so two immediate reads may
    straddle a second and differ (the probe then rightly refuses): probe again. In this process (no interpreter
    to start, no mcp SDK to import again: a second or two of a busy core each). Over HTTP the mcp SDK leaves the
    everything server's event streams to the garbage collector, whose ResourceWarning this test process turns
    into an error: they are collected here, with that warning ignored."""
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            probed = home.attend("sensors", "probe", name, "--confirm")
            gc.collect()
        if probed.returncode == 0:
            return
    raise AssertionError(probed.stdout + probed.stderr)


@pytest.mark.slow
def test_attend_run_reads_a_subscribed_resource_on_its_update_also_after_its_server_died_and_at_its_interval_without(
    quiet_home: Any, daemon: Any, everything: Path, behind: Behind
) -> None:
    # One daemon for what were three tests, each with a daemon of its own (a daemon imports the SDK, ~2 s of CPU).
    # `clock` subscribes with an hour's interval to the server with its updates on (one a second): only an update
    # can bring the read that sees the new text, before its server dies and after. `tick` subscribes to the
    # server as its README starts it, which accepts the subscription but sends no update: read at its interval.
    clock = everything_stdio(everything, updates=True, **behind.env())
    quiet_home.write_user_sensor("clock", text_sensor_yaml("clock", clock, interval="1h", subscribe=True))
    tick = everything_stdio(everything, updates=False)
    quiet_home.write_user_sensor("tick", text_sensor_yaml("tick", tick, interval=1, subscribe=True))
    probe(quiet_home, "clock")
    probe(quiet_home, "tick")
    probes = len(behind.starts())  # one clock server per probe (a probe may have to run again)

    def reads(out: list[str], name: str) -> list[str]:
        return [line for line in out if line.startswith(f"[attend sensor={name} ") and "read again: Resource 1" in line]

    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "clock") and len(behind.starts()) == probes + 1, what="the daemon's server")
    running.wait_for(lambda out: bool(reads(out, "clock") and reads(out, "tick")))
    assert "server=everything_updates.mjs" in reads(running.stdout, "clock")[0]  # an inline server: its program
    os.kill(int(behind.starts()[-1].split()[-1]), signal.SIGKILL)  # the subscription is lost with its server
    # the lost session wakes the sensor at once and again after the restart backoff: a read starts the server,
    # subscribes anew, and its next update (one a second) brings a line, an hour before the interval would
    wait_until(lambda: len(behind.starts()) == probes + 2, what="the server started again by a woken read")
    before = len(reads(running.stdout, "clock"))
    running.wait_for(lambda out: len(reads(out, "clock")) > before)
    running.stop()


@contextmanager
def everything_served(everything: Path, tmp_path: Path, transport: str) -> Iterator[int]:
    """The everything server over `transport` (`node dist/index.js streamableHttp|sse`, on $PORT), its output
    in the test's folder; yields the port."""
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PORT": str(port)}
    with (tmp_path / f"everything-{transport}.log").open("w") as log, \
            serving([node(), str(everything / "dist" / "index.js"), transport], port, env, log) as served:
        yield served


@pytest.fixture
def everything_http(everything: Path, tmp_path: Path) -> Iterator[int]:
    """The everything server over streamable HTTP, at /mcp."""
    with everything_served(everything, tmp_path, "streamableHttp") as served:
        yield served


# The mcp SDK's streamable HTTP client leaves the event streams of a server that answers with them (as this one
# does) to the garbage collector: a ResourceWarning per stream (ignored by Python's default filters, so a daemon
# prints nothing), which this suite's warnings-as-errors would pin on the test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_2025_server_over_streamable_http_takes_a_resources_subscribe_on_its_session(
    ctx: PollContext, pool: McpPool, everything_http: int
) -> None:
    server = {"type": "http", "url": f"http://127.0.0.1:{everything_http}/mcp"}
    definition, read = await call_tool(settings(server), ctx)
    assert read.document["text"].startswith("Resource 1: This is a plaintext resource")
    assert await pool.subscribe(definition, TEXT_RESOURCE, timeout=GENEROUS, user="clock")
    assert await pool.subscribe(definition, TEXT_RESOURCE, timeout=GENEROUS, user="other")  # one subscription, shared
    assert pool.live_servers() == [f"127.0.0.1:{everything_http}"]


@pytest.mark.slow
def test_attend_run_polls_the_everything_server_over_streamable_http_and_sse(
    quiet_home: Any, daemon: Any, everything: Path, tmp_path: Path
) -> None:
    # one daemon, a sensor on each transport: each is probed, then polled by attend run into a line of its own
    with (
        everything_served(everything, tmp_path, "streamableHttp") as http,
        everything_served(everything, tmp_path, "sse") as sse,
    ):
        servers = {"everything-http": {"type": "http", "url": f"http://127.0.0.1:{http}/mcp"},
                   "everything-sse": {"type": "sse", "url": f"http://127.0.0.1:{sse}/sse"}}
        (quiet_home.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        for transport in ("http", "sse"):
            name = f"clock-{transport}"
            quiet_home.write_user_sensor(name, text_sensor_yaml(name, f"everything-{transport}", interval=1, subscribe=False))
            probe(quiet_home, name)
        running = daemon()

        def notes(out: list[str], transport: str) -> list[str]:
            return [line for line in out if line.startswith(f"[attend sensor=clock-{transport} ")]

        running.wait_for(lambda out: all(any("read again: Resource 1" in note for note in notes(out, transport))
                                         for transport in ("http", "sse")))
        running.stop()
    for transport in ("http", "sse"):
        (note, *_) = notes(running.stdout, transport)
        assert f"server=everything-{transport}" in note, note  # named after its .mcp.json entry
