"""Expression strings → IR: paths, templates, where properties and whole triggers (ADR-403 §3, §8).

One lark grammar (`attend.lark`) with a start rule per expression kind, parsed with LALR and built
once per process on first use (the lint path never pays for it unless a sensor has expressions).
Every parse failure becomes an `attend` error that says what was expected and where; no lark
exception ever reaches a caller. `parse_trigger` turns one trigger's YAML mapping into an
`ir.Trigger`, applying the bare-value rules of DESIGN.md ("Trigger semantics").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path as _FsPath

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend import ir
from attend.bounds import (
    MAX_ERRORS_PER_FILE,
    MAX_PLACEHOLDERS,
    MAX_TEMPLATE_CHARS,
    pattern_shape,
)
from attend.errors import (
    AttendSyntaxError,
    CompileError,
    PathSyntaxError,
    Span,
    line_col,
)
from attend.grammar.simple import GLOB_CHARS, READERS, has_glob, node_span, template_ref

__all__ = [
    "GLOB_CHARS",
    "has_glob",
    "parse_path",
    "parse_property",
    "parse_template",
    "parse_trigger",
    "parse_trigger_collecting",
    "read_flap",
    "split_dotted",
]

_GRAMMAR_FILE = _FsPath(__file__).with_name("attend.lark")
_parser: Any = None


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


def _lark() -> Any:
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


def _span_of(meta: Any, base: Span | None, text: str) -> Span | None:
    if getattr(meta, "empty", True):
        return None
    return node_span(base, text, meta.start_pos, meta.end_pos)


_transformer_class: Any = None


def _transformer(text: str, base: Span | None) -> Any:
    """A transformer for one expression; its class is built once per process (lark wraps every
    method on class creation, which cost more than the parse itself when done per expression)."""
    global _transformer_class
    if _transformer_class is None:
        _transformer_class = _build_transformer_class()
    return _transformer_class(text, base)


def _build_transformer_class() -> Any:
    from lark import Transformer, v_args

    @v_args(meta=True)
    class ToIR(Transformer):  # type: ignore[type-arg]  # its leaves and results are any IR node
        """Parse tree → IR nodes, with spans from lark's positions inside `text` (shifted by `base`)."""

        def __init__(self, text: str, base: Span | None) -> None:
            super().__init__()
            # underscored: `text` is also a rule name, and so a method of this class
            self._expr = text
            self._base = base

        def _sp(self, meta: Any) -> Span | None:
            return _span_of(meta, self._base, self._expr)

        def path(self, meta: Any, children: list[Any]) -> ir.Path:
            return ir.Path(segments=tuple(children[1:]), span=self._sp(meta))

        def child_name(self, meta: Any, children: list[Any]) -> ir.ChildSegment:
            name = children[1]
            return ir.ChildSegment(selector=ir.NameSelector(name=str(name), span=self._sp(meta)), span=self._sp(meta))

        def child_wild(self, meta: Any, children: list[Any]) -> ir.ChildSegment:
            return ir.ChildSegment(selector=ir.WildcardSelector(span=self._sp(meta)), span=self._sp(meta))

        def child_bracket(self, meta: Any, children: list[Any]) -> ir.ChildSegment:
            return ir.ChildSegment(selector=children[0], span=self._sp(meta))

        def desc_name(self, meta: Any, children: list[Any]) -> ir.DescendantSegment:
            return ir.DescendantSegment(selector=ir.NameSelector(name=str(children[1]), span=self._sp(meta)), span=self._sp(meta))

        def desc_wild(self, meta: Any, children: list[Any]) -> ir.DescendantSegment:
            return ir.DescendantSegment(selector=ir.WildcardSelector(span=self._sp(meta)), span=self._sp(meta))

        def desc_bracket(self, meta: Any, children: list[Any]) -> ir.DescendantSegment:
            selector = children[1]
            return ir.DescendantSegment(selector=selector, span=self._sp(meta))

        def sel_name(self, meta: Any, children: list[Any]) -> ir.NameSelector:
            token = children[0]
            return ir.NameSelector(name=_unquote(str(token), token.start_pos, self._expr), span=self._sp(meta))

        def sel_index(self, meta: Any, children: list[Any]) -> ir.IndexSelector:
            token = children[0]
            return ir.IndexSelector(index=_index(str(token), token.start_pos, self._expr), span=self._sp(meta))

        def sel_wild(self, meta: Any, children: list[Any]) -> ir.WildcardSelector:
            return ir.WildcardSelector(span=self._sp(meta))

        def template(self, meta: Any, children: list[Any]) -> ir.Template:
            parts: list[ir.TemplatePart] = []
            for part in children:
                # adjacent literal pieces (text, `{{`, `}}`) merge into one Literal_
                if isinstance(part, ir.Literal_) and parts and isinstance(parts[-1], ir.Literal_):
                    parts[-1] = ir.Literal_(text=parts[-1].text + part.text, span=parts[-1].span)
                else:
                    parts.append(part)
            return ir.Template(parts=tuple(parts), span=self._sp(meta))

        def text(self, meta: Any, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text=str(children[0]), span=self._sp(meta))

        def lbrace(self, meta: Any, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text="{", span=self._sp(meta))

        def rbrace(self, meta: Any, children: list[Any]) -> ir.Literal_:
            return ir.Literal_(text="}", span=self._sp(meta))

        def ref(self, meta: Any, children: list[Any]) -> ir.FieldRef:
            ref = template_ref([str(c) for c in children if c.type == "FIELD"])
            if isinstance(ref, str):
                raise _Failure(ref, meta.start_pos, self._expr)
            return ir.FieldRef(root=ref[0], fields=ref[1], span=self._sp(meta))

        def property(self, meta: Any, children: list[Any]) -> ir.PropertyPattern:
            parts = tuple(str(c) for c in children if c.type == "PART")
            return ir.PropertyPattern(parts=parts, globbed=tuple(has_glob(p) for p in parts), span=self._sp(meta))

    return ToIR


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
) -> Any:
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
        from attend.grammar.messages import (
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
        exc = error(message, code=code, line=line, col=col, expression=text)
    else:
        at = span.shifted(text, offset)
        exc = error(message, code=code, file=at.file, line=at.line, col=at.col, expression=text)
    exc.offset = offset  # type: ignore[attr-defined]
    return exc


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


# --------------------------------------------------------------------------------------- triggers

#: Operators whose operand must be a number.
_NUMERIC_OPERATORS = ("above", "below")


class _TriggerReader:
    """Reads one trigger mapping into IR, collecting (or raising) positioned CompileErrors."""

    def __init__(self, name: str, origins: Mapping[tuple[str, ...], Any] | None, collect: bool) -> None:
        self.name = name
        self.origins = origins or {}
        self.collect = collect
        self.errors: list[CompileError] = []

    # -- positions

    def _base(self, keypath: tuple[str, ...], *, key: bool = False) -> tuple[Span | None, int]:
        origin = self.origins.get(keypath)
        if origin is None:
            return None, 0
        if key:
            return origin.key_span, 0
        if origin.style in ("|", ">"):
            # a block scalar's text starts on the next line; point at its indicator
            return None, 0
        return origin.span, origin.quote

    def fail(self, message: str, *, field: str, code: str, keypath: tuple[str, ...], key: bool = False) -> None:
        origin = self.origins.get(keypath)
        if origin is not None:
            span = origin.key_span if key else origin.span
            exc = CompileError(message, field=field, code=code, file=span.file, line=span.line, col=span.col)
        else:
            exc = CompileError(message, field=field, code=code)
        exc.keypath = keypath  # type: ignore[attr-defined]
        self._raise(exc)

    @property
    def full(self) -> bool:
        """True once a collecting reader holds more errors than a file reports: reading stops there."""
        return self.collect and len(self.errors) > MAX_ERRORS_PER_FILE

    def _raise(self, exc: CompileError) -> None:
        if not self.collect:
            raise exc
        self.errors.append(exc)

    def _locate(self, keypath: tuple[str, ...], text: str, offset: int, *, key: bool = False) -> tuple[str | None, int, int]:
        """File, line and column of character `offset` of expression `text` found at `keypath`."""
        base, quote = self._base(keypath, key=key)
        if base is not None:
            at = base.shifted(text, offset, quote=quote)
            return at.file, at.line, at.col
        origin = self.origins.get(keypath)
        if origin is not None:
            # a block scalar: its indicator (compiler.diagnostics moves it onto the content)
            return origin.file, origin.line, origin.col
        line, col = line_col(text, offset)
        return None, line, col

    def positioned(self, message: str, code: str, field: str, keypath: tuple[str, ...], text: str, offset: int, *, key: bool = False) -> None:
        """Record (or raise) an error at character `offset` of the expression `text`."""
        file, line, col = self._locate(keypath, text, offset, key=key)
        err = CompileError(message, field=field, code=code, file=file, line=line, col=col)
        err.keypath = keypath  # type: ignore[attr-defined]
        err.expression = text  # type: ignore[attr-defined]
        err.offset = offset  # type: ignore[attr-defined]
        err.on_key = key  # type: ignore[attr-defined]
        self._raise(err)

    def expression(self, parser: Callable[..., Any], text: str, *, field: str, keypath: tuple[str, ...], key: bool = False) -> Any:
        """Parse one expression; on failure record a CompileError positioned inside the scalar."""
        try:
            return parser(text)
        except AttendSyntaxError as exc:
            self.positioned(exc.message, exc.code, field, keypath, text, getattr(exc, "offset", 0), key=key)
            return None

    # -- the trigger

    def read(self, d: Mapping[str, Any]) -> ir.Trigger | None:
        """The trigger as IR, or None when an expression in it does not parse.

        The spec's rules (`on` and what it needs, value types and bounds, durations, `flap`) are
        `spec.validate`'s, checked before a trigger gets here (`compile_sensor` compiles only valid
        sensors, `compile_trigger` runs the spec's `trigger_problems` first). Here a value the spec
        would refuse never raises: it is read as its default, so `diagnose` can read the expressions
        of an invalid sensor too.
        """
        if not isinstance(d, Mapping):
            self.fail("a trigger must be a mapping", field="", code="wrong-type", keypath=())
            return None
        path = self._path(d)
        on = d.get("on")
        key = self._dotted(d, "key")
        author = self._dotted(d, "author")
        where = self._where(d)
        description = d.get("description", "")
        # no description (or a blank one) says which trigger fired, for which item and why
        template = ir.default_description(self.name, keyed=key is not None, on=str(on))
        if isinstance(description, str) and description.strip():
            template = self.expression(parse_template, description, field="description", keypath=("description",)) or template
        clear_where = self._where(d, "clear_where")
        if path is None or on not in ir.ON_VALUES or self.errors:
            return None
        initial = d.get("initial", "baseline")
        return ir.Trigger(
            name=self.name,
            path=path,
            on=on,
            key=key,
            where=where,
            magnitude=_number(d.get("magnitude"), 1.0),
            description=template,
            author=author,
            initial=initial if initial in ("baseline", "fire") else "baseline",
            hold=_number(d.get("for"), 0.0) or None,
            clear_where=clear_where,
            flap=read_flap(d.get("flap")),
        )

    def _path(self, d: Mapping[str, Any]) -> ir.Path | None:
        text = d.get("path", "$")
        return self.expression(parse_path, text if isinstance(text, str) else "$", field="path", keypath=("path",))

    def _dotted(self, d: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
        value = d.get(name)
        return split_dotted(value) if isinstance(value, str) and value else None

    def _where(self, d: Mapping[str, Any], field: str = "where") -> ir.Where | None:
        raw = d.get(field)
        match = d.get("match", "all")
        if not isinstance(raw, Mapping):
            return None
        conditions = []
        for prop_text, value in raw.items():
            if self.full:
                break
            prop_text = str(prop_text)
            keypath = (field, prop_text)
            prop = self.expression(parse_property, prop_text, field=field, keypath=keypath, key=True)
            tests = self._tests(prop_text, value, field)
            if prop is not None and tests is not None:
                conditions.append(ir.Condition(prop=prop, tests=tests))
        if not conditions and raw:
            return None
        return ir.Where(conditions=tuple(conditions), match=match if match in ("all", "any") else "all")

    def _tests(self, prop: str, value: Any, field: str = "where") -> tuple[ir.Test, ...] | None:
        keypath = (field, prop)
        if isinstance(value, Mapping):
            if not value:
                self.fail(f"the operator object of `{prop}` is empty", field=field, code="operator", keypath=keypath)
                return None
            tests = []
            for op, operand in value.items():
                if self.full:
                    return None
                test = self._test(str(op), operand, keypath + (str(op),), bare=False)
                if test is not None:
                    tests.append(test)
            return tuple(tests) if len(tests) == len(value) else None
        if isinstance(value, list):
            test = self._test("in", value, keypath, bare=True)
        elif isinstance(value, str) and has_glob(value):
            test = self._test("like", value, keypath, bare=True)
        else:
            test = self._test("equals", value, keypath, bare=True)
        return None if test is None else (test,)

    def _test(self, op: str, operand: Any, keypath: tuple[str, ...], *, bare: bool) -> ir.Test | None:
        field = keypath[0]
        if op not in ir.OPERATORS:
            self.fail(f"unknown operator `{op}` (expected one of {', '.join(ir.OPERATORS)})", field=field, code="operator", keypath=keypath, key=True)
            return None
        if op in _NUMERIC_OPERATORS:
            if isinstance(operand, bool) or not isinstance(operand, (int, float)):
                self.fail(f"`{op}` needs a number, not {operand!r}", field=field, code="operator", keypath=keypath)
                return None
        elif op == "in":
            if not isinstance(operand, list):
                self.fail(f"`in` needs a list, not {operand!r}", field=field, code="operator", keypath=keypath)
                return None
            operand = tuple(operand)
        elif op in ("like", "matches"):
            if not isinstance(operand, str):
                self.fail(f"`{op}` needs a string pattern, not {operand!r}", field=field, code="operator", keypath=keypath)
                return None
            if op == "matches":
                problem = regex_problem(operand)
                if problem is not None:
                    message, offset = problem
                    self.positioned(message, "regex-syntax", field, keypath, operand, offset)
                    return None
            operand = ir.ValuePattern(text=operand, mode="glob" if op == "like" else "regex")
        elif isinstance(operand, list):
            operand = tuple(operand)
        return ir.Test(op=op, operand=operand, bare=bare)  # type: ignore[arg-type]  # op is in ir.OPERATORS (above)

def _number(value: Any, default: float) -> float:
    """`value` as a float when it is a finite number float can hold (the spec bounds it far lower), else `default`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    if isinstance(value, int) and abs(value) > 2**1023:
        return default
    number = float(value)
    return number if number >= 0 and number != float("inf") else default


def read_flap(raw: Any) -> ir.Flap | None:
    """`flap:` of a validated sensor or trigger (`false` or `{limit, window}`, `window` in seconds) → `ir.Flap`.

    `false` turns detection off (limit 0); a missing `limit` or `window` is -1 here and filled in by
    the compiler from the sensor's `flap:` and the defaults (spec.schema.DEFAULT_FLAP). Absent (or
    anything the spec refuses) is None.
    """
    if raw is False:
        return ir.Flap(limit=0, window=0.0)
    if not isinstance(raw, Mapping):
        return None
    limit, window = raw.get("limit", -1), raw.get("window")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit <= 2**31 else -1
    return ir.Flap(limit=limit, window=_number(window, -1.0) or -1.0)


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


def parse_trigger(definition: Mapping[str, Any], name: str = "trigger", origins: Mapping[tuple[str, ...], Any] | None = None) -> ir.Trigger:
    """Turn one trigger's mapping into an `ir.Trigger`.

    Args:
        definition: the trigger's fields as loaded from YAML (`path`, `key`, `on`, `where`, ...).
        name: the trigger's name (its key under `triggers:`).
        origins: optional positions, keyed by key path *inside the trigger* (``("where", "x", "above")``)
            → an object with `span`, `key_span` and `quote` (a `spec.model.Origin`).

    The definition is one the spec's rules passed (`spec.validate`), durations in seconds.

    Raises:
        CompileError: the first expression problem, with `.field`, `.code` and a position (file:line:col
            when origins are given, else the column inside the offending expression).
    """
    reader = _TriggerReader(name, origins, collect=False)
    trigger = reader.read(definition)
    if trigger is None:  # no expression failed (that raises): `on` is missing or unknown, which the spec reports
        raise CompileError(f"`on` must be one of {', '.join(ir.ON_VALUES)}", field="on", code="bad-value")
    return trigger


def parse_trigger_collecting(
    definition: Mapping[str, Any], name: str, origins: Mapping[tuple[str, ...], Any] | None = None
) -> tuple[ir.Trigger | None, list[CompileError]]:
    """Like `parse_trigger`, but collect every problem instead of raising the first."""
    reader = _TriggerReader(name, origins, collect=True)
    trigger = reader.read(definition)
    return trigger, reader.errors
