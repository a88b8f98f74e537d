"""A clean read-only server: lists the items of the test's file without touching anything."""

from __future__ import annotations

from common import listing_text, read_items, record_start, sdk_read_only
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

server = MCPServer("clean")
READ_ONLY = sdk_read_only()


class Listing(BaseModel):
    """A structured answer: the items under `items`."""

    items: list[dict]


@server.tool(annotations=READ_ONLY, structured_output=False)
def list_items() -> str:
    """The items as JSON text (no structured content)."""
    return listing_text()


@server.tool(annotations=READ_ONLY)
def list_structured() -> Listing:
    """The items as structured content."""
    return Listing(items=read_items())


@server.tool(annotations=READ_ONLY, structured_output=False)
def greet() -> str:
    """Plain text that is not JSON."""
    return "hello there"


@server.tool(annotations=READ_ONLY, structured_output=False)
def expired() -> str:
    """Fails the way a server with a stale credential does."""
    raise ToolError("401 Unauthorized: the access token expired; run `clean login`")


@server.tool(annotations=READ_ONLY, structured_output=False)
def broken() -> str:
    """Fails for a reason that has nothing to do with credentials."""
    raise ToolError("the backend returned an internal error")


@server.tool(annotations=READ_ONLY, structured_output=False)
def rpc_denied() -> str:
    """Fails with a JSON-RPC error instead of an error result, as some servers report auth."""
    raise MCPError(code=-32001, message="session token expired, please sign in again")


if __name__ == "__main__":
    record_start("clean")
    server.run()
