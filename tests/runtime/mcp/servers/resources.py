"""A server that offers the items of the test's file as a resource (and no tool that declares anything).

`items://list` is the items as JSON text, `items://greeting` plain text that is not JSON, and
`items://expired` fails the way a server with a stale credential does. Its only tool, `touch`, carries no
annotations: a resource sensor on this server polls although nothing here declares `readOnlyHint`.
"""

from __future__ import annotations

from common import listing_text, record_start
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer("resources")


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


if __name__ == "__main__":
    record_start("resources")
    server.run()
