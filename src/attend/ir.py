"""The IR: frozen records for paths, where conditions, templates, triggers and sensors (ADR-403 §3, §8).

Records are `attend.records.record`, the part of `@dataclass` these classes use, cheaper to create.

The shared vocabulary between `grammar` (strings → IR), `compiler` (IR → closures) and `explain`.
A leaf module. Every node is immutable, its children are tuples, its `span` never takes part in
equality or hashing, and `str(node)` gives the canonical source form, so that
``parse(str(node)) == node`` holds for every node the grammar produces.
"""

from __future__ import annotations

from attend import lazyre
from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    from attend.vocab import Kind, Lane, Scope

from attend.errors import Span

__all__ = [
    "OPERATORS",
    "ON_VALUES",
    "ChildSegment",
    "Condition",
    "DescendantSegment",
    "CommandBlock",
    "DigestBlock",
    "Flap",
    "FieldRef",
    "IndexSelector",
    "Literal_",
    "McpBlock",
    "NameSelector",
    "Path",
    "PropertyPattern",
    "Selector",
    "Sensor",
    "SensorTrigger",
    "Template",
    "TemplatePart",
    "TEMPLATE_ROOTS",
    "default_description",
    "finite_number",
    "read_flap",
    "Test",
    "Trigger",
    "ValuePattern",
    "Where",
    "WildcardSelector",
]

_IDENT = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _span() -> Any:
    """A span field: keyword-only, optional, and outside equality, hashing and repr."""
    return field(default=None, compare=False, hash=False, repr=False)


#: How `_quote_name` writes the characters a quoted name may not hold as they are (RFC 9535).
_NAME_ESCAPES = {"\\": "\\\\", "'": "\\'", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NAME_ESCAPES.update({chr(c): f"\\u{c:04x}" for c in range(0x20) if chr(c) not in _NAME_ESCAPES})
_NEEDS_ESCAPE = lazyre.compile("[\\\\'\x00-\x1f]")


def _quote_name(name: str) -> str:
    """`name` as a single-quoted RFC 9535 string literal (reads back as `name`)."""
    return "'" + _NEEDS_ESCAPE.sub(lambda m: _NAME_ESCAPES[m.group()], name) + "'"


# --------------------------------------------------------------------------------------------- paths


@record(frozen=True, kw_only=True)
class NameSelector:
    """`.field` or `['field']`: the member of a mapping with this name."""

    name: str
    span: Span | None = _span()

    def __str__(self) -> str:
        return f".{self.name}" if _IDENT.fullmatch(self.name) else f"[{_quote_name(self.name)}]"


@record(frozen=True, kw_only=True)
class IndexSelector:
    """`[n]`: the n-th element of a list; negative counts from the end."""

    index: int
    span: Span | None = _span()

    def __str__(self) -> str:
        return f"[{self.index}]"


@record(frozen=True, kw_only=True)
class WildcardSelector:
    """`[*]` or `.*`: every member of a mapping (in order) or element of a list."""

    span: Span | None = _span()

    def __str__(self) -> str:
        return "[*]"


Selector: TypeAlias = NameSelector | IndexSelector | WildcardSelector


@record(frozen=True, kw_only=True)
class ChildSegment:
    """One selector applied to each node of the current node list."""

    selector: Selector
    span: Span | None = _span()

    def __str__(self) -> str:
        return str(self.selector)


@record(frozen=True, kw_only=True)
class DescendantSegment:
    """`..field` or `..*`: the selector applied to each node and all of its descendants."""

    selector: Selector
    span: Span | None = _span()

    def __str__(self) -> str:
        inner = str(self.selector)
        if isinstance(self.selector, WildcardSelector):
            return "..*"
        return ".." + (inner[1:] if inner.startswith(".") else inner)


@record(frozen=True, kw_only=True)
class Path:
    """A JSONPath of the spec's subset: `$` followed by segments. Selects a node list."""

    segments: tuple[ChildSegment | DescendantSegment, ...] = ()
    span: Span | None = _span()

    def __str__(self) -> str:
        return "$" + "".join(str(s) for s in self.segments)


# --------------------------------------------------------------------------------------- templates


@record(frozen=True, kw_only=True)
class Literal_:  # noqa: N801 - `Literal` is typing's; the IR name is public
    """Literal template text (`{{` and `}}` already unescaped)."""

    text: str
    span: Span | None = _span()

    def __str__(self) -> str:
        return self.text.replace("{", "{{").replace("}", "}}")


#: The reserved first names of a template reference; `$` is the item itself (`{$.value}` reads the
#: item's field `value`, which `{value}` hides).
if TYPE_CHECKING:
    TemplateRoot: TypeAlias = Literal["item", "value", "key", "previous"]
TEMPLATE_ROOTS: tuple[TemplateRoot, ...] = ("value", "key", "previous")


@record(frozen=True, kw_only=True)
class FieldRef:
    """`{field.sub}`, `{$.field}`, `{value}`, `{key}`, `{previous}` or `{previous.field}`.

    `root` says what the reference starts from: the item's fields (`item`), the whole selected value
    (`value`), the item's key (`key`) or the item's previous value (`previous`). `fields` is the dotted
    path below that root (empty for `{value}`, `{key}`, `{previous}`).
    """

    root: TemplateRoot
    fields: tuple[str, ...] = ()
    span: Span | None = _span()

    def __str__(self) -> str:
        if self.root != "item":
            return "{" + ".".join((self.root, *self.fields)) + "}"
        # an item field spelled like a reserved name (or `$`) keeps its `$.`
        shown = ".".join(self.fields)
        return "{$." + shown + "}" if self.fields[0] in TEMPLATE_ROOTS or self.fields[0] == "$" else "{" + shown + "}"


TemplatePart: TypeAlias = Literal_ | FieldRef


@record(frozen=True, kw_only=True)
class Template:
    """A description template: literal text and field references."""

    parts: tuple[TemplatePart, ...] = ()
    span: Span | None = _span()

    def __str__(self) -> str:
        return "".join(str(p) for p in self.parts)


# ------------------------------------------------------------------------------------------- where

#: The where operators (ADR-403 §8), in the order explain lists them.
if TYPE_CHECKING:
    Operator: TypeAlias = Literal["equals", "not", "in", "contains", "like", "matches", "above", "below"]
OPERATORS: tuple[Operator, ...] = ("equals", "not", "in", "contains", "like", "matches", "above", "below")


@record(frozen=True, kw_only=True)
class PropertyPattern:
    """A where property: a dotted field path whose parts may hold glob characters (`wind_*`).

    A part with glob characters holds when any matching field satisfies the tests.
    """

    parts: tuple[str, ...]
    globbed: tuple[bool, ...]
    span: Span | None = _span()

    @property
    def is_glob(self) -> bool:
        """True when any part is a glob."""
        return any(self.globbed)

    def __str__(self) -> str:
        return ".".join(self.parts)


@record(frozen=True, kw_only=True)
class ValuePattern:
    """A string operand and how it matches: `exact`, `glob` (wcmatch) or `regex` (the regex module)."""

    text: str
    mode: Literal["exact", "glob", "regex"]
    span: Span | None = _span()

    def __str__(self) -> str:
        return self.text


@record(frozen=True, kw_only=True)
class Test:
    """One operator applied to a property's value: `{above: 40}` is `Test(op="above", operand=40)`.

    `operand` is the YAML value (a number, string, bool, null or list); string operands of `like`
    and `matches`, and bare glob strings, are `ValuePattern`s. `bare` is True when the operator was
    implied by a bare value rather than written out.
    """

    op: Operator
    operand: Any
    bare: bool = False
    span: Span | None = _span()

    def __str__(self) -> str:
        operand = self.operand
        if isinstance(operand, ValuePattern):
            operand = operand.text
        if isinstance(operand, tuple):
            operand = list(operand)
        import json  # only when a condition is printed (explain): json is not on the check's path

        return f"{self.op}: {json.dumps(operand, ensure_ascii=False, default=str)}"


@record(frozen=True, kw_only=True)
class Condition:
    """A property and the tests its value must all pass."""

    prop: PropertyPattern
    tests: tuple[Test, ...]
    span: Span | None = _span()

    def __str__(self) -> str:
        return f"{self.prop}: {{{', '.join(str(t) for t in self.tests)}}}"


@record(frozen=True, kw_only=True)
class Where:
    """Conditions combined by `match: all` (default) or `any`. No nesting (ADR-403 §8)."""

    conditions: tuple[Condition, ...]
    match: Literal["all", "any"] = "all"
    span: Span | None = _span()

    def __str__(self) -> str:
        body = ", ".join(str(c) for c in self.conditions)
        return f"{self.match}({body})"


# ----------------------------------------------------------------------------------------- trigger

#: The transitions a trigger fires on (DESIGN.md, Trigger semantics).
ON_VALUES: tuple[str, ...] = ("added", "removed", "changed", "enters", "leaves")


@record(frozen=True, kw_only=True)
class Flap:
    """Flap detection of a trigger (DESIGN.md, Noise controls): more than `limit` returns of one key to a
    value it had within `window` seconds is flapping. `limit` 0 turns detection off (`flap: false`); a negative `limit` or
    `window` was not written (the compiler takes the sensor's, else the default)."""

    limit: int
    window: float

    def __str__(self) -> str:
        if self.limit == 0:
            return "off"
        bits = ([f"limit: {self.limit}"] if self.limit >= 0 else []) + ([f"window: {self.window:g}s"] if self.window >= 0 else [])
        return "{" + ", ".join(bits) + "}"


@record(frozen=True, kw_only=True)
class Trigger:
    """One trigger of a sensor, parsed. The compiler turns it into a step function.

    `key` and `author` are dotted field paths. The noise controls (DESIGN.md, Noise controls): `hold`
    is `for:` in seconds (None: fire at once), `clear_where` the hysteresis condition of
    `enters`/`leaves`, `flap` the trigger's own flap settings (None: the sensor's, else the defaults).
    """

    name: str
    path: Path
    on: Literal["added", "removed", "changed", "enters", "leaves"]
    key: tuple[str, ...] | None = None
    where: Where | None = None
    magnitude: float = 1.0
    description: Template = field(default_factory=Template)
    author: tuple[str, ...] | None = None
    initial: Literal["baseline", "fire"] = "baseline"
    hold: float | None = None
    clear_where: Where | None = None
    flap: Flap | None = None
    span: Span | None = _span()

    def __str__(self) -> str:
        bits = [f"path: {self.path}", f"on: {self.on}"]
        if self.key is not None:
            bits.append(f"key: {'.'.join(self.key)}")
        if self.where is not None:
            bits.append(f"where: {self.where}")
        bits.append(f"magnitude: {self.magnitude:g}")
        import json

        bits.append(f"description: {json.dumps(str(self.description), ensure_ascii=False)}")
        if self.author is not None:
            bits.append(f"author: {'.'.join(self.author)}")
        if self.initial != "baseline":
            bits.append(f"initial: {self.initial}")
        if self.hold is not None:
            bits.append(f"for: {self.hold:g}s")
        if self.clear_where is not None:
            bits.append(f"clear_where: {self.clear_where}")
        if self.flap is not None:
            bits.append(f"flap: {self.flap}")
        return f"{self.name}: {{{'; '.join(bits)}}}"


def finite_number(value: Any, default: float) -> float:
    """`value` as a float when it is a finite number ≥ 0 float can hold (the spec bounds it far lower), else
    `default`: how a reader takes a number of a document the spec may have refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    if isinstance(value, int) and abs(value) > 2**1023:
        return default
    number = float(value)
    return number if number >= 0 and number != float("inf") else default


def read_flap(raw: Any) -> Flap | None:
    """`flap:` of a validated sensor or trigger (`false` or `{limit, window}`, `window` in seconds) → `Flap`.

    The one reading of the block, for a trigger (`grammar.triggers`) and a sensor (`spec.reader`) alike.
    `false` turns detection off (limit 0); a missing `limit` or `window` is -1 here and filled in by
    the compiler from the sensor's `flap:` and the defaults (spec.schema.DEFAULT_FLAP). Absent (or
    anything the spec refuses) is None.
    """
    if raw is False:
        return Flap(limit=0, window=0.0)
    if not isinstance(raw, dict):
        return None
    limit, window = raw.get("limit", -1), raw.get("window")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit <= 2**31 else -1
    return Flap(limit=limit, window=finite_number(window, -1.0) or -1.0)


def default_description(name: str, *, keyed: bool, on: str) -> Template:
    """The description of a trigger that sets none: `<trigger>: {key} <on>` (`<trigger>: <on>` without a
    key), so a notification always says which trigger fired, for which item and why."""
    if keyed:
        parts: tuple[TemplatePart, ...] = (
            Literal_(text=f"{name}: "), FieldRef(root="key", fields=()), Literal_(text=f" {on}"),
        )
    else:
        parts = (Literal_(text=f"{name}: {on}"),)
    return Template(parts=parts)


# ------------------------------------------------------------------------------------------ sensor
#
# A sensor's fields as the compiler and the runtime use them, read once from the merged, validated document
# (`spec.reader.read_sensor`, through `MergedSensor.ir`). Defaults are filled in by the reader from
# `spec.schema`; a value of the wrong type (only in an invalid sensor, which never runs) reads as its default.
# Adding a field: docs/internals.md, "Adding a sensor field".


@record(frozen=True, kw_only=True)
class CommandBlock:
    """The `command:` block: what the command kind runs and how it reads stdout (`output`: json, lines, stream).

    `max_output` is None when the block does not set it (a stream's); `stream_format`, `max_line` and
    `cursor` are a stream's (`cursor`: the dotted record field remembered across restarts, None: none).
    """

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    timeout: float
    output: str
    max_output: int | None
    stream_format: str
    max_line: int
    cursor: str | None


@record(frozen=True, kw_only=True)
class McpBlock:
    """The `mcp:` block: the server (a name in Claude Code's MCP config, or an inline server definition in
    that config's shape, which `runtime.mcp.servers` reads as it reads Claude Code's), and the tool called
    with `args` or the resource read (`subscribe`: read again on each update; only with a resource)."""

    server: str | dict[str, Any] | None
    tool: str | None
    resource: str | None
    subscribe: bool
    args: dict[str, Any]
    allow_unannotated: bool
    timeout: float


@record(frozen=True, kw_only=True)
class DigestBlock:
    """The `digest:` block: more than `over` fires in one poll become one line, `description` (a template)."""

    over: int
    description: str


@record(frozen=True, kw_only=True)
class SensorTrigger:
    """One entry of `triggers:`: its name, whether it is evaluated, the triggers its fire supersedes, and its
    mapping as the spec passed it (durations in seconds), which `grammar.parse_trigger` reads into a
    `Trigger` (a non-mapping only in an invalid sensor)."""

    name: str
    enabled: bool
    supersedes: tuple[str, ...]
    definition: Any


@record(frozen=True, kw_only=True)
class Sensor:
    """A sensor's fields, typed: every field of `spec.schema.SENSOR_SCHEMA` (durations in seconds), plus
    `crate_timeout` (the crate block's `timeout`, which the crate kind reads as the poll's deadline).

    `lane` is the declared lane (the compiler's `effective_lane` may run it on the event lane); `crate` is the
    compiled sensor's own block, free-form, given to its class as written. A `kind`, `lane` or `scope` outside
    the vocabulary (`attend.vocab`: only in an invalid sensor) reads as None, `event` and `project`.
    """

    name: str
    spec: int | None
    description: str
    kind: Kind | None
    enabled: bool
    source: str | None
    version: str | None
    interval: float
    min_interval: float
    decay_threshold: int
    wake_on: tuple[str, ...]
    threshold: float
    lane: Lane
    scope: Scope
    lane_exception: str | None
    requires: tuple[str, ...]
    flap: Flap | None
    digest: DigestBlock | None
    triggers: tuple[SensorTrigger, ...]
    command: CommandBlock | None
    mcp: McpBlock | None
    crate: dict[str, Any]
    crate_timeout: float | None

    def trigger(self, name: str) -> SensorTrigger | None:
        """The trigger named `name`, or None."""
        return next((t for t in self.triggers if t.name == name), None)

    @property
    def is_stream(self) -> bool:
        """Whether the sensor is a streaming command (`command.output: stream`)."""
        return self.kind == "command" and self.command is not None and self.command.output == "stream"
