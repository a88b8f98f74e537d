"""A remote server: the clean server's read-only `list_items` over HTTP on 127.0.0.1, behind a bearer token.

Run as `remote.py PORT TOKEN`: streamable HTTP at /mcp and, in the same process, HTTP with server-sent events
at /sse (the 2024-11-05 transport; one process, not one per transport: each imports the SDK, a second or more
of CPU). Every request without `Authorization: Bearer TOKEN` is answered 401 with a one-line reason (and a
`WWW-Authenticate` challenge), as a service with a stale or missing token answers. When the file named by
`ATTEND_TEST_REFUSAL` exists, its JSON `{"body": ..., "challenge": ...}` is that answer instead (read on each
refusal, so a test can make the same server's refusal hostile: a header value carries what HTTP lets through,
any byte but the C0 controls and DEL).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import uvicorn
from common import listing_text, record_start, sdk_read_only
from mcp.server import MCPServer

server = MCPServer("remote")
READ_ONLY = sdk_read_only()


@server.tool(annotations=READ_ONLY, structured_output=False)
def list_items() -> str:
    """The items as JSON text."""
    return listing_text()


def guarded(app: Any, token: str) -> Any:
    """`app` behind a bearer token check."""
    expected = f"Bearer {token}".encode()

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            body, challenge = refusal()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"text/plain"), (b"www-authenticate", challenge),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return asgi


def refusal() -> tuple[bytes, bytes]:
    """The body and the `WWW-Authenticate` challenge of a 401: the test's (ATTEND_TEST_REFUSAL), else the usual."""
    path = os.environ.get("ATTEND_TEST_REFUSAL")
    if path and Path(path).exists():
        told = json.loads(Path(path).read_text(encoding="utf-8"))
        return told["body"].encode(), told["challenge"].encode()
    return b"invalid_token: the bearer token is missing or wrong\n", b'Bearer error="invalid_token"'


def both_transports() -> Any:
    """The streamable HTTP app at /mcp (its lifespan runs the session manager) and the SSE app's /sse and
    /messages/ beside it."""
    streamable, sse = server.streamable_http_app(), server.sse_app()

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/mcp"):
            await sse(scope, receive, send)
        else:
            await streamable(scope, receive, send)

    return asgi


if __name__ == "__main__":
    port, token = int(sys.argv[1]), sys.argv[2]
    record_start("remote")
    uvicorn.run(guarded(both_transports(), token), host="127.0.0.1", port=port, log_level="warning")
