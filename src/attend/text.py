"""How a peer message's text is shown: never able to drive the reader's terminal (DESIGN.md, "Peers").

Everything attend prints that came from another process or the file system (a message's text, a
project path, a sensor's description) goes through `printable`: `attend peers` (commands.py), the
`messages` sensor (sensors/messages.py), every notification line (runtime/delivery.py `format_line`)
and `attend run`'s start-up lines. Control characters become `\\xNN` escapes, the bidirectional
controls that reorder what a reader sees (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) `\\uNNNN`
escapes, a lone surrogate (valid in JSON, not in UTF-8) becomes U+FFFD, and a one-line form folds
line breaks and tabs to one space.
"""

from __future__ import annotations

import re

__all__ = ["one_line", "printable", "printable_path"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BREAKS = re.compile(r"[\r\n\t]+")
_TAB_NEWLINE = re.compile(r"[\t\n]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with control characters shown as escapes (and with `one_line`, line breaks as spaces)."""
    if one_line:
        text = _BREAKS.sub(" ", text)
    return _CONTROL.sub(_escape, _SURROGATES.sub("\ufffd", text))


def printable_path(path: object) -> str:
    """A file system path as one printable token: like `printable`, and its tabs and newlines escaped too."""
    return _TAB_NEWLINE.sub(_escape, printable(str(path)))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def one_line(text: str, limit: int) -> str:
    """`text` printable on one line, cut to at most `limit` characters (the last one `…` when cut)."""
    text = printable(text, one_line=True).strip()
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
