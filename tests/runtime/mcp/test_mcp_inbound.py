"""What a server sends unasked, coalesced and bounded (runtime/mcp/inbound.py, issue 35, item 4): the stream
between a session's transport and the SDK, on trio's autojump clock (a second of budget is a second of the
clock, never a sleep)."""

from __future__ import annotations

from typing import Any

import anyio
import trio
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCResponse

from attend.runtime.mcp.inbound import LOG_MESSAGES_PER_SECOND, NOTIFICATIONS_PER_SECOND, Flow, Inbound


def notification(method: str, **params: Any) -> SessionMessage:
    return SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=method, params=params))


async def read_all(messages: list[SessionMessage], **clock: Any) -> tuple[list[Any], list[str], list[str], Flow, float]:
    """Send `messages` through an Inbound (with `clock=`, when given): (what the SDK gets, the updated URIs, the
    log lines, the flow, the seconds of trio's clock the reading took)."""
    send, receive = anyio.create_memory_object_stream[Any](0)
    flow, updated, logged, passed = Flow(), [], [], []
    stream = Inbound(receive, flow, updated.append, logged.append, **clock)
    started = trio.current_time()
    async with trio.open_nursery() as nursery:

        async def produce() -> None:
            async with send:
                for message in messages:
                    await send.send(message)

        nursery.start_soon(produce)
        async with stream:
            async for item in stream:
                passed.append(item)
    return passed, updated, logged, flow, trio.current_time() - started


async def test_updates_and_log_messages_are_taken_out_and_everything_else_reaches_the_sdk(autojump_clock) -> None:
    answer = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    listed = notification("notifications/tools/list_changed")
    passed, updated, logged, flow, _ = await read_all([
        notification("notifications/resources/updated", uri="items://list"), answer,
        notification("notifications/message", level="warning", logger="db", data="slow \x1b[2J query"),
        notification("notifications/message", level="info", data={"rows": 3}), listed])
    assert passed == [answer, listed]
    assert updated == ["items://list"]
    assert logged == ["log warning db: slow \\x1b[2J query", 'log info: {"rows": 3}']  # printable, one line each
    assert (flow.notifications, flow.dropped_logs) == (4, 0)


async def test_a_flood_is_read_no_faster_than_the_budget_and_its_log_messages_past_the_rate_are_counted(
    autojump_clock,
) -> None:
    seconds = 3
    flood = [notification(method, uri="items://list", level="info", data="x")
             for _ in range(seconds * NOTIFICATIONS_PER_SECOND // 2)
             for method in ("notifications/resources/updated", "notifications/message")]
    _, updated, logged, flow, took = await read_all(flood)
    assert took >= seconds - 1  # the last second's budget is reached only once `seconds - 1` have passed
    assert len(updated) == len(flood) // 2  # each update reaches the pool, which only sets its users' flags
    assert len(logged) == seconds * LOG_MESSAGES_PER_SECOND  # per second of reading
    assert flow.dropped_logs == len(flood) // 2 - len(logged) and flow.dropped_since is not None


async def test_the_first_dropped_log_message_is_dated_by_the_wall_clock_given(autojump_clock) -> None:
    flood = [notification("notifications/message", level="info", data="x") for _ in range(LOG_MESSAGES_PER_SECOND + 2)]
    _, _, logged, flow, _ = await read_all(flood, clock=lambda: 1000.0)
    assert (len(logged), flow.dropped_logs, flow.dropped_since) == (LOG_MESSAGES_PER_SECOND, 2, 1000.0)
