"""A stdio MCP server without the mcp SDK: JSON-RPC 2.0, one message a line, answering what attend's client
asks of a server speaking the 2026-07-28 revision (`server/discover`, `tools/list`, `tools/call`).

The servers whose point is a behaviour attend's client must handle (one that crashes, answers late, prints
junk on stdout, advances a cursor, or declares no read-only hint) are built on it: a process that imports the
SDK spends a second or more of CPU on its pydantic models, one of these starts in some 30 ms. The servers
that stand for a real implementation (clean.py, resources.py, remote.py, and the npm everything server)
stay the SDK's.

Each call runs in a thread of its own, as the SDK's server runs each request in a task of its own: a late
answer keeps none of the others waiting. A tool that raises answers an error result naming it, as the SDK's
does (not silence: the call would wait out its timeout). The process ends when the client closes its stdin.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The revision the SDK client (mcp 2.x) asks for first with `server/discover`.
PROTOCOL_VERSION = "2026-07-28"

#: What the revision's discover and list results must say about caching: for this client only, never reused.
UNCACHED = {"cacheScope": "private", "ttlMs": 0}

#: The JSON-RPC error code of a method the server does not serve.
METHOD_NOT_FOUND = -32601


@dataclass
class Tool:
    """A tool: its handler gets the call's arguments and returns the text of a text-only answer, or a dict
    for structured content (with its JSON as the text, as the SDK answers); `annotations` as the wire carries
    them (common.READ_ONLY), None for none."""

    handler: Callable[..., str | dict[str, Any]]
    annotations: dict[str, Any] | None
    description: str = ""


class WireServer:
    """A server named `name` offering `tools`."""

    def __init__(self, name: str, tools: dict[str, Tool]) -> None:
        self.name = name
        self.tools = tools
        self._write_lock = threading.Lock()

    def run(self) -> None:
        """Serve stdin until the client closes it."""
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if "id" not in message:
                continue  # a notification (initialized, cancelled): nothing to answer
            threading.Thread(target=self._answer, args=(message,), daemon=True).start()

    def _answer(self, request: dict[str, Any]) -> None:
        method, params = request.get("method"), request.get("params") or {}
        if method == "server/discover":
            result: dict[str, Any] = {"supportedVersions": [PROTOCOL_VERSION], "capabilities": {"tools": {}},
                                      **UNCACHED}
        elif method == "tools/list":
            result = {"tools": [self._listed(name, tool) for name, tool in self.tools.items()], **UNCACHED}
        elif method == "tools/call" and params.get("name") in self.tools:
            result = self._call(params["name"], self.tools[params["name"]], params.get("arguments") or {})
        else:
            error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method} {params.get('name', '')}"}
            self._send({"jsonrpc": "2.0", "id": request["id"], "error": error})
            return
        result.update(resultType="complete", _meta={"io.modelcontextprotocol/serverInfo": {"name": self.name,
                                                                                            "version": ""}})
        self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    @staticmethod
    def _listed(name: str, tool: Tool) -> dict[str, Any]:
        listed: dict[str, Any] = {"name": name, "description": tool.description, "inputSchema": {"type": "object"}}
        if tool.annotations is not None:
            listed["annotations"] = tool.annotations
        return listed

    @staticmethod
    def _call(name: str, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = tool.handler(**arguments)
        except Exception:  # noqa: BLE001 - as the SDK's server: an error result naming the tool, the trace in the log
            traceback.print_exc()
            return {"content": [{"type": "text", "text": f"Error executing tool {name}"}], "isError": True}
        if isinstance(answer, str):
            return _text(answer)
        return {**_text(json.dumps(answer, indent=2)), "structuredContent": answer}

    def _send(self, message: dict[str, Any]) -> None:
        with self._write_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}
