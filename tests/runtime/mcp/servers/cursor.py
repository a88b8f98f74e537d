"""A server whose read-only-looking tool advances a cursor: each call returns only what is new since the last.

Declares `readOnlyHint: true`, so the gate lets it through; the probe must catch it.
"""

from __future__ import annotations

from common import READ_ONLY, read_items, record_start
from mcp.server import MCPServer
from pydantic import BaseModel

server = MCPServer("cursor")
seen: set[str] = set()


class Listing(BaseModel):
    """The unread items."""

    items: list[dict]


@server.tool(annotations=READ_ONLY)
def unread() -> Listing:
    """Items not returned before; returning them marks them read."""
    fresh = [item for item in read_items() if item["id"] not in seen]
    seen.update(item["id"] for item in fresh)
    return Listing(items=fresh)


if __name__ == "__main__":
    record_start("cursor")
    server.run()
