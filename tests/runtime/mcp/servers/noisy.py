"""A server that prints a line that is not JSON-RPC on stdout before it starts serving (a common mistake)."""

from __future__ import annotations

from common import READ_ONLY, listing_text, record_start
from mcp.server import MCPServer

server = MCPServer("noisy")


@server.tool(annotations=READ_ONLY, structured_output=False)
def list_items() -> str:
    """The items."""
    return listing_text()


if __name__ == "__main__":
    record_start("noisy")
    print("noisy server v1 ready", flush=True)
    server.run()
