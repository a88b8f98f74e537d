"""A server whose tool answers only after `ATTEND_TEST_DELAY` seconds (default 30)."""

from __future__ import annotations

import os

import anyio
from common import READ_ONLY, listing_text, record_start
from mcp.server import MCPServer

server = MCPServer("slow")


@server.tool(annotations=READ_ONLY, structured_output=False)
async def list_items() -> str:
    """The items, late."""
    await anyio.sleep(float(os.environ.get("ATTEND_TEST_DELAY", "30")))
    return listing_text()


if __name__ == "__main__":
    record_start("slow")
    server.run()
