"""A well-behaved read-only server (wire.py, no SDK): `list_items` answers the items of the test's file as
JSON text, `environment` the value of one of the process's environment variables.

The server of the tests whose point is attend's own doing around a call (the probe, its prompt and record,
the daemon's polls and notes, a server stopped once unused, the environment a server is started with), not
what a real implementation answers: clean.py (the SDK's) answers the same `list_items` and pins that
interop in test_mcp_pool.py.
"""

from __future__ import annotations

import os
from typing import Any

from common import READ_ONLY, listing_text, record_start
from wire import Tool, WireServer


def environment(name: str) -> dict[str, Any]:
    """The value of one environment variable of the server process (None when unset)."""
    return {"name": name, "value": os.environ.get(name)}


if __name__ == "__main__":
    record_start("listing")
    WireServer("listing", {"list_items": Tool(listing_text, READ_ONLY, "The items as JSON text."),
                           "environment": Tool(environment, READ_ONLY, environment.__doc__ or "")}).run()
