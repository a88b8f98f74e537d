"""Remote MCP servers (issue 26, part 3): `type: http` over streamable HTTP, headers with ${VAR}, auth_failed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from daemon_rig import sensors_json
from mcp_rig import GENEROUS, SERVERS, Behind, free_port, mcp_sensor_yaml, polled_ok, serving

from attend.errors import RuntimeFailure
from attend.runtime.kinds import PollContext
from attend.runtime.kinds.mcp import McpPool, McpSettings, call_tool
from waiting import wait_until

TOKEN = "s3cret-token"


@pytest.fixture
def remote(behind: Behind) -> Iterator[int]:
    """The remote test server on a free 127.0.0.1 port, accepting only `Bearer TOKEN`."""
    port = free_port()
    env = {**behind.env(), "PATH": "/usr/bin:/bin"}
    with serving([sys.executable, str(SERVERS / "remote.py"), str(port), TOKEN], port, env) as served:
        yield served


def configure(ctx: PollContext, port: int) -> None:
    """A project `.mcp.json` naming the remote server, its token read from ${REMOTE_TOKEN}."""
    servers = {"remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp",
                          "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}}
    (ctx.project_dir / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def settings() -> McpSettings:
    return McpSettings({"server": "remote", "tool": "list_items", "timeout": GENEROUS})


async def test_a_remote_server_over_streamable_http_is_called_with_the_expanded_header(
    ctx: PollContext, pool: McpPool, remote: int
) -> None:
    configure(ctx, remote)
    ctx.env["REMOTE_TOKEN"] = TOKEN
    definition, call = await call_tool(settings(), ctx)
    assert call.document == {"items": [{"id": "a", "title": "first"}]}
    assert definition.url == f"http://127.0.0.1:{remote}/mcp"


async def test_a_wrong_token_is_auth_failed_with_the_servers_words_and_backs_off(
    ctx: PollContext, pool: McpPool, remote: int
) -> None:
    configure(ctx, remote)
    ctx.env["REMOTE_TOKEN"] = "wrong"
    with pytest.raises(RuntimeFailure) as refused:
        await call_tool(settings(), ctx)
    assert refused.value.state == "auth_failed"
    assert "HTTP 401" in refused.value.message and "the bearer token is missing or wrong" in refused.value.message
    # the next attempt waits out the restart backoff (cadence.backoff) instead of hammering the server
    with pytest.raises(RuntimeFailure) as waiting:
        await call_tool(settings(), ctx)
    assert waiting.value.state == "unavailable" and "refused the credential" in waiting.value.message


async def test_a_missing_token_variable_is_auth_failed_before_any_request(ctx: PollContext, pool: McpPool) -> None:
    configure(ctx, 9)  # nothing listens there: no request is made
    with pytest.raises(RuntimeFailure) as missing:
        await call_tool(settings(), ctx)
    assert missing.value.state == "auth_failed"
    assert "${REMOTE_TOKEN} is not set" in missing.value.message


def test_a_remote_server_of_another_transport_stays_unsupported(ctx: PollContext) -> None:
    from attend.runtime.mcp.config import resolve_server

    with pytest.raises(RuntimeFailure) as sse:
        resolve_server({"type": "sse", "url": "http://127.0.0.1:9/sse"}, ctx.project_dir, ctx.env)
    assert sse.value.state == "unsupported"


@pytest.mark.slow
def test_attend_run_polls_a_remote_server_and_a_token_gone_stale_is_auth_failed_with_its_words(
    quiet_home: Any, daemon: Any, behind: Behind, remote: int
) -> None:
    def configure_token(token: str) -> None:
        servers = {"tracker": {"type": "http", "url": f"http://127.0.0.1:{remote}/mcp",
                               "headers": {"Authorization": f"Bearer {token}"}}}
        (quiet_home.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    configure_token(TOKEN)
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", "tracker"))
    assert quiet_home.attend("sensors", "probe", "tracker", "--confirm").returncode == 0

    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "tracker"), what="the baseline poll of the remote server")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: any("new item b" in line for line in out))
    (note,) = [line for line in running.stdout if line.startswith("[attend sensor=tracker")]
    assert "server=tracker" in note

    configure_token("expired")  # the same server, now with a credential it refuses
    wait_until(lambda: sensors_json(quiet_home)["tracker"].get("state") == "auth_failed", what="auth_failed")
    running.stop()
    message = sensors_json(quiet_home)["tracker"]["message"]
    assert "HTTP 401" in message and "the bearer token is missing or wrong" in message
