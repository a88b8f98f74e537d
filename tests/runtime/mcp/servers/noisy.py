"""A server that prints a line that is not JSON-RPC on stdout before it starts serving (a common mistake;
wire.py, no SDK)."""

from __future__ import annotations

from common import READ_ONLY, listing_text, record_start
from wire import Tool, WireServer

if __name__ == "__main__":
    record_start("noisy")
    print("noisy server v1 ready", flush=True)
    WireServer("noisy", {"list_items": Tool(listing_text, READ_ONLY)}).run()
