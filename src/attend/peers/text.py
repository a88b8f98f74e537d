"""How a peer message's text is shown: never able to drive the reader's terminal (DESIGN.md, "Peers").

Shared by `attend peers` (commands.py) and the `messages` sensor (sensors/messages.py): control
characters become `\\xNN` escapes, a lone surrogate (valid in JSON, not in UTF-8) becomes U+FFFD,
and a one-line form folds line breaks and tabs to one space.
"""

from __future__ import annotations

import re

__all__ = ["one_line", "printable"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029]")
_BREAKS = re.compile(r"[\r\n\t]+")
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with control characters shown as escapes (and with `one_line`, line breaks as spaces)."""
    if one_line:
        text = _BREAKS.sub(" ", text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _SURROGATES.sub("\ufffd", text))


def one_line(text: str, limit: int) -> str:
    """`text` printable on one line, cut to at most `limit` characters (the last one `…` when cut)."""
    text = printable(text, one_line=True).strip()
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
