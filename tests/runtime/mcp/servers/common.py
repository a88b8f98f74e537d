"""What the test servers share: the items file the test writes, and a record of each start.

Each server is a real stdio MCP server run by `sys.executable` with its own folder on sys.path: the mcp
package's `MCPServer` (clean.py, resources.py, remote.py) or, where a behaviour attend's client must handle is
the point, wire.py's SDK-free one. Nothing here imports the SDK (a second of CPU the wire.py servers spare).
The test tells a server where things are through the environment:
`ATTEND_TEST_ITEMS` (a JSON file holding the current items) and `ATTEND_TEST_STARTS` (a file that gets one
line per server start, so a test can count processes).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

#: The annotations of a tool that declares itself read-only, as the wire carries them.
READ_ONLY = {"readOnlyHint": True}


def sdk_read_only() -> Any:
    """READ_ONLY as the SDK's `ToolAnnotations`, for the SDK servers' tools."""
    from mcp.types import ToolAnnotations

    return ToolAnnotations.model_validate(READ_ONLY)


def record_start(name: str) -> None:
    """Append one line to the starts file (when the test set one) and say hello on stderr (the log)."""
    starts = os.environ.get("ATTEND_TEST_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as handle:
            handle.write(f"{name} {os.getpid()}\n")
    print(f"{name} server starting (pid {os.getpid()})", file=sys.stderr, flush=True)


def read_items() -> list[dict[str, Any]]:
    """The items the test wrote last (an empty list before it wrote any)."""
    path = os.environ.get("ATTEND_TEST_ITEMS")
    if not path or not Path(path).exists():
        return []
    return json.loads(Path(path).read_text(encoding="utf-8"))


def listing_text() -> str:
    """The items as the JSON text a text-only server would answer with."""
    return json.dumps({"items": read_items()})
