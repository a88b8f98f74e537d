"""A server whose tools do not declare themselves read-only: one without annotations, one that says it writes."""

from __future__ import annotations

from common import listing_text, record_start
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("unannotated")


@server.tool(structured_output=False)
def list_items() -> str:
    """Reads only, but does not say so."""
    return listing_text()


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True), structured_output=False)
def purge() -> str:
    """Declares that it modifies its environment."""
    return listing_text()


if __name__ == "__main__":
    record_start("unannotated")
    server.run()
