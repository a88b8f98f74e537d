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
    """A server named `name` offering `tools`.

    `methods` answers further requests (method -> handler of the params, returning the result). With `legacy`
    it speaks a handshake-era revision instead (`initialize`, `capabilities` as given; `server/discover` is
    not found, so the client falls back to the handshake), as the servers that send
    `notifications/resources/updated` for `resources/subscribe` do. `notify` and `request` talk to the client.
    """

    def __init__(self, name: str, tools: dict[str, Tool], *, methods: dict[str, Callable[[dict[str, Any]], Any]]
                 | None = None, legacy: bool = False, capabilities: dict[str, Any] | None = None) -> None:
        self.name = name
        self.tools = tools
        self.methods = methods or {}
        self.legacy = legacy
        self.capabilities = capabilities or {"tools": {}}
        self._write_lock = threading.Lock()
        self._answers: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}

    def run(self) -> None:
        """Serve stdin until the client closes it."""
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if "id" not in message:
                continue  # a notification (initialized, cancelled): nothing to answer
            if "method" not in message:  # the client's answer to a request of ours
                waiting = self._answers.pop(str(message["id"]), None)
                if waiting is not None:
                    waiting[1].append(message)
                    waiting[0].set()
                continue
            threading.Thread(target=self._answer, args=(message,), daemon=True).start()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send the client a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 600.0) -> dict[str, Any]:
        """Send the client a request and wait for its answer (the client reads in order: every message sent
        before it has been read once the answer comes)."""
        ident = f"server-{threading.get_ident()}-{len(self._answers)}"
        done: tuple[threading.Event, list[dict[str, Any]]] = (threading.Event(), [])
        self._answers[ident] = done
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        if not done[0].wait(timeout):
            raise TimeoutError(f"no answer to {method} within {timeout} s")
        return done[1][0]

    def _answer(self, request: dict[str, Any]) -> None:
        method, params = request.get("method"), request.get("params") or {}
        if self.legacy and method == "initialize":
            result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion"), "capabilities": self.capabilities,
                                      "serverInfo": {"name": self.name, "version": ""}}
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})
            return
        if method in self.methods or (self.legacy and method == "tools/list"):
            result = self.methods[method](params) if method in self.methods else {
                "tools": [self._listed(name, tool) for name, tool in self.tools.items()]}
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})
            return
        if method == "server/discover" and not self.legacy:
            result = {"supportedVersions": [PROTOCOL_VERSION], "capabilities": self.capabilities, **UNCACHED}
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
