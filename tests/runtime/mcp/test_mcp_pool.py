"""The shared session pool against real stdio servers: results, the gate, failures, restarts, deadlines."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
from mcp_rig import GENEROUS, Behind, call_tool

from attend.errors import RuntimeFailure
from attend.runtime.kinds import PollContext
from attend.runtime.mcp.servers import McpSettings
from attend.spec.reader import read_mcp

if TYPE_CHECKING:
    from attend.runtime.mcp.pool import McpPool


def settings(server: Any, tool: str = "list_items", **fields: Any) -> McpSettings:
    return McpSettings(read_mcp({"server": server, "tool": tool, "timeout": GENEROUS, **fields}))


async def document(ctx: PollContext, server: Any, tool: str = "list_items", **fields: Any) -> Any:
    _, call = await call_tool(settings(server, tool, **fields), ctx)
    return call.document


async def failure(ctx: PollContext, server: Any, tool: str = "list_items", **fields: Any) -> RuntimeFailure:
    with pytest.raises(RuntimeFailure) as caught:
        await call_tool(settings(server, tool, **fields), ctx)
    return caught.value


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (an exited child nobody has reaped yet, a zombie, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


async def test_a_tools_answer_is_its_json_text_parsed_its_structured_content_first_or_a_text_field(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    # three tests before, a server each (an SDK server's start is ~1.2 s of CPU); one session answers all three
    server = behind.inline("clean")
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}]}
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])  # a change behind it
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}, {"id": "b", "title": "second"}]}
    _, call = await call_tool(settings(server, "list_structured"), ctx)
    assert call.structured == {"items": [{"id": "a", "title": "first"}, {"id": "b", "title": "second"}]}
    assert call.document == call.structured  # structured content is preferred over the text
    assert await document(ctx, server, "greet") == {"text": "hello there"}  # text that is not JSON


async def test_a_tool_error_is_a_failed_call_auth_failed_for_a_credential_else_exit_not_a_dead_server(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    # three tests before, a server each (an SDK server's start is ~1.2 s of CPU); one session answers all three
    server = behind.inline("clean")
    expired = await failure(ctx, server, "expired")  # an error result reporting an expired credential
    assert expired.state == "auth_failed"
    assert "access token expired" in expired.message
    broken = await failure(ctx, server, "broken")  # any other error result: the exit state, the server's words
    assert broken.state == "exit"
    assert "internal error" in broken.message
    denied = await failure(ctx, server, "rpc_denied")  # a JSON-RPC error instead of an error result
    assert denied.state == "auth_failed"
    assert "please sign in again" in denied.message
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}]}
    assert len(behind.starts()) == 1


async def test_sensors_naming_the_same_server_share_one_process(ctx: PollContext, pool: McpPool, behind: Behind) -> None:
    server = behind.inline("clean")
    async with trio.open_nursery() as nursery:
        for tool in ("list_items", "list_structured", "greet"):
            nursery.start_soon(document, ctx, server, tool)
    await document(ctx, server)
    assert len(behind.starts()) == 1
    assert pool.live_servers() == ["clean.py"]


async def test_the_servers_stderr_goes_to_a_log_file_under_the_state_directory(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    config = {"mcpServers": {"tracker": behind.inline("listing")}}
    (ctx.project_dir / ".mcp.json").write_text(__import__("json").dumps(config))
    await document(ctx, "tracker")
    from attend.runtime.mcp.pool import log_path

    log = log_path(ctx.paths.state_dir, "tracker")
    assert log == ctx.paths.state_dir / "mcp" / "tracker.log"
    assert "listing server starting" in log.read_text()


async def test_a_servers_log_dates_its_start_by_the_pools_clock(ctx: PollContext, behind: Behind) -> None:
    from attend.runtime.mcp.pool import McpPool, log_path

    (ctx.project_dir / ".mcp.json").write_text(__import__("json").dumps({"mcpServers": {"tracker": behind.inline("listing")}}))
    async with trio.open_nursery() as nursery:
        pool = McpPool(ctx, clock=lambda: 1000.0)
        await nursery.start(pool.run)
        ctx.mcp_pool = pool
        await document(ctx, "tracker")
        nursery.cancel_scope.cancel()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(1000.0))
    assert f"--- {stamp} attend starts {sys.executable}" in log_path(ctx.paths.state_dir, "tracker").read_text()


async def test_a_tool_without_a_read_only_hint_is_refused(ctx: PollContext, pool: McpPool, behind: Behind) -> None:
    failed = await failure(ctx, behind.inline("unannotated"))
    assert failed.state == "refused"
    assert "readOnlyHint" in failed.message and "allow_unannotated" in failed.message


async def test_allow_unannotated_lets_a_tool_without_a_hint_through(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    got = await document(ctx, behind.inline("unannotated"), allow_unannotated=True)
    assert got == {"items": [{"id": "a", "title": "first"}]}


async def test_a_tool_declaring_it_writes_is_refused_even_with_the_override(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    failed = await failure(ctx, behind.inline("unannotated"), "purge", allow_unannotated=True)
    assert failed.state == "refused"
    assert "readOnlyHint: false" in failed.message


@pytest.mark.parametrize(("tool", "shown"), [("string_hint", '"true"'), ("number_hint", "1")])
async def test_a_read_only_hint_that_is_not_the_json_value_true_is_refused_even_with_the_override(
    ctx: PollContext, pool: McpPool, behind: Behind, tool: str, shown: str
) -> None:
    # The SDK's model read `"true"` and `1` as True and the gate let them through.
    failed = await failure(ctx, behind.inline("unannotated"), tool, allow_unannotated=True)
    assert failed.state == "refused"
    assert f"declares readOnlyHint: {shown}, not the JSON value true" in failed.message


async def test_a_tool_the_server_does_not_offer_is_refused(ctx: PollContext, pool: McpPool, behind: Behind) -> None:
    failed = await failure(ctx, behind.inline("listing"), "no_such_tool")
    assert failed.state == "refused"
    assert "no tool named 'no_such_tool'" in failed.message


async def test_a_command_that_does_not_exist_is_exec_failed(ctx: PollContext, pool: McpPool) -> None:
    failed = await failure(ctx, {"command": "/nonexistent/attend-test-server"})
    assert failed.state == "exec_failed"
    assert "could not start" in failed.message


async def test_a_slow_tool_past_its_deadline_is_a_timeout(ctx: PollContext, pool: McpPool, behind: Behind) -> None:
    server = behind.inline("slow", ATTEND_TEST_DELAY="60")
    await failure(ctx, server, "no_such_tool")  # start the server under the generous deadline first
    with pytest.raises(RuntimeFailure) as caught:
        await call_tool(McpSettings(read_mcp({"server": server, "tool": "list_items", "timeout": 1.0})), ctx)
    assert caught.value.state == "timeout"
    assert "within 1s" in caught.value.message


async def test_a_crashed_server_is_recorded_and_restarted_after_the_backoff(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    pool.restart_delay = lambda failures: 0.5 * failures
    server = behind.inline("crashing")
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}]}

    behind.crash_marker.touch()
    crashed = await failure(ctx, server)
    assert crashed.state == "exec_failed"
    assert "crashing.py" in crashed.message

    behind.crash_marker.unlink()
    waiting = await failure(ctx, server)
    assert waiting.state == "unavailable"
    assert "next start attempt" in waiting.message

    await trio.sleep(0.6)
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}]}
    assert len(behind.starts()) == 2


async def test_cancelling_the_pool_stops_every_server_process(ctx: PollContext, behind: Behind) -> None:
    from attend.runtime.mcp.pool import McpPool

    async with trio.open_nursery() as nursery:
        pool = McpPool(ctx)
        await nursery.start(pool.run)
        ctx.mcp_pool = pool
        await document(ctx, behind.inline("listing"))
        nursery.cancel_scope.cancel()
    pid = int(behind.starts()[0].split()[1])
    with trio.fail_after(10):
        while alive(pid):
            await trio.sleep(0.05)


async def test_a_server_sees_attends_environment_with_its_own_env_merged_over_it(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    ctx.env.update(ATTEND_TEST_SHELL_TOKEN="from-attend", ATTEND_TEST_OVERRIDDEN="from-attend")
    server = behind.inline("listing", ATTEND_TEST_OVERRIDDEN="from-server-env")
    seen = {}
    for name in ("ATTEND_TEST_SHELL_TOKEN", "ATTEND_TEST_OVERRIDDEN"):
        seen[name] = (await document(ctx, server, "environment", args={"name": name}))["value"]
    assert seen == {"ATTEND_TEST_SHELL_TOKEN": "from-attend", "ATTEND_TEST_OVERRIDDEN": "from-server-env"}


async def test_a_server_that_prints_junk_on_stdout_still_answers_and_the_noise_goes_to_a_log(
    ctx: PollContext, pool: McpPool, behind: Behind, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await document(ctx, behind.inline("noisy")) == {"items": [{"id": "a", "title": "first"}]}
    assert "Traceback" not in capsys.readouterr().err
    from attend.runtime.mcp.pool import CLIENT_LOG

    client_log = ctx.paths.state_dir / "mcp" / CLIENT_LOG
    assert "noisy server v1 ready" in client_log.read_text()


async def test_a_server_that_exited_while_idle_is_started_again_without_a_failed_call(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    server = behind.inline("crashing")
    assert await document(ctx, server, "list_then_exit") == {"items": [{"id": "a", "title": "first"}]}
    first_pid = int(behind.starts()[0].split()[1])
    with trio.fail_after(10):
        while alive(first_pid):
            await trio.sleep(0.05)
    assert await document(ctx, server) == {"items": [{"id": "a", "title": "first"}]}
    assert len(behind.starts()) == 2


def test_an_unused_server_is_kept_unused_grace_seconds_unless_the_environment_sets_a_positive_number(
    ctx: PollContext,
) -> None:
    from attend.runtime.mcp.pool import GRACE_VARIABLE, UNUSED_GRACE, McpPool

    assert McpPool(ctx).unused_grace == UNUSED_GRACE == 10.0
    for value, grace in (("1", 1.0), ("0.25", 0.25), ("0", UNUSED_GRACE), ("-3", UNUSED_GRACE), ("soon", UNUSED_GRACE),
                         ("nan", UNUSED_GRACE)):
        ctx.env[GRACE_VARIABLE] = value
        assert McpPool(ctx).unused_grace == grace, value
