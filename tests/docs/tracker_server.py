"""A read-only stdio MCP server known as `tracker`, for the documents' MCP examples (docs/mcp.md's
`tracker` sensor, the skill's probe): `<!-- docs: mcp-server tracker -->` registers it in ~/.claude.json."""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("tracker")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_issues(state: str = "open") -> dict:
    """The tracker's issues in one state."""
    return {"issues": [{"id": 1, "title": "the docs' example issue", "state": state}]}


if __name__ == "__main__":
    server.run()
