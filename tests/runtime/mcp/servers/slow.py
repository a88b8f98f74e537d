"""A server whose tool answers only after `ATTEND_TEST_DELAY` seconds (default 30; wire.py, no SDK)."""

from __future__ import annotations

import os
import time

from common import READ_ONLY, listing_text, record_start
from wire import Tool, WireServer


def list_items() -> str:
    """The items, late (the call's own thread waits: the server answers other requests meanwhile)."""
    time.sleep(float(os.environ.get("ATTEND_TEST_DELAY", "30")))
    return listing_text()


if __name__ == "__main__":
    record_start("slow")
    WireServer("slow", {"list_items": Tool(list_items, READ_ONLY)}).run()
