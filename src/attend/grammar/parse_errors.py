"""Friendly parse-error messages: a lark failure → what was expected, and where.

lark reports the unexpected token or character and the set of terminals the parser could have
accepted; this module names those terminals in words a sensor author knows, and adds a hint for the
mistakes people actually make (an unclosed bracket, a lone `}` in a template). The decision is a
pure function of the failure, kept apart from parsing so each message has its own test.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["TERMINAL_WORDS", "describe_failure"]

#: How each grammar terminal is named in an error message.
TERMINAL_WORDS: dict[str, str] = {
    "ROOT": "'$'",
    "DOT": "'.'",
    "DOTDOT": "'..'",
    "STAR": "'*'",
    "NAME": "a field name",
    "INT": "an index",
    "STRING": "a quoted name",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LBRACE2": "'{{'",
    "RBRACE2": "'}}'",
    "TEXT": "text",
    "FIELD": "a field name",
    "PART": "a property name",
    "$END": "the end of the expression",
}

def _words(expected: Any) -> str:
    # blank space is allowed in many places and never what a message should suggest
    names = sorted({TERMINAL_WORDS.get(t, t) for t in expected if t != "_BLANK"})
    if not names:
        return "something else"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _shown(text: str, offset: int) -> str:
    if offset >= len(text):
        return "end of expression"
    ch = text[offset]
    if ch == " ":
        return "space"
    return f"U+{ord(ch):04X}" if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 else f"'{ch}'"


def describe_failure(exc: Exception, text: str, start: str) -> tuple[str, int]:
    """A message and a 0-based offset for a lark parse failure on `text` (start rule `start`).

    Args:
        exc: the lark `UnexpectedInput` (characters, token or end of input).
        text: the expression that was parsed.
        start: the start rule (`path`, `template` or `property`).

    Returns:
        ``(message, offset)``: the message says what was found and what was expected.
    """
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    kind = start  # the start rules are named as messages call them: path, template, property
    if isinstance(exc, UnexpectedCharacters):
        offset = exc.pos_in_stream or 0
        hint = _hint(text, offset, start)
        expected = _words(exc.allowed or ())
        return hint or f"unexpected {_shown(text, offset)} in the {kind}; expected {expected}", offset
    if isinstance(exc, UnexpectedEOF):
        return f"the {kind} ends too early; expected {_words(exc.expected)}", len(text)
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        offset = len(text) if token.type == "$END" else (token.start_pos or 0)
        hint = _hint(text, offset, start)
        if hint:
            return hint, offset
        if token.type == "$END":
            return f"the {kind} ends too early; expected {_words(exc.expected)}", offset
        # the token may have been lexed by another start rule's terminal: show only its first character
        return f"unexpected {_shown(text, offset)} in the {kind}; expected {_words(exc.expected)}", offset
    return f"invalid {kind}: {exc}", 0


#: RFC 9535 selectors outside attend's path subset, by the character that opens them inside brackets.
UNSUPPORTED_SELECTORS = {
    "?": "filter selectors ([?…])",
    ":": "slice selectors ([start:end:step])",
    ",": "lists of several selectors ([a,b])",
}


def _unsupported(text: str, offset: int) -> str | None:
    """The message for valid RFC 9535 syntax that attend's subset leaves out, found at `offset`."""
    ch = text[offset] if offset < len(text) else ""
    what = UNSUPPORTED_SELECTORS.get(ch)
    if what is None or "[" not in text[:offset]:
        return None
    return f"unsupported: {what} are not part of attend's path subset; select with `where:` instead"


def _hint(text: str, offset: int, start: str) -> str | None:
    """A specific message for a well-known mistake at `offset`, or None."""
    ch = text[offset] if offset < len(text) else ""
    if start == "path":
        if offset == 0 and not text.startswith("$"):
            return "a path starts with '$' (for example $.items[*])"
        if ch == "." and text[max(0, offset - 2) : offset] == "..":
            return "too many dots; write '.' for a child or '..' for descendants"
        if ch and ch in "'\"" and text.count(ch, offset) == 1:
            return f"the quoted name is never closed; expected {ch}"
        unsupported = _unsupported(text, offset)
        if unsupported:
            return unsupported
        if ch == "-" and text[offset + 1 : offset + 2] == "0":
            return "-0 is not an index (RFC 9535); write 0"
    if start == "template":
        if offset > 0 and text[offset - 1] == "{" and ch == "}":
            return "an empty field reference '{}'; name a field, or write '{{}}' for literal braces"
        if ch == "}" and text.rfind("{", 0, offset) <= text.rfind("}", 0, offset):
            return "a lone '}' in a template; write '}}' for a literal brace"
        if ch == "{" or (offset >= len(text) and "{" in text):
            open_at = text.rfind("{", 0, offset + 1)
            if "}" not in text[open_at:]:
                return "'{' is never closed; expected a field name and '}' (write '{{' for a literal brace)"
        if ch.isspace() or ch == "":
            return "a field reference holds no spaces; expected a field name and '}'"
    if start == "property":
        if ch == "[":
            return "'[' in a property pattern is never closed; expected ']'"
        if ch == "." or offset == 0 or offset >= len(text):
            return "an empty part in a property name; expected a name between dots"
        if ch.isspace():
            return "a property name holds no spaces"
    return None
