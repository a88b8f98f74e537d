"""A server whose read-only-looking tool advances a cursor: each call returns only what is new since the last
(wire.py, no SDK).

Declares `readOnlyHint: true`, so the gate lets it through; the probe must catch it.
"""

from __future__ import annotations

from typing import Any

from common import READ_ONLY, read_items, record_start
from wire import Tool, WireServer

seen: set[str] = set()


def unread() -> dict[str, Any]:
    """Items not returned before (as structured content); returning them marks them read."""
    fresh = [item for item in read_items() if item["id"] not in seen]
    seen.update(item["id"] for item in fresh)
    return {"items": fresh}


if __name__ == "__main__":
    record_start("cursor")
    WireServer("cursor", {"unread": Tool(unread, READ_ONLY)}).run()
