"""MCP resources (issue 26, part 2): `mcp.resource: URI` reads the resource through the shared pool."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any

import pytest
import trio
from daemon_rig import wait_until
from mcp_rig import GENEROUS, Behind, call_tool, mcp_sensor_yaml, polled_ok

from attend.errors import RuntimeFailure
from attend.runtime.kinds import PollContext
from attend.runtime.mcp.servers import McpSettings, fingerprint
from attend.spec.reader import read_mcp

if TYPE_CHECKING:
    from attend.runtime.mcp.pool import McpPool


def settings(server: Any, uri: str) -> McpSettings:
    return McpSettings(read_mcp({"server": server, "resource": uri, "timeout": GENEROUS}))


async def test_a_resource_is_read_as_the_json_of_its_text_an_unknown_one_is_exit_a_credential_error_auth_failed(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    # two tests before, a server each (an SDK server's start is ~1.2 s of CPU); one session answers both
    server = behind.inline("resources")
    _, read = await call_tool(settings(server, "items://list"), ctx)
    assert read.document == {"items": [{"id": "a", "title": "first"}]}
    behind.write_items([{"id": "b", "title": "second"}])
    _, read = await call_tool(settings(server, "items://list"), ctx)
    assert read.document == {"items": [{"id": "b", "title": "second"}]}
    # a text that is not JSON is {"text": ...}, as for a tool; no tool here declares readOnlyHint and no
    # override was given: a resource read passes no read-only gate
    _, read = await call_tool(settings(server, "items://greeting"), ctx)
    assert read.document == {"text": "hello there"}
    with pytest.raises(RuntimeFailure) as unknown:
        await call_tool(settings(server, "items://nope"), ctx)
    assert unknown.value.state == "exit" and "items://nope" in unknown.value.message
    with pytest.raises(RuntimeFailure) as expired:
        await call_tool(settings(server, "items://expired"), ctx)
    assert expired.value.state == "auth_failed"
    assert "401 Unauthorized: the access token expired" in expired.value.message
    # the session survived both error answers
    _, read = await call_tool(settings(server, "items://list"), ctx)
    assert read.document == {"items": [{"id": "b", "title": "second"}]}
    assert len(behind.starts()) == 1  # one shared session


def test_a_resource_sensors_fingerprint_names_its_uri_and_a_tool_sensors_stays_as_it_was() -> None:
    tool = McpSettings(read_mcp({"server": "s", "tool": "list"}))
    assert tool.fingerprint == fingerprint("s", "list", {})
    first, second = McpSettings(read_mcp({"server": "s", "resource": "a://1"})), McpSettings(read_mcp({"server": "s", "resource": "a://2"}))
    assert first.fingerprint != second.fingerprint


@pytest.mark.slow
def test_an_unprobed_resource_sensor_asks_for_a_check_of_a_read_of_its_resource_not_a_tool_call(
    quiet_home: Any, behind: Behind
) -> None:
    # it asked the operator to check "a call of its tool", and a resource sensor has none
    quiet_home.write_user_sensor("shelf", mcp_sensor_yaml("shelf", behind.inline("resources"), tool=None,
                                                          resource="items://list"))
    for run in (quiet_home.attend("sensors", "list"), quiet_home.attend("sensors", "poll", "shelf")):
        assert "check in another client that a read of its resource leaves the items untouched" in run.stdout, run
    assert behind.starts() == []  # neither started its server


@pytest.mark.slow
def test_attend_run_reports_a_change_behind_a_resource_polled_subscribed_or_subscribing_without_subscriptions(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    # One daemon (each a test and a daemon of its own before; a daemon imports the SDK, ~2 s of CPU), three
    # probed resource sensors on the same items: `shelf` polls every second; `watch` subscribes with an hour's
    # interval, so only the server's update can bring the read that sees the change (long before the
    # interval); `fallback` subscribes to a server that offers no subscriptions and polls at its interval.
    resource = {"tool": None, "resource": "items://list"}
    sensors = {
        "shelf": mcp_sensor_yaml("shelf", behind.inline("resources"), **resource),
        "watch": mcp_sensor_yaml("watch", behind.inline("resources"), **resource, subscribe=True)
        .replace('"interval": 1,', '"interval": "1h",'),
        "fallback": mcp_sensor_yaml("fallback", behind.inline("resources", ATTEND_TEST_NO_SUBSCRIPTIONS="1"),
                                    **resource, subscribe=True),
    }
    for name, sensor in sensors.items():
        quiet_home.write_user_sensor(name, sensor)
        probed = quiet_home.attend("sensors", "probe", name, "--confirm")
        assert probed.returncode == 0, probed.stderr
        assert "read resource items://list on resources.py twice" in probed.stdout

    def notes(out: list[str], name: str) -> list[str]:
        return [line for line in out if line.startswith(f"[attend sensor={name} ")]

    running = daemon()
    wait_until(lambda: all(polled_ok(quiet_home, name) for name in sensors), what="the baseline reads")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: all(any("new item b" in note for note in notes(out, name)) for name in sensors))
    running.stop()
    (note,) = notes(running.stdout, "shelf")
    assert "new item b: second" in note and "server=resources.py" in note


async def subscribed(ctx: PollContext, pool: McpPool, behind: Behind) -> list[str]:
    """Read items://list as sensor `shelf` and subscribe to it; the returned list collects the pool's wakes."""
    woken: list[str] = []
    pool.on_update = woken.append
    definition, _ = await call_tool(settings(behind.inline("resources"), "items://list"), ctx)
    assert await pool.subscribe(definition, "items://list", timeout=GENEROUS, user="shelf")
    return woken


async def first_wake(woken: list[str], seen: int = 0) -> None:
    """Return once the pool woke a user after the `seen` wakes in `woken` (failing the test after GENEROUS
    seconds)."""
    with trio.fail_after(GENEROUS):
        while len(woken) <= seen:
            await trio.sleep(0.02)


async def test_a_subscribed_resource_wakes_its_user_when_it_changes_and_when_the_subscription_is_lost(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    # two tests before, a server each (an SDK server's start is ~1.2 s of CPU); one subscription serves both
    woken = await subscribed(ctx, pool, behind)
    assert woken == []
    behind.write_items([{"id": "b", "title": "second"}])
    await first_wake(woken)
    assert woken[0] == "shelf"
    seen = len(woken)
    (started,) = behind.starts()
    os.kill(int(started.split()[-1]), signal.SIGKILL)  # the server dies: its stream is lost
    await first_wake(woken, seen)  # so the next read catches up
    assert woken[seen:] == ["shelf"]


async def test_a_server_without_subscriptions_leaves_the_sensor_polling(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    server = behind.inline("resources", ATTEND_TEST_NO_SUBSCRIPTIONS="1")
    definition, _ = await call_tool(settings(server, "items://list"), ctx)
    assert not await pool.subscribe(definition, "items://list", timeout=GENEROUS, user="shelf")


async def test_an_update_of_a_watched_resource_or_a_resource_below_it_wakes_its_users_and_no_other(
    ctx: PollContext, pool: McpPool
) -> None:
    from attend.runtime.mcp.pool import _Session
    from attend.runtime.mcp.servers import ServerDefinition

    woken: list[str] = []
    pool.on_update = woken.append
    session = _Session(ServerDefinition(command="unused"))
    session.watchers = {"file:///repo/docs": {"docs"}, "board://issues": {"board", "triage"}}

    def updated(uri: str) -> list[str]:  # what the session's inbound stream hands the pool (runtime/mcp/inbound.py)
        woken.clear()
        pool._updated(session, uri)
        return list(woken)

    assert updated("board://issues") == ["board", "triage"]
    assert updated("file:///repo/docs/intro.md") == ["docs"]  # a sub-resource the server names
    assert updated("file:///repo/docsets") == []  # not below it: a name that merely starts the same
    assert updated("board://issues-archive") == []
