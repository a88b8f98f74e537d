"""Expression strings → IR: paths, templates and where properties (ADR-403 §3, §8).

One lark grammar (`attend.lark`) with a start rule per expression kind, parsed with LALR and built
once per process on first use (the lint path never pays for it unless a sensor has expressions).
Every parse failure becomes an `attend` error that says what was expected and where; no lark
exception ever reaches a caller. `regex_problem` says why a `matches` pattern is no regular expression.
"""

from __future__ import annotations

from pathlib import Path as _FsPath

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, Protocol, overload

    from lark import Lark, Token, Tree
    from lark.tree import Meta

from attend import ir
from attend.bounds import MAX_PLACEHOLDERS, MAX_TEMPLATE_CHARS, pattern_shape
from attend.errors import AttendSyntaxError, PathSyntaxError, Span, line_col
from attend.grammar.simple import READERS, has_glob, node_span, template_ref

if TYPE_CHECKING:
    #: What an expression parses to: a path, a template or a where property.
    Expression = ir.Path | ir.Template | ir.PropertyPattern

    class ExpressionTransformer(Protocol):
        """The lark transformer of one expression (ToIR): its parse tree to its IR."""

        def transform(self, tree: Tree[Token]) -> Expression: ...


_GRAMMAR_FILE = _FsPath(__file__).with_name("attend.lark")
_parser: Lark | None = None


def _cache_file() -> str | bool:
    """Where lark keeps the built LALR tables between processes: the user's own cache folder.

    lark checks the grammar's hash and its own version before using the file and rebuilds when either
    differs. Never a shared temporary folder: the cache is a pickle. No usable folder → no cache; and
    no cache when something other than a regular file holds its name (lark opens it plainly: a FIFO
    would block the compile for good, a symlink would be written through).
    """
    import os
    import stat

    from attend.files import xdg_home

    folder = os.path.join(xdg_home(os.environ, "XDG_CACHE_HOME"), "attend")
    path = os.path.join(folder, "grammar-lalr.cache")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    try:
        return path if stat.S_ISREG(os.lstat(path).st_mode) else False
    except FileNotFoundError:
        return path  # lark writes it
    except OSError:
        return False


def _lark() -> Lark:
    """The one LALR parser for all three start rules, built (or loaded from the cache) on first use."""
    global _parser
    if _parser is None:
        from lark import Lark

        _parser = Lark(
            _GRAMMAR_FILE.read_text(encoding="utf-8"),
            parser="lalr",
            start=["path", "template", "property"],
            propagate_positions=True,
            maybe_placeholders=False,
            cache=_cache_file(),
        )
    return _parser


def split_dotted(text: str) -> tuple[str, ...]:
    """A dotted field path (`key`, `author`) as its parts: ``"a.b"`` → ``("a", "b")``."""
    return tuple(text.split("."))


# ------------------------------------------------------------------------------------ expressions


#: The largest index magnitude RFC 9535 allows (I-JSON's exact integers): 2^53 - 1.
MAX_INDEX = 2**53 - 1

#: The one-character escapes of a quoted name; the quote escape is the one matching the delimiter.
_ESCAPES = {"\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")


def _hex4(body: str, at: int) -> int | None:
    """The code unit of the four hex digits at `body[at:at+4]`, or None."""
    digits = body[at : at + 4]
    return int(digits, 16) if len(digits) == 4 and _HEX.issuperset(digits) else None


def _unquote(token: str, offset: int, text: str) -> str:
    r"""The value of a quoted path name under RFC 9535's string-literal rules.

    Escapes are JSON's (`\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u` with four hex digits, as
    `\u00e9`) plus the escaped delimiter (`\'` inside single quotes, `\"` inside double quotes, never the
    other one). A `\u` high surrogate (`\ud83d`) must be followed by a `\u` low surrogate (`\ude00`: the
    pair is one character); control characters U+0000-U+001F and lone surrogates are refused, each with
    its position.
    """
    quote, body = token[0], token[1:-1]
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            code = ord(ch)
            if code < 0x20:
                raise _Failure(f"control character U+{code:04X} in a quoted name; write it as an escape (\\u{code:04x})", offset + 1 + i, text)
            if 0xD800 <= code <= 0xDFFF:
                raise _Failure(f"lone surrogate U+{code:04X} in a quoted name", offset + 1 + i, text)
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == quote:
            out.append(quote)
            i += 2
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "u" and (unit := _hex4(body, i + 2)) is not None:
            if 0xDC00 <= unit <= 0xDFFF:
                raise _Failure(f"low surrogate \\u{body[i + 2 : i + 6]} without a high surrogate before it", offset + 1 + i, text)
            if 0xD800 <= unit <= 0xDBFF:
                low = _hex4(body, i + 8) if body[i + 6 : i + 8] == "\\u" else None
                if low is None or not 0xDC00 <= low <= 0xDFFF:
                    raise _Failure(f"high surrogate \\u{body[i + 2 : i + 6]} must be followed by a low surrogate "
                                   "\\uDC00-\\uDFFF", offset + 1 + i, text)
                out.append(chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)))
                i += 12
            else:
                out.append(chr(unit))
                i += 6
        else:
            if nxt in "'\"":
                other = "double" if quote == '"' else "single"
                message = f"'\\{nxt}' is not an escape inside {other} quotes; write {nxt} as it is"
            elif nxt == "u":
                message = "unknown escape \\u without four hex digits in a quoted name"
            elif ord(nxt) < 0x20:
                message = f"unknown escape: a backslash before control character U+{ord(nxt):04X} in a quoted name"
            else:
                message = f"unknown escape '\\{nxt}' in a quoted name"
            raise _Failure(message, offset + 1 + i, text)
    return "".join(out)


def _index(token: str, offset: int, text: str) -> int:
    """An index token's value, refused outside ±(2^53-1) (checked on its digits: never `int()` of a huge string)."""
    digits = token.lstrip("-")
    if len(digits) > 16 or int(digits) > MAX_INDEX:
        raise _Failure(f"index {token[:20]}{'…' if len(token) > 20 else ''} is out of range; an index is within ±{MAX_INDEX} (2^53-1)", offset, text)
    return int(token)


class _Failure(Exception):
    """A positioned parse failure inside one expression (0-based offset)."""

    def __init__(self, message: str, offset: int, text: str) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.text = text


def _span_of(meta: Meta, base: Span | None, text: str) -> Span | None:
    if getattr(meta, "empty", True):
        return None
    return node_span(base, text, meta.start_pos, meta.end_pos)


_transformer_class: Callable[[str, Span | None], ExpressionTransformer] | None = None


def _transformer(text: str, base: Span | None) -> ExpressionTransformer:
    """A transformer for one expression; its class is built once per process (lark wraps every
    method on class creation, which cost more than the parse itself when done per expression)."""
    global _transformer_class
    if _transformer_class is None:
        _transformer_class = _build_transformer_class()
    return _transformer_class(text, base)


def _build_transformer_class() -> Callable[[str, Span | None], ExpressionTransformer]:
    from lark import Token, Transformer, v_args

    @v_args(meta=True)
    class ToIR(Transformer[Token, "Expression"]):
        """Parse tree → IR nodes, with spans from lark's positions inside `text` (shifted by `base`)."""

        def __init__(self, text: str, base: Span | None) -> None:
            super().__init__()
            # underscored: `text` is also a rule name, and so a method of this class
            self._expr = text
            self._base = base

        def _sp(self, meta: Meta) -> Span | None:
            return _span_of(meta, self._base, self._expr)

        def path(self, meta: Meta, children: list[Any]) -> ir.Path:
            return ir.Path(segments=tuple(children[1:]), span=self._sp(meta))

        def child_name(self, meta: Meta, children: list[Any]) -> ir.ChildSegment:
            name = children[1]
            return ir.ChildSegment(selector=ir.NameSelector(name=str(name), span=self._sp(meta)), span=self._sp(meta))

        def child_wild(self, meta: Meta, children: list[Any]) -> ir.ChildSegment:
            return ir.ChildSegment(selector=ir.WildcardSelector(span=self._sp(meta)), span=self._sp(meta))

        def child_bracket(self, meta: Meta, children: list[Any]) -> ir.ChildSegment:
            return ir.ChildSegment(selector=children[0], span=self._sp(meta))

        def desc_name(self, meta: Meta, children: list[Any]) -> ir.DescendantSegment:
            return ir.DescendantSegment(selector=ir.NameSelector(name=str(children[1]), span=self._sp(meta)), span=self._sp(meta))

        def desc_wild(self, meta: Meta, children: list[Any]) -> ir.DescendantSegment:
            return ir.DescendantSegment(selector=ir.WildcardSelector(span=self._sp(meta)), span=self._sp(meta))

        def desc_bracket(self, meta: Meta, children: list[Any]) -> ir.DescendantSegment:
            selector = children[1]
            return ir.DescendantSegment(selector=selector, span=self._sp(meta))

        def sel_name(self, meta: Meta, children: list[Any]) -> ir.NameSelector:
            token = children[0]
            return ir.NameSelector(name=_unquote(str(token), token.start_pos, self._expr), span=self._sp(meta))

        def sel_index(self, meta: Meta, children: list[Any]) -> ir.IndexSelector:
            token = children[0]
            return ir.IndexSelector(index=_index(str(token), token.start_pos, self._expr), span=self._sp(meta))

        def sel_wild(self, meta: Meta, children: list[Any]) -> ir.WildcardSelector:
            return ir.WildcardSelector(span=self._sp(meta))

        def template(self, meta: Meta, children: list[Any]) -> ir.Template:
            parts: list[ir.TemplatePart] = []
            for part in children:
                # adjacent literal pieces (text, `{{`, `}}`) merge into one Literal_
                if isinstance(part, ir.Literal_) and parts and isinstance(parts[-1], ir.Literal_):
                    parts[-1] = ir.Literal_(text=parts[-1].text + part.text, span=parts[-1].span)
                else:
                    parts.append(part)
            return ir.Template(parts=tuple(parts), span=self._sp(meta))

        def text(self, meta: Meta, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text=str(children[0]), span=self._sp(meta))

        def lbrace(self, meta: Meta, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text="{", span=self._sp(meta))

        def rbrace(self, meta: Meta, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text="}", span=self._sp(meta))

        def ref(self, meta: Meta, children: list[Any]) -> ir.FieldRef:
            ref = template_ref([str(c) for c in children if c.type == "FIELD"])
            if isinstance(ref, str):
                raise _Failure(ref, meta.start_pos, self._expr)
            return ir.FieldRef(root=ref[0], fields=ref[1], span=self._sp(meta))

        def property(self, meta: Meta, children: list[Any]) -> ir.PropertyPattern:
            parts = tuple(str(c) for c in children if c.type == "PART")
            return ir.PropertyPattern(parts=parts, globbed=tuple(has_glob(p) for p in parts), span=self._sp(meta))

    return ToIR


if TYPE_CHECKING:  # what each start rule parses to (the grammar's three)
    @overload
    def _parse(text: str, start: Literal["path"], span: Span | None, error: type[AttendSyntaxError],
               code: str) -> ir.Path: ...
    @overload
    def _parse(text: str, start: Literal["template"], span: Span | None, error: type[AttendSyntaxError],
               code: str) -> ir.Template: ...
    @overload
    def _parse(text: str, start: Literal["property"], span: Span | None, error: type[AttendSyntaxError],
               code: str) -> ir.PropertyPattern: ...


def _parse(text: str, start: str, span: Span | None, error: type[AttendSyntaxError], code: str) -> Any:
    """Parse `text` from rule `start`: the plain shapes without lark (`grammar.simple`), the rest with it.

    A template is measured first (MAX_TEMPLATE_CHARS, MAX_PLACEHOLDERS): a 150 KB description of
    50,000 placeholders would otherwise take minutes to parse and to render at every fire.
    """
    if start == "template":
        problem = _template_bounds(text)
        if problem is not None:
            raise _positioned(error, code, problem[0], text, problem[1], span)
    simple = READERS[start](text, span)
    if simple is not None:
        return simple
    return _parse_with_lark(text, start, span, error, code)


def _template_bounds(text: str) -> tuple[str, int] | None:
    """Why a template is past its bounds (message, 0-based offset), or None."""
    if len(text) > MAX_TEMPLATE_CHARS:
        return (f"the template has {len(text):,} characters: at most {MAX_TEMPLATE_CHARS:,} are allowed",
                MAX_TEMPLATE_CHARS)
    count, i = 0, text.find("{")
    while i >= 0:
        if text.startswith("{{", i):
            i = text.find("{", i + 2)
            continue
        count += 1
        if count > MAX_PLACEHOLDERS:
            return f"the template has more than {MAX_PLACEHOLDERS} placeholders", i
        i = text.find("{", i + 1)
    return None


def _parse_with_lark(
    text: str,
    start: str,
    span: Span | None,
    error: type[AttendSyntaxError],
    code: str,
) -> Expression:
    """The grammar's own parse (every shape, every error message)."""
    from lark.exceptions import LarkError, VisitError

    try:
        tree = _lark().parse(text, start=start)
        return _transformer(text, span).transform(tree)
    except VisitError as exc:
        failure = exc.orig_exc
        if not isinstance(failure, _Failure):
            raise
        message, offset = failure.message, failure.offset
    except _Failure as failure:
        message, offset = failure.message, failure.offset
    except LarkError as exc:
        from attend.grammar.parse_errors import (
            describe_failure,  # only for text lark refuses
        )

        message, offset = describe_failure(exc, text, start)
    raise _positioned(error, code, message, text, offset, span)


def _positioned(
    error: type[AttendSyntaxError], code: str, message: str, text: str, offset: int, span: Span | None
) -> AttendSyntaxError:
    """An error at character `offset` of `text`, shifted into the file when `span` is given."""
    if span is None:
        line, col = line_col(text, offset)
        return error(message, code=code, line=line, col=col, expression=text, offset=offset)
    at = span.shifted(text, offset)
    return error(message, code=code, file=at.file, line=at.line, col=at.col, expression=text, offset=offset)


def parse_path(text: str, span: Span | None = None) -> ir.Path:
    """Parse a JSONPath of the spec's subset.

    Args:
        text: the expression, e.g. ``$.items[*]``.
        span: where the expression's first character stands in its file (for positioned errors).

    Returns:
        The `ir.Path`.

    Raises:
        PathSyntaxError: `.column` is 1-based inside the expression (or the file column when `span`
            is given); `.offset` is always the 0-based offset inside the expression.
    """
    if not isinstance(text, str):
        raise PathSyntaxError(f"a path must be a string, not {type(text).__name__}", expression=str(text))
    return _parse(text, "path", span, PathSyntaxError, "path-syntax")


def parse_template(text: str, span: Span | None = None) -> ir.Template:
    """Parse a description template (`{field}`, `{value}`, `{key}`, `{previous.field}`, `{{`, `}}`).

    Raises:
        AttendSyntaxError: code ``template-syntax``, positioned like `parse_path`.
    """
    return _parse(text, "template", span, AttendSyntaxError, "template-syntax")


def parse_property(text: str, span: Span | None = None) -> ir.PropertyPattern:
    """Parse a where property: dotted parts, each possibly a glob (`wind_*`, `tags.[ab]*`).

    Raises:
        AttendSyntaxError: code ``pattern-syntax``, positioned like `parse_path`.
    """
    return _parse(text, "property", span, AttendSyntaxError, "pattern-syntax")


def regex_problem(pattern: str) -> tuple[str, int] | None:
    """Why `pattern` is not a valid regular expression (message, 0-based offset), or None.

    The pattern is measured against its bounds first (`attend.bounds.pattern_shape`: length, repetition
    counts, group nesting, expanded size), so no compiler sees one that would crash it (a segfault in
    `regex` no `try` can catch) or take seconds. Then the `regex` module (what `matches` runs) reads
    every pattern the standard `re` reads, so a pattern `re` compiles is valid without importing
    `regex` (a third of the lint path's import time); only what `re` refuses is asked of `regex`, which
    accepts more (`\\p{L}`, variable lookbehind) and positions its errors. Any exception its compile
    raises (`regex.error`, `ValueError` for incompatible flags, `RecursionError`, ...) is the pattern's
    error.
    """
    import re
    import warnings

    shape = pattern_shape(pattern)
    if shape.problem is not None:
        return f"regular expression refused: {shape.problem}", min(shape.offset, len(pattern))
    first: re.error | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a pattern `re` warns about (a possible nested set) goes to regex
            re.compile(pattern)
    except re.error as exc:
        first = exc
    except Exception:  # noqa: BLE001 - whatever `re` makes of it, `regex` decides
        pass
    else:
        return None
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        pos = getattr(exc, "pos", None)  # regex's error carries `pos` and `msg` (its stubs leave them out)
        pos = pos if isinstance(pos, int) else 0
        if first is not None and isinstance(first.pos, int):
            # both refuse it: `re` places an unterminated `[` or `(` where it opens, `regex` at the end
            pos = min(pos, first.pos)
        return f"invalid regular expression: {getattr(exc, 'msg', exc)}", min(pos, len(pattern))
    except (ValueError, RecursionError, OverflowError, MemoryError, IndexError, TypeError) as exc:
        return f"invalid regular expression: {exc}", 0
    return None
