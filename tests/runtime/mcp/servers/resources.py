"""A server that offers the items of the test's file as a resource (and no tool that declares anything).

`items://list` is the items as JSON text, `items://greeting` plain text that is not JSON, and
`items://expired` fails the way a server with a stale credential does. Its only tool, `touch`, carries no
annotations: a resource sensor on this server polls although nothing here declares `readOnlyHint`.

It serves `subscriptions/listen` (protocol 2026-07-28) and publishes an update of `items://list` whenever the
items file changes (it looks every 20 ms); with `ATTEND_TEST_NO_SUBSCRIPTIONS=1` it offers no subscriptions.
"""

from __future__ import annotations

import os

import anyio
from common import listing_text, record_start
from mcp.server import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

bus = InMemorySubscriptionBus()
server = MCPServer("resources", subscriptions=False if os.environ.get("ATTEND_TEST_NO_SUBSCRIPTIONS") else bus)


@server.resource("items://list", mime_type="application/json")
def items() -> str:
    """The items as JSON text."""
    return listing_text()


@server.resource("items://greeting", mime_type="text/plain")
def greeting() -> str:
    """Plain text that is not JSON."""
    return "hello there"


@server.resource("items://expired")
def expired() -> str:
    """Fails the way a server with a stale credential does."""
    raise MCPError(code=-32001, message="401 Unauthorized: the access token expired")


@server.tool(structured_output=False)
def touch() -> str:
    """A tool without annotations (the gate would refuse it)."""
    return "touched"


async def publish_changes() -> None:
    """Publish an update of items://list each time the items file's text changes."""
    seen = listing_text()
    while True:
        await anyio.sleep(0.02)
        now = listing_text()
        if now != seen:
            seen = now
            await bus.publish(ResourceUpdated(uri="items://list"))


async def main() -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(publish_changes)
        await server.run_stdio_async()
        tasks.cancel_scope.cancel()


if __name__ == "__main__":
    record_start("resources")
    anyio.run(main)
