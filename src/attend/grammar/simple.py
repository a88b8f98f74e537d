"""The common expression shapes read without lark: same IR, same spans, for a fraction of the cost.

Most expressions in real sensor files are plain: `$.items[*]`, `wind_speed_*`, `new item {id}: {title}`.
`compile --check` of one file would otherwise pay for importing lark and building its lexers (about
a third of its start-up), and a large file for one LALR parse and one tree transform per where
property. Each reader below accepts only text that the grammar (`attend.lark`) tokenizes in exactly
one obvious way, and builds the IR the grammar's transformer would build, spans included; anything
else (descendant segments, quoted names, `{{`, `}}`, whitespace, any error) returns None and goes
to lark, which stays the one authority on the language and on every error message.
tests/grammar/test_simple_shapes.py checks each reader against lark, spans included.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend import ir
from attend.errors import Span, line_col

__all__ = ["GLOB_CHARS", "READERS", "has_glob", "node_span", "read_path", "read_property", "read_template", "template_ref"]

#: attend.lark's NAME, PART and FIELD character sets (keep in step with the grammar), except that
#: `_NAME` lets the surrogates U+D800-DFFF through and `read_path` refuses them itself: a class
#: reaching past U+00FF makes `re` build a 64K-entry map, half a millisecond of every start-up.
_NAME = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f][^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*"
_PLAIN_PART = r"[^.\[\]\s]+"
_FIELD = r"[^{}.\s]+"

#: RFC 9535's index bound, ±(2^53-1) (grammar.MAX_INDEX; the pattern below caps digits at 16).
_MAX_INDEX = 2**53 - 1
#: One path segment of the plain shapes: `.name`, `.*`, `[*]`, `[n]` (groups: name, index).
_SEGMENT = re.compile(rf"\.({_NAME})|\.\*|\[\*\]|\[(0|-?[1-9][0-9]{0,15})\]")
#: A property with no bracket glob: dotted plain parts.
_PROPERTY = re.compile(rf"{_PLAIN_PART}(?:\.{_PLAIN_PART})*")
#: One template piece: literal text, or `{field.field}` (groups: text, fields).
_TEMPLATE_PIECE = re.compile(rf"([^{{}}]+)|\{{({_FIELD}(?:\.{_FIELD})*)\}}")
#: Characters that make a where string (or a property part) a glob (DESIGN.md, Trigger semantics).
GLOB_CHARS = frozenset("*?[")


def has_glob(text: str) -> bool:
    """True when `text` holds a glob character (`*`, `?` or `[`)."""
    return not GLOB_CHARS.isdisjoint(text)


def node_span(base: Span | None, text: str, start: int, end: int) -> Span:
    """The span of a node covering text[start:end]: inside the expression when `base` is None, else
    shifted into the file from `base`. The readers below and the grammar's transformer both use it."""
    if base is None:
        line, col = line_col(text, start)
        return Span(None, line, col, start, end)
    return base.shifted(text, start)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def read_path(text: str, base: Span | None) -> ir.Path | None:
    """`$` followed by `.name`, `.*`, `[*]` and `[n]` segments, or None."""
    if not text.startswith("$"):
        return None
    segments: list[ir.ChildSegment] = []
    pos, end = 1, len(text)
    while pos < end:
        m = _SEGMENT.match(text, pos)
        if m is None:
            return None
        start, pos = pos, m.end()
        name, index = m.group(1), m.group(2)
        if name is not None:
            if not name.isascii() and _has_surrogate(name):
                return None  # not a NAME character: lark's parser words the error
            whole = node_span(base, text, start, pos)
            selector: ir.Selector = ir.NameSelector(name=name, span=whole)
        elif index is not None:
            if abs(int(index)) > _MAX_INDEX:
                return None  # out of range: lark's transformer words the error
            selector = ir.IndexSelector(index=int(index), span=node_span(base, text, start + 1, pos - 1))
        elif text[start] == ".":
            selector = ir.WildcardSelector(span=node_span(base, text, start, pos))
        else:
            selector = ir.WildcardSelector(span=node_span(base, text, start + 1, pos - 1))
        segments.append(ir.ChildSegment(selector=selector, span=node_span(base, text, start, pos)))
    return ir.Path(segments=tuple(segments), span=node_span(base, text, 0, end))


def read_property(text: str, base: Span | None) -> ir.PropertyPattern | None:
    """Dotted parts without brackets or whitespace (`wind_*`, `author.login`), or None."""
    if _PROPERTY.fullmatch(text) is None:
        return None
    parts = tuple(text.split("."))
    return ir.PropertyPattern(
        parts=parts, globbed=tuple(has_glob(p) for p in parts), span=node_span(base, text, 0, len(text))
    )


def read_template(text: str, base: Span | None) -> ir.Template | None:
    """Literal text and `{field}` references without `{{`, `}}` or whitespace in a reference, or None."""
    if not text or "{{" in text or "}}" in text:
        return None
    parts: list[ir.TemplatePart] = []
    pos, end = 0, len(text)
    while pos < end:
        m = _TEMPLATE_PIECE.match(text, pos)
        if m is None:
            return None
        pos = m.end()
        literal, fields = m.group(1), m.group(2)
        if literal is not None:
            parts.append(ir.Literal_(text=literal, span=node_span(base, text, m.start(), pos)))
        else:
            start, stop = m.start(2), m.end(2)
            ref = template_ref(fields.split("."))
            if isinstance(ref, str):
                return None  # an error: lark's transformer words it
            parts.append(ir.FieldRef(root=ref[0], fields=ref[1], span=node_span(base, text, start, stop)))
    return ir.Template(parts=tuple(parts), span=node_span(base, text, 0, end))


#: `['name']`, `["name"]` or `[n]` in a reference: the path bracket a template author may try.
_BRACKET = re.compile(r"""\[(?:'([^'\]]*)'|"([^"\]]*)"|([0-9]+))\]""")


def template_ref(names: list[str]) -> tuple[ir.TemplateRoot, tuple[str, ...]] | str:
    """The root and fields of a template reference's dotted names, or why it is refused.

    `value`, `key` and `previous` are reserved roots (ir.TEMPLATE_ROOTS); `$` is the item itself, so
    `{$.value}` reads the item's field `value` that `{value}` (the whole item) hides. Brackets are path
    syntax, not template syntax: `{['value']}` would read a field named `['value']`, so it is refused
    with the dotted form to write instead."""
    first = names[0]
    if first == "$":
        return ("item", tuple(names[1:])) if len(names) > 1 else ("value", ())
    if any("[" in name for name in names):
        dotted = _BRACKET.sub(lambda m: "." + next(g for g in m.groups() if g is not None), ".".join(names))
        dotted = dotted if dotted.startswith(".") else "." + dotted
        return f"a template reference takes dotted fields, not brackets: write {{${dotted}}}"
    if first in ("value", "key") and len(names) > 1:
        # {value} is the item, so {value.x} meant the item's x; {key} is not, so {key.x} meant its `key`
        field = ".".join(names[1:] if first == "value" else names)
        return f"{{{first}}} takes no fields; to read the item's field write {{$.{field}}}"
    root = next((r for r in ir.TEMPLATE_ROOTS if r == first), None)
    if root is not None:
        return root, tuple(names[1:])
    return "item", tuple(names)


#: The reader for each start rule of the grammar.
READERS: dict[str, Callable[[str, Span | None], Any]] = {
    "path": read_path,
    "property": read_property,
    "template": read_template,
}
