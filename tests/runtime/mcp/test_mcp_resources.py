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
from attend.runtime.mcp.config import McpSettings, fingerprint

if TYPE_CHECKING:
    from attend.runtime.mcp.pool import McpPool


def settings(server: Any, uri: str) -> McpSettings:
    return McpSettings({"server": server, "resource": uri, "timeout": GENEROUS})


async def test_a_resource_is_read_as_the_json_of_its_text_and_sees_changes_behind_it(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
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
    assert len(behind.starts()) == 1  # one shared session


async def test_an_unknown_resource_is_exit_and_a_credential_error_is_auth_failed(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    server = behind.inline("resources")
    with pytest.raises(RuntimeFailure) as unknown:
        await call_tool(settings(server, "items://nope"), ctx)
    assert unknown.value.state == "exit" and "items://nope" in unknown.value.message
    with pytest.raises(RuntimeFailure) as expired:
        await call_tool(settings(server, "items://expired"), ctx)
    assert expired.value.state == "auth_failed"
    assert "401 Unauthorized: the access token expired" in expired.value.message
    # the session survived both error answers
    _, read = await call_tool(settings(server, "items://list"), ctx)
    assert read.document == {"items": [{"id": "a", "title": "first"}]}
    assert len(behind.starts()) == 1


def test_a_resource_sensors_fingerprint_names_its_uri_and_a_tool_sensors_stays_as_it_was() -> None:
    tool = McpSettings({"server": "s", "tool": "list"})
    assert tool.fingerprint == fingerprint("s", "list", {})
    first, second = McpSettings({"server": "s", "resource": "a://1"}), McpSettings({"server": "s", "resource": "a://2"})
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


def test_a_probed_resource_sensor_reports_a_change_behind_its_server_from_attend_run(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    sensor = mcp_sensor_yaml("shelf", behind.inline("resources"), tool=None, resource="items://list")
    quiet_home.write_user_sensor("shelf", sensor)
    probed = quiet_home.attend("sensors", "probe", "shelf", "--confirm")
    assert probed.returncode == 0, probed.stderr
    assert "read resource items://list on resources.py twice" in probed.stdout

    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "shelf"), what="the baseline read")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: any("new item b" in line for line in out))
    running.stop()
    (note,) = [line for line in running.stdout if line.startswith("[attend sensor=shelf")]
    assert "new item b: second" in note and "server=resources.py" in note


async def subscribed(ctx: PollContext, pool: McpPool, behind: Behind) -> list[str]:
    """Read items://list as sensor `shelf` and subscribe to it; the returned list collects the pool's wakes."""
    woken: list[str] = []
    pool.on_update = woken.append
    definition, _ = await call_tool(settings(behind.inline("resources"), "items://list"), ctx)
    assert await pool.subscribe(definition, "items://list", timeout=GENEROUS, user="shelf")
    return woken


async def first_wake(woken: list[str]) -> None:
    """Return once the pool woke a user (failing the test after GENEROUS seconds)."""
    with trio.fail_after(GENEROUS):
        while not woken:
            await trio.sleep(0.02)


async def test_a_subscribed_resource_wakes_its_user_when_it_changes(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    woken = await subscribed(ctx, pool, behind)
    assert woken == []
    behind.write_items([{"id": "b", "title": "second"}])
    await first_wake(woken)
    assert woken[0] == "shelf"


async def test_a_server_without_subscriptions_leaves_the_sensor_polling(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    server = behind.inline("resources", ATTEND_TEST_NO_SUBSCRIPTIONS="1")
    definition, _ = await call_tool(settings(server, "items://list"), ctx)
    assert not await pool.subscribe(definition, "items://list", timeout=GENEROUS, user="shelf")


@pytest.mark.slow
def test_a_subscribed_resource_update_reaches_stdout_long_before_the_interval(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    sensor = mcp_sensor_yaml("shelf", behind.inline("resources"), tool=None, resource="items://list", subscribe=True)
    quiet_home.write_user_sensor("shelf", sensor.replace('"interval": 1,', '"interval": "1h",'))
    assert quiet_home.attend("sensors", "probe", "shelf", "--confirm").returncode == 0
    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "shelf"), what="the baseline read")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: any("new item b" in line for line in out))  # PATIENCE, far below 1h
    running.stop()


@pytest.mark.slow
def test_a_subscribing_sensor_on_a_server_without_subscriptions_polls_at_its_interval(
    quiet_home: Any, daemon: Any, behind: Behind
) -> None:
    server = behind.inline("resources", ATTEND_TEST_NO_SUBSCRIPTIONS="1")
    quiet_home.write_user_sensor("shelf", mcp_sensor_yaml("shelf", server, tool=None, resource="items://list",
                                                          subscribe=True))
    assert quiet_home.attend("sensors", "probe", "shelf", "--confirm").returncode == 0
    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "shelf"), what="the baseline read")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: any("new item b" in line for line in out))
    running.stop()


async def test_a_lost_subscription_wakes_its_user_so_the_next_read_catches_up(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    woken = await subscribed(ctx, pool, behind)
    (started,) = behind.starts()
    os.kill(int(started.split()[-1]), signal.SIGKILL)  # the server dies: its stream is lost
    await first_wake(woken)
    assert woken == ["shelf"]


async def test_an_update_of_a_subscribed_resource_or_a_resource_below_it_wakes_its_users_and_no_other(
    ctx: PollContext, pool: McpPool
) -> None:
    from mcp.types import ResourceUpdatedNotification, ResourceUpdatedNotificationParams

    from attend.runtime.mcp.config import ServerDefinition
    from attend.runtime.mcp.pool import _Session

    woken: list[str] = []
    pool.on_update = woken.append
    session = _Session(ServerDefinition(command="unused"))
    session.subscribed = {"file:///repo/docs", "board://issues"}
    session.watchers = {"file:///repo/docs": {"docs"}, "board://issues": {"board", "triage"}}
    handle = pool._message_handler(session)

    async def updated(uri: str) -> list[str]:
        woken.clear()
        await handle(ResourceUpdatedNotification(params=ResourceUpdatedNotificationParams(uri=uri)))
        return list(woken)

    assert await updated("board://issues") == ["board", "triage"]
    assert await updated("file:///repo/docs/intro.md") == ["docs"]  # a sub-resource the server names
    assert await updated("file:///repo/docsets") == []  # not below it: a name that merely starts the same
    assert await updated("board://issues-archive") == []
