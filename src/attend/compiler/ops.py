"""The runtime operations compiled closures call (the one module they reach into; Jinja's discipline).

Every closure the compiler builds for a path, condition or template calls only names from this
module, so what an evaluator can do at poll time is exactly what is listed here: field access with a
`MISSING` marker, the where comparisons (equality that keeps booleans apart from numbers, numeric
strings compared as numbers in `above`/`below`, `contains` over strings, lists and mappings), the
glob and regex matchers, and the rendering of a value into a description.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from attend.bounds import MAX_DESCRIPTION_CHARS, PATTERN_TIMEOUT_SECONDS
from attend.redact import shorten

__all__ = [
    "GLOB_FLAGS",
    "MISSING",
    "REGEX_TIMEOUT",
    "as_number",
    "compile_glob",
    "glob_regex",
    "compact_json",
    "compile_regex",
    "contains",
    "descendants",
    "get_dotted",
    "is_index",
    "key_text",
    "key_value",
    "render_value",
    "same",
]


class _Missing:
    """The value of a field that is not there (distinct from JSON null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: The marker for a field the item does not have.
MISSING: Final = _Missing()

#: Seconds a single `matches` search may take before it counts as not matching (and warns):
#: a catastrophic pattern must never hang a poll.
REGEX_TIMEOUT = PATTERN_TIMEOUT_SECONDS


def _glob_flags() -> int:
    from wcmatch import fnmatch

    # CASE: case-sensitive everywhere (a where value is data, not a file name on a case-folding system);
    # DOTMATCH: `*` also matches a leading dot. No BRACE/EXTMATCH/NEGATE: `{`, `(` and `!` are literal.
    return fnmatch.CASE | fnmatch.DOTMATCH


#: wcmatch fnmatch flags of every `like` pattern and glob property part (documented in docs/triggers.md).
GLOB_FLAGS: int = 0


def compile_glob(pattern: str) -> Callable[[str], object]:
    """A matcher for a glob (`*`, `?`, `[…]`, `[!…]`) as a compiled-regex `fullmatch`-style callable."""
    import re

    return re.compile(glob_regex(pattern)).match


def glob_regex(pattern: str) -> str:
    """The regular expression `compile_glob` matches a glob with (what `explain` shows)."""
    from wcmatch import fnmatch

    global GLOB_FLAGS
    if not GLOB_FLAGS:
        GLOB_FLAGS = _glob_flags()
    include, _exclude = fnmatch.translate(pattern, flags=GLOB_FLAGS)
    return include[0]


#: Subjects up to this many characters skip the timeout when the pattern cannot backtrack
#: catastrophically (see `regex_needs_timeout`): at most one unbounded quantifier over such a subject
#: is at worst quadratic, a few milliseconds, while setting up a timeout costs ~2 µs on every search.
SAFE_SUBJECT_CHARS = 1000


def regex_needs_timeout(pattern: str) -> bool:
    """True unless `pattern` has a shape that cannot backtrack catastrophically.

    Safe means: no backreference, no repeated group (`(...)*`, `(...)+`, `(...){2,}`) and at most one
    unbounded quantifier (`*`, `+`, `{n,}`) outside character classes, and none of what
    `attend.bounds.pattern_shape` calls special (fuzzy matching, lookarounds, conditionals, recursion,
    flags such as BESTMATCH). Anything else (the shapes of ReDoS: nested or adjacent repetition, repeated
    alternation, fuzzy matching) is always searched with the timeout.
    """
    from attend.bounds import pattern_shape

    if pattern_shape(pattern).special:
        return True
    i, n = 0, len(pattern)
    unbounded = 0
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if (nxt.isdigit() and nxt != "0") or nxt in ("g", "k"):
                return True  # a backreference
            i += 2
            continue
        if ch == "[":
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            continue
        if pattern.startswith("(?P=", i):
            return True
        quantifier = ch in "*+" or (ch == "{" and "," in pattern[i : pattern.find("}", i) + 1])
        repeated_group = ch == "{" and i > 0 and pattern[i - 1] == ")"
        if quantifier or repeated_group:
            if i > 0 and pattern[i - 1] == ")":
                return True
            unbounded += 1
            if unbounded > 1:
                return True
        i += 1
    return False


def compile_regex(pattern: str) -> Callable[[str], bool]:
    """A `matches` search (the `regex` module, unanchored): True when the pattern occurs in the subject.

    Raises TimeoutError when a search runs past `REGEX_TIMEOUT` (the caller warns and counts it as
    no match). Patterns that cannot backtrack catastrophically skip the timeout on short subjects.
    """
    import regex

    search = regex.compile(pattern).search
    guarded = regex_needs_timeout(pattern)
    limit = SAFE_SUBJECT_CHARS

    def matches(subject: str) -> bool:
        if guarded or len(subject) > limit:
            return search(subject, timeout=REGEX_TIMEOUT) is not None
        return search(subject) is not None

    return matches


def is_index(name: str) -> bool:
    """True when a dotted part indexes a list: ASCII digits (after one optional `-`), at most 18 of them.

    `str.isdigit` is true for `²` and `٣`, which `int` refuses; and no list is long enough for a longer
    index, whose conversion Python would refuse past 4,300 digits.
    """
    digits = name[1:] if name[:1] == "-" else name
    return 0 < len(digits) <= 18 and digits.isascii() and digits.isdigit()


def get_dotted(value: Any, fields: tuple[str, ...]) -> Any:
    """The value at a dotted field path inside mappings (an ASCII-digit part also indexes a list), or MISSING."""
    for name in fields:
        if isinstance(value, dict):
            value = value.get(name, MISSING)
            if value is MISSING:
                return MISSING
        elif isinstance(value, list) and is_index(name):
            index = int(name)
            if -len(value) <= index < len(value):
                value = value[index]
            else:
                return MISSING
        else:
            return MISSING
    return value


def same(a: object, b: object) -> bool:
    """JSON equality: booleans are never equal to numbers (`true` ≠ `1`), 1 equals 1.0."""
    if isinstance(a, bool) is not isinstance(b, bool):
        return False
    return bool(a == b)


def as_number(value: object) -> float | None:
    """A number (not a boolean) or a numeric string as a float; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def contains(value: object, needle: object) -> bool:
    """`contains`: a substring of a string, an element of a list, or a key of a mapping."""
    if isinstance(value, str):
        return isinstance(needle, str) and needle in value
    if isinstance(value, list):
        return any(same(element, needle) for element in value)
    if isinstance(value, dict):
        return isinstance(needle, str) and needle in value
    return False


def descendants(node: Any, out: list[Any]) -> None:
    """Append `node` and every container below it, each before its own descendants (RFC 9535 order).

    Only mappings and lists are appended: a descendant segment's selector selects nothing from a scalar.
    Walked with an explicit stack of iterators, so a document nested deeper than Python's recursion
    limit is walked like any other.
    """
    out.append(node)
    append = out.append
    stack = [iter(node.values() if isinstance(node, dict) else node)]
    while stack:
        for child in stack[-1]:
            if isinstance(child, dict):
                append(child)
                stack.append(iter(child.values()))
                break
            if isinstance(child, list):
                append(child)
                stack.append(iter(child))
                break
        else:
            stack.pop()


#: The longest text one reference renders (bounds.MAX_DESCRIPTION_CHARS); longer is cut with "…".
RENDER_LIMIT = MAX_DESCRIPTION_CHARS


def render_value(value: object) -> str:
    """A selected value as description text, the one rendering everywhere (polls, fires, `attend test`):
    strings as they are, anything else as compact JSON in document order (`{"a":1,"b":[2,3]}`).
    At most `RENDER_LIMIT` characters (cut with "…"), computed without rendering the rest."""
    if isinstance(value, str):
        return value if len(value) <= RENDER_LIMIT else shorten(value, RENDER_LIMIT)  # a cut redacts first
    if value is MISSING:
        return ""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= RENDER_LIMIT else text[: RENDER_LIMIT - 1] + "…"
    return compact_json(value, RENDER_LIMIT)


def _json_scalar(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, int) or (value == value and abs(value) != float("inf")) else json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def compact_json(value: object, limit: int) -> str:
    """`value` as compact JSON in document order, cut to `limit` characters with "…".

    Written without recursion and stopping as soon as the limit is passed, so neither a deep nor a huge
    value costs more than the characters it shows.
    """
    out: list[str] = []
    size = 0
    # one frame per open container: [iterator, is_mapping, first]
    stack: list[list[Any]] = []
    node = value
    while True:
        if isinstance(node, dict):
            out.append("{")
            stack.append([iter(node.items()), True, True])
        elif isinstance(node, list):
            out.append("[")
            stack.append([iter(node), False, True])
        else:
            out.append(_json_scalar(node))
        size += len(out[-1])
        while stack:
            if size > limit:
                return shorten("".join(out), limit)  # the last scalar is whole here: redacted, then cut
            frame = stack[-1]
            nxt = next(frame[0], _END)
            if nxt is _END:
                out.append("}" if frame[1] else "]")
                size += 1
                stack.pop()
                continue
            if not frame[2]:
                out.append(",")
                size += 1
            frame[2] = False
            if frame[1]:
                key, node = nxt
                out.append(json.dumps(key if isinstance(key, str) else str(key), ensure_ascii=False) + ":")
                size += len(out[-1])
            else:
                node = nxt
            break
        else:
            break
    text = "".join(out)
    return text if len(text) <= limit else shorten(text, limit)


_END: Any = object()


#: The first character of a state key that stands for a key value other than a string: the JSON text
#: of the value follows. A string key is its own text unless it begins with this character itself.
KEY_MARK = "\x1f"


def key_text(value: object) -> str:
    """An item's key value as the text the state keys items by: one text per JSON value, type included.

    A string is its own text (the common case, and readable in the store); any other value is
    `KEY_MARK` followed by its compact JSON (mappings with sorted keys, so equal values agree), and a
    string that itself begins with `KEY_MARK` is written the same way, so `1`, `"1"` and `true` are
    three different items. `key_value` reads a text back.
    """
    if value.__class__ is str:
        return value if value[:1] != KEY_MARK else KEY_MARK + json.dumps(value)
    if value.__class__ is int:
        return KEY_MARK + str(value)  # what json.dumps gives, without its cost (keys are mostly ids)
    return KEY_MARK + json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def key_value(text: str) -> Any:
    """The key value a `key_text` text stands for (`Fire.key`)."""
    if text[:1] != KEY_MARK:
        return text
    body = text[1:]
    try:
        return int(body)  # the common non-string key (a number id), without json.loads' cost
    except ValueError:
        return json.loads(body)
