"""The real npm `@modelcontextprotocol/server-everything` for the MCP tests, installed once into the tests'
npm cache (npm_cache.py), outside the repository.

The package's README and its `package.json` scripts start it as `node dist/index.js stdio` (the default),
`node dist/index.js sse` or `node dist/index.js streamableHttp`; the two HTTP transports listen on `$PORT`
(default 3001), the streamable one at `/mcp`. It speaks the 2025-11-25 protocol (no `subscriptions/listen`),
offers `resources.subscribe` and answers `resources/subscribe`, but sends `notifications/resources/updated`
only after its `toggle-subscriber-updates` tool was called in the same session, a tool that declares
`readOnlyHint: false` (attend refuses to call it). servers/everything_updates.mjs starts the same server
over stdio with those updates switched on from the start, as that tool does, one a second per subscribed URI
(the package's are 5 s apart; the launcher says why and how).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from mcp_rig import SERVERS

from npm_cache import npm_installed

#: The server-everything release the tests run.
EVERYTHING_VERSION = "2026.8.31"

#: A resource of the everything server whose text names the time it was read (changes every second).
TEXT_RESOURCE = "demo://resource/dynamic/text/1"


def installed_everything() -> Path | None:
    """The package's folder (holding dist/index.js), installed when missing; None when npm is missing."""
    folder = npm_installed(f"server-everything-{EVERYTHING_VERSION}",
                           f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}", _works)
    return None if folder is None else _package(folder)


def _package(folder: Path) -> Path:
    return folder / "node_modules" / "@modelcontextprotocol" / "server-everything"


def _works(folder: Path) -> bool:
    manifest = _package(folder) / "package.json"
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return False
    return version == EVERYTHING_VERSION and (_package(folder) / "dist" / "index.js").is_file()


def node() -> str:
    found = shutil.which("node")
    assert found is not None  # npm installed the package, so Node.js is there
    return found


def everything_stdio(package: Path, *, updates: bool, **env: str) -> dict[str, Any]:
    """An inline `mcp.server` block: the everything server over stdio, as its README starts it, or with its
    simulated resource updates switched on (`updates=True`, servers/everything_updates.mjs)."""
    if updates:
        return {"command": node(), "args": [str(SERVERS / "everything_updates.mjs"), str(package)], "env": env}
    return {"command": node(), "args": [str(package / "dist" / "index.js"), "stdio"], "env": env}


def text_sensor_yaml(name: str, server: Any, *, interval: str | int, subscribe: bool) -> str:
    """A resource sensor on TEXT_RESOURCE whose trigger fires whenever the text changed (each read a second
    or more after the last one)."""
    doc = {
        "spec": 1,
        "name": name,
        "kind": "mcp",
        "interval": interval,
        "min_interval": 1,
        "threshold": 1.0,
        "mcp": {"server": server, "resource": TEXT_RESOURCE, "subscribe": subscribe, "timeout": 30},
        "triggers": {
            "read-again": {"path": "$.text", "on": "changed", "magnitude": 5.0, "description": "read again: {value}"},
        },
    }
    return json.dumps(doc, indent=2)
