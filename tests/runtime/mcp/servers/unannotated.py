"""A server whose tools do not declare themselves read-only: one without annotations, one that says it writes,
two that declare something other than the JSON value true (wire.py, no SDK)."""

from __future__ import annotations

from common import listing_text, record_start
from wire import Tool, WireServer

if __name__ == "__main__":
    record_start("unannotated")
    WireServer("unannotated", {
        "list_items": Tool(listing_text, None, "Reads only, but does not say so."),
        "purge": Tool(listing_text, {"readOnlyHint": False, "destructiveHint": True},
                      "Declares that it modifies its environment."),
        # Not the JSON value true: a string and a number (the SDK's model reads both as True).
        "string_hint": Tool(listing_text, {"readOnlyHint": "true"}, "Declares the string \"true\"."),
        "number_hint": Tool(listing_text, {"readOnlyHint": 1}, "Declares the number 1."),
    }).run()
