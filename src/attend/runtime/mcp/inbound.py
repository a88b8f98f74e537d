"""What an MCP server sends unasked, coalesced and bounded (issue 35, item 4).

A server may send notifications as fast as it can write them: 147,700 `notifications/resources/updated` and
log messages in 25 s cost a daemon 14.6 s of CPU, the mcp SDK's client spawning a task and validating a
model for each one. `Inbound` stands between a session's transport and the SDK (it wraps the transport's
read stream, `inbound`), and takes out what attend handles itself before the SDK sees it:

- `notifications/resources/updated`: the pool's `on_updated(uri)` wakes the sensors watching that resource
  (a wake is a flag per sensor, `WakeSignal`: a thousand updates before the next read are one read), on the
  2025 revisions (`resources/subscribe`) and on 2026-07-28 (`subscriptions/listen`, whose stream still tells
  when it ends) alike; nothing is queued per notification.
- `notifications/message` (a server's log): at most `LOG_MESSAGES_PER_SECOND` a second are written to the
  server's log file (`write_log`, one line each, printable, cut to `LOG_LINE_CHARS`); the rest are counted
  (`Flow.dropped_logs`) and dropped, and the sensors using the server say so in their status.
- Every notification counts towards `NOTIFICATIONS_PER_SECOND`: past it, the stream waits for the next
  second before it reads on, so the server's writes wait (its pipe or its HTTP stream fills) instead of the
  daemon spending a core. Answers to attend's own requests are not counted (they come in order behind the
  notifications, so a flood delays them by at most the pipe's worth, about half a second).

Everything else (answers, requests, other notifications) goes to the SDK unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio
from mcp.types import JSONRPCNotification

from attend.runtime.clock import WALL_CLOCK, Clock
from attend.text import json_text, quoted

__all__ = ["LOG_LINE_CHARS", "LOG_MESSAGES_PER_SECOND", "NOTIFICATIONS_PER_SECOND", "Flow", "Inbound", "inbound"]

#: Notifications one session reads in a second at most; past it, reading waits for the next second.
NOTIFICATIONS_PER_SECOND = 1000
#: Log messages of one server written to its log file in a second; the rest are counted and dropped.
LOG_MESSAGES_PER_SECOND = 20
#: The longest log message line written (longer is cut with "…").
LOG_LINE_CHARS = 500

UPDATED = "notifications/resources/updated"
LOG = "notifications/message"


@dataclass(slots=True)
class Flow:
    """What one server sent unasked, across its sessions (the pool keeps one per server)."""

    #: log messages past `LOG_MESSAGES_PER_SECOND`, dropped
    dropped_logs: int = 0
    #: when the first was dropped (wall clock seconds), or None
    dropped_since: float | None = None
    #: notifications read in all
    notifications: int = 0


class Inbound:
    """A session's read stream with resource updates and log messages taken out and every notification paced.

    Args:
        inner: the transport's read stream (what the SDK would read).
        flow: the server's counters.
        on_updated: called with the URI of each `notifications/resources/updated`.
        write_log: called with one line (no newline) for each log message within the rate.
        clock: the wall clock (when the first log message was dropped).
    """

    def __init__(self, inner: Any, flow: Flow, on_updated: Callable[[str], None],
                 write_log: Callable[[str], None], *, clock: Clock = WALL_CLOCK) -> None:
        self._inner = inner
        self._clock = clock
        self._flow = flow
        self._on_updated = on_updated
        self._write_log = write_log
        self._second = -1.0  # the start of the current second (trio's clock)
        self._read = 0  # notifications read in it
        self._logged = 0  # log messages written in it

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK's dispatcher reads it when the transport has one)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            message = getattr(item, "message", None)
            if not isinstance(message, JSONRPCNotification):
                return item
            await self._pace()
            params = message.params if isinstance(message.params, dict) else {}
            if message.method == UPDATED:
                uri = params.get("uri")
                if isinstance(uri, str):
                    self._on_updated(uri)
            elif message.method == LOG:
                self._log(params)
            else:
                return item

    async def _pace(self) -> None:
        """Count one notification; past the second's budget, wait for the next second."""
        self._flow.notifications += 1
        now = trio.current_time()
        if now - self._second >= 1.0:
            self._second, self._read, self._logged = now, 0, 0
        self._read += 1
        if self._read > NOTIFICATIONS_PER_SECOND:
            await trio.sleep_until(self._second + 1.0)
            self._second, self._read, self._logged = trio.current_time(), 1, 0

    def _log(self, params: dict[str, Any]) -> None:
        if self._logged >= LOG_MESSAGES_PER_SECOND:
            self._flow.dropped_logs += 1
            if self._flow.dropped_since is None:
                self._flow.dropped_since = self._clock()
            return
        self._logged += 1
        data = params.get("data")
        text = data if isinstance(data, str) else json_text(data)
        logger = params.get("logger")
        name = f" {quoted(logger, 80)}" if isinstance(logger, str) and logger else ""
        self._write_log(f"log {quoted(str(params.get('level', '')), 20)}{name}: {quoted(text, LOG_LINE_CHARS)}")

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Inbound:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Inbound:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@asynccontextmanager
async def inbound(transport: Any, flow: Flow, on_updated: Callable[[str], None],
                  write_log: Callable[[str], None], *, clock: Clock = WALL_CLOCK) -> AsyncIterator[tuple[Any, Any]]:
    """`transport` (an MCP client transport: a context manager of its read and write streams) with its read
    stream behind `Inbound`."""
    async with transport as (read, write):
        yield Inbound(read, flow, on_updated, write_log, clock=clock), write
