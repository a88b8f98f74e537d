"""Every expression problem of a sensor, positioned inside its YAML scalars (`compile --check`).

Spec-level trigger rules (`on`/`key`/`where`, the message lane's `author`) are `spec`'s to report;
this module reports what only the grammar and compiler can see: paths, templates, property patterns,
regexes and operator operands. Each diagnostic points at the offending character inside the scalar
(the scalar's start, plus the offset into the expression, plus one for an opening quote) and carries a
caret excerpt of the file's line in `detail`.
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:

    from attend.spec.loaded import KeyPath, MergedSensor, Origin

from attend.errors import (
    CompileError,
    Diagnostic,
    Severity,
    caret_excerpt,
    source_lines,
)
from attend.ir import default_description
from attend.spec.headers import shown_source_line

__all__ = ["EXPRESSION_CODES", "diagnose", "digest_problems", "origins_by_trigger"]

#: The codes `diagnose` reports (the rest of a trigger's rules belong to the spec's validation).
EXPRESSION_CODES = frozenset({"path-syntax", "template-syntax", "pattern-syntax", "regex-syntax", "operator"})


@lru_cache(maxsize=64)
def _file_text(path: str) -> str:
    """The text of `path` as the loader read it (`spec.loading.read_source`), or "" when unreadable."""
    from pathlib import Path

    from attend.spec.loading import read_source

    return read_source(Path(path))[0] or ""


@lru_cache(maxsize=64)
def _file_lines(path: str) -> list[str]:
    """The lines of `path`, split once per `diagnose` (a file with many errors would otherwise split
    its whole text once per error). Callers only read the list."""
    return list(source_lines(_file_text(path)))


def _excerpt(lines: list[str], line: int, col: int) -> str:
    """`caret_excerpt` of the file whose lines are `lines`, handing it only the line it shows (a header
    value masked by `shown_source_line`)."""
    shown, at = shown_source_line(lines, line, col)
    return caret_excerpt(shown, line, at)


def block_scalar_position(lines: list[str], indicator_line: int, offset: int) -> tuple[int, int] | None:
    """Line and column of character `offset` of a block scalar (`|` or `>`) whose indicator is on
    `indicator_line` of a file split into `lines`: its content lines follow, each contributing its
    text plus one joining character (a newline for `|`, a space for `>`), so the walk is the same for
    both styles."""
    remaining = offset
    for number in range(indicator_line + 1, len(lines) + 1):
        line = lines[number - 1]
        if not line.strip():
            remaining -= 1
            continue
        indent = len(line) - len(line.lstrip(" "))
        content = line[indent:]
        if remaining <= len(content):
            return number, indent + remaining + 1
        remaining -= len(content) + 1
    return None


#: Escapes of a double-quoted YAML scalar: how many raw characters each takes, backslash included.
_ESCAPE_LENGTH = {"x": 4, "u": 6, "U": 10}


def quoted_raw_offset(raw: str, style: str, offset: int) -> int:
    """How many raw characters of a quoted scalar (after its opening quote) hold its first `offset`
    decoded characters: a double-quoted escape (`\\n`, `\\u00e9`) or a single-quoted `''` is
    several raw characters for one decoded one."""
    i = 0
    for _ in range(offset):
        if i >= len(raw):
            break
        if style == '"' and raw[i] == "\\":
            i += _ESCAPE_LENGTH.get(raw[i + 1 : i + 2], 2)
        elif style == "'" and raw.startswith("''", i):
            i += 2
        else:
            i += 1
    return i


def _diagnostic(err: CompileError, fallback_file: str, origins: dict[KeyPath, Origin]) -> Diagnostic:
    file = err.file or fallback_file
    text = _file_text(file) if err.file else ""
    lines = _file_lines(file) if text else []
    origin = origins.get(err.keypath)
    if text and origin is not None and err.on_key and origin.key_line:
        # a where property is a mapping key; the origin records no style for keys, so look for a quote
        if origin.key_line <= len(lines) and lines[origin.key_line - 1][origin.key_col - 1 : origin.key_col] in ("'", '"'):
            err.col += 1
    elif text and origin is not None and origin.style in ("'", '"') and err.offset is not None and err.line == origin.line:
        if origin.line <= len(lines):
            raw = lines[origin.line - 1][origin.col :]  # after the opening quote
            err.col = origin.col + 1 + quoted_raw_offset(raw, origin.style, err.offset)
    elif text and origin is not None and origin.style in ("|", ">") and err.offset is not None:
        moved = block_scalar_position(lines, origin.line, err.offset)
        if moved is not None:
            err.line, err.col = moved
    if text:
        detail = _excerpt(lines, err.line, err.col)
    else:
        detail = caret_excerpt(err.expression, 1, (err.offset or 0) + 1) if err.expression else ""
    return Diagnostic(file, err.line, err.col, err.code, err.message, detail=detail)


def origins_by_trigger(origins: dict[KeyPath, Origin]) -> dict[str, dict[KeyPath, Origin]]:
    """A sensor's origins under `triggers.<name>`, grouped by trigger name and keyed by the key path
    inside the trigger: one pass over the origins, so `diagnose` stays linear in the file's size."""
    grouped: dict[str, dict[KeyPath, Origin]] = {}
    for keypath, origin in origins.items():
        if len(keypath) >= 2 and keypath[0] == "triggers":
            grouped.setdefault(keypath[1], {})[keypath[2:]] = origin
    return grouped


def diagnose(sensor: MergedSensor) -> list[Diagnostic]:
    """Every expression problem in `sensor`'s triggers and in its digest's description.

    Args:
        sensor: an `attend.spec.loaded.MergedSensor` (merged; its `origins` give the positions).

    Returns:
        Diagnostics with codes `path-syntax`, `template-syntax`, `pattern-syntax`, `regex-syntax` and
        `operator`, in trigger order.
    """
    from attend.grammar import parse_trigger_collecting

    _file_text.cache_clear()
    _file_lines.cache_clear()
    fallback = str(sensor.file) if sensor.file else f"<{sensor.name}>"
    out: list[Diagnostic] = digest_problems(sensor, fallback)
    by_trigger = origins_by_trigger(sensor.origins)
    for trigger in sensor.ir.triggers:
        if not isinstance(trigger.definition, dict):
            continue
        origins = by_trigger.get(trigger.name, {})
        _, errors = parse_trigger_collecting(trigger.definition, trigger.name, origins)
        out.extend(_diagnostic(e, fallback, origins) for e in errors if e.code in EXPRESSION_CODES)
    return out


def digest_problems(sensor: MergedSensor, fallback: str) -> list[Diagnostic]:
    """A digest's description is a template like a trigger's, with {count} and {from} to fill in:
    a `template-syntax` error at the description's value when it does not parse."""
    from attend.errors import AttendSyntaxError
    from attend.grammar import parse_template

    digest = sensor.ir.digest
    if digest is None:
        return []
    try:
        parse_template(digest.description)
    except AttendSyntaxError as exc:
        origin = sensor.origins.get(("digest", "description")) or sensor.origins.get(("digest",))
        file, line, col = (origin.file, origin.line, origin.col) if origin is not None else (fallback, 1, 1)
        return [Diagnostic(file, line, col, "template-syntax", f"digest description: {exc}")]
    return []


def missing_descriptions(sensor: MergedSensor) -> list[Diagnostic]:
    """A warning (`no-description`) for each trigger of `sensor` without a `description`.

    Such a trigger still says something (`default_description`), but only the author can say what
    happened; `compile --check --strict` reports these.
    """
    fallback = str(sensor.file) if sensor.file else f"<{sensor.name}>"
    out: list[Diagnostic] = []
    for trigger in sensor.ir.triggers:
        # the trigger's own fields as written (the grammar's trigger reader is the one that types them)
        name, definition = trigger.name, trigger.definition
        if not isinstance(definition, dict) or str(definition.get("description") or "").strip():
            continue
        origin = sensor.origins.get(("triggers", str(name)))
        file = (origin.file if origin is not None else None) or fallback
        line, col = (origin.key_line, origin.key_col) if origin is not None and origin.key_line else (1, 1)
        shown = default_description(str(name), keyed=bool(definition.get("key")), on=str(definition.get("on", "")))
        out.append(Diagnostic(
            str(file), line, col, "no-description",
            f"trigger `{name}` has no description; its notifications read \"{shown}\" "
            "(add `description:` to say what happened)",
            Severity.WARNING,
        ))
    return out
