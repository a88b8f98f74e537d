"""A server that dies in the middle of a call while the test's crash marker file exists (wire.py, no SDK)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from common import READ_ONLY, listing_text, record_start
from wire import Tool, WireServer


def list_items() -> str:
    """The items; the process exits instead while `ATTEND_TEST_CRASH` names an existing file."""
    marker = os.environ.get("ATTEND_TEST_CRASH")
    if marker and Path(marker).exists():
        os._exit(3)
    return listing_text()


def list_then_exit() -> str:
    """The items; the process exits a moment after answering, as a server with an idle timeout does."""
    threading.Timer(0.2, os._exit, args=(0,)).start()
    return listing_text()


if __name__ == "__main__":
    record_start("crashing")
    WireServer("crashing", {"list_items": Tool(list_items, READ_ONLY),
                            "list_then_exit": Tool(list_then_exit, READ_ONLY)}).run()
