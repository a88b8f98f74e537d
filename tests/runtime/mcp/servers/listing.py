"""A well-behaved read-only server: `list_items` answers the items of the test's file as JSON text (wire.py,
no SDK).

The server of the tests whose point is attend's own behaviour around a call (the probe, its prompt and
record, the daemon's polls and notes, a server stopped once unused), not what a real implementation answers:
clean.py (the SDK's) answers the same `list_items` and pins that interop in test_mcp_pool.py.
"""

from __future__ import annotations

from common import READ_ONLY, listing_text, record_start
from wire import Tool, WireServer

if __name__ == "__main__":
    record_start("listing")
    WireServer("listing", {"list_items": Tool(listing_text, READ_ONLY, "The items as JSON text.")}).run()
