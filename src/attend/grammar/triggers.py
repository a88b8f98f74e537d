"""One trigger's YAML mapping → `ir.Trigger` (ADR-403 §3), applying the bare-value rules of DESIGN.md
("Trigger semantics"); its expressions are parsed by `grammar.expressions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, Protocol

from attend import ir
from attend.bounds import MAX_ERRORS_PER_FILE
from attend.errors import AttendSyntaxError, CompileError, Span, line_col
from attend.grammar.expressions import parse_path, parse_property, parse_template, regex_problem, split_dotted
from attend.grammar.simple import has_glob

if TYPE_CHECKING:
    class Located(Protocol):
        """Where a value of the trigger's mapping stands in its file (spec.loaded.Origin is one)."""

        @property
        def file(self) -> str: ...
        @property
        def line(self) -> int: ...
        @property
        def col(self) -> int: ...
        @property
        def style(self) -> str | None: ...
        @property
        def span(self) -> Span: ...
        @property
        def key_span(self) -> Span: ...
        @property
        def quote(self) -> int: ...

#: Operators whose operand must be a number.
_NUMERIC_OPERATORS = ("above", "below")


class _TriggerReader:
    """Reads one trigger mapping into IR, collecting (or raising) positioned CompileErrors."""

    def __init__(self, name: str, origins: Mapping[tuple[str, ...], Located] | None, collect: bool) -> None:
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
            exc = CompileError(message, field=field, code=code, file=span.file, line=span.line, col=span.col,
                               keypath=keypath)
        else:
            exc = CompileError(message, field=field, code=code, keypath=keypath)
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
        self._raise(CompileError(message, field=field, code=code, file=file, line=line, col=col, keypath=keypath,
                                 expression=text, offset=offset, on_key=key))

    def expression(self, parser: Callable[..., Any], text: str, *, field: str, keypath: tuple[str, ...], key: bool = False) -> Any:
        """Parse one expression; on failure record a CompileError positioned inside the scalar."""
        try:
            return parser(text)
        except AttendSyntaxError as exc:
            self.positioned(exc.message, exc.code, field, keypath, text, exc.offset, key=key)
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
            magnitude=ir.finite_number(d.get("magnitude"), 1.0),
            description=template,
            author=author,
            initial=initial if initial in ("baseline", "fire") else "baseline",
            hold=ir.finite_number(d.get("for"), 0.0) or None,
            clear_where=clear_where,
            flap=ir.read_flap(d.get("flap")),
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
        operator = next((o for o in ir.OPERATORS if o == op), None)
        if operator is None:
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
        return ir.Test(op=operator, operand=operand, bare=bare)

def parse_trigger(definition: Mapping[str, Any], name: str = "trigger", origins: Mapping[tuple[str, ...], Located] | None = None) -> ir.Trigger:
    """Turn one trigger's mapping into an `ir.Trigger`.

    Args:
        definition: the trigger's fields as loaded from YAML (`path`, `key`, `on`, `where`, ...).
        name: the trigger's name (its key under `triggers:`).
        origins: optional positions, keyed by key path *inside the trigger* (``("where", "x", "above")``)
            → an object with `span`, `key_span` and `quote` (a `spec.loaded.Origin`).

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
    definition: Mapping[str, Any], name: str, origins: Mapping[tuple[str, ...], Located] | None = None
) -> tuple[ir.Trigger | None, list[CompileError]]:
    """Like `parse_trigger`, but collect every problem instead of raising the first."""
    reader = _TriggerReader(name, origins, collect=True)
    trigger = reader.read(definition)
    return trigger, reader.errors
