"""IR → closures: compiled paths, triggers and sensors, and the expression diagnostics (ADR-403 §3, §8).

The public API of DESIGN.md lives here (`compile_path`, `compile_trigger`), with what the runtime and
the CLI build on: `compile_sensor` (a validated spec sensor → `CompiledSensor`), `diagnose` (every
expression problem of a sensor, positioned inside its YAML scalars, for `compile --check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)

from attend.errors import CompileError

if TYPE_CHECKING:
    from typing import Any

    from attend.compiler.diagnostics import diagnose
    from attend.compiler.sensors import (
        CompiledSensor,
        MalformedOutput,
        SensorStep,
        compile_sensor,
    )
    from attend.compiler.triggers import CompiledTrigger, Evaluation, Fire

#: Where each re-exported name lives. They are imported on first use (PEP 562) so that `compile --check`,
#: which needs only `diagnose`, never loads the evaluators (triggers, conditions, ops, hashlib, json).
_LAZY = {
    "CompiledSensor": "attend.compiler.sensors",
    "MalformedOutput": "attend.compiler.sensors",
    "SensorStep": "attend.compiler.sensors",
    "compile_sensor": "attend.compiler.sensors",
    "diagnose": "attend.compiler.diagnostics",
    "CompiledTrigger": "attend.compiler.triggers",
    "Evaluation": "attend.compiler.triggers",
    "Fire": "attend.compiler.triggers",
}

__all__ = [
    "CompiledSensor",
    "CompiledTrigger",
    "Evaluation",
    "Fire",
    "MalformedOutput",
    "SensorStep",
    "compile_path",
    "compile_sensor",
    "checked_trigger",
    "compile_trigger",
    "diagnose",
]


def compile_path(expr: str) -> Callable[[Any], list[Any]]:
    """Compile a JSONPath of attend's subset into a selector.

    Args:
        expr: e.g. ``$.items[*].name`` (`$`, `.field`, `['field']`, `[n]`, `[*]`, `.*`, `..field`, `..*`).

    Returns:
        A callable mapping a document to the list of selected values, in document order.

    Raises:
        attend.PathSyntaxError: the expression is invalid; `.column` is the 1-based column.
    """
    from attend.compiler.jsonpath import compile_path_ir
    from attend.grammar import parse_path

    return compile_path_ir(parse_path(expr))


def compile_trigger(
    definition: Mapping[str, Any], name: str = "trigger", *, origins: Mapping[tuple[str, ...], Any] | None = None
) -> CompiledTrigger:
    """Compile one trigger definition (the mapping under `triggers.<name>` in a sensor file).

    Args:
        definition: `path`, `key`, `on`, `where`, `match`, `magnitude`, `description`, `author`, `initial`,
            and the noise controls `for` (a duration: seconds, or `30s`/`5m`/`1h`), `clear_where`, `flap`;
            checked by the spec's rules for a sensor file's trigger (`spec.validate.trigger_problems`).
        name: the trigger's name; it appears in every `Fire`.
        origins: optional positions keyed by key path inside the trigger (see `grammar.parse_trigger`).

    Returns:
        The `CompiledTrigger`; `.step(state, result, now=t)` returns ``(fires, new_state)``.

    Raises:
        attend.CompileError: with `.field`, `.code` and `.column` for the first problem found, in the
            words `attend compile --check` uses for the same problem in a file.
    """
    from attend.compiler.triggers import CompiledTrigger

    return CompiledTrigger(checked_trigger(definition, str(name), origins))


def checked_trigger(definition: Any, name: str, origins: Mapping[tuple[str, ...], Any] | None = None) -> Any:
    """One trigger's `ir.Trigger`, checked first by the spec's rules for a sensor file's trigger (same
    words, same bounds: `spec.validate.trigger_problems`), then its expressions by the grammar.

    Raises:
        CompileError: the first problem, with its field, code and position.
    """
    from attend.grammar import parse_trigger
    from attend.spec.validate import API_FILE, normalise_trigger, trigger_problems

    if not isinstance(definition, Mapping):
        raise CompileError("a trigger must be a mapping", field="", code="wrong-type")
    problems = trigger_problems(definition, name, origins)
    if problems:
        field, first = problems[0]
        raise CompileError(first.message, field=field, code=first.code,
                           file=None if first.file == API_FILE else first.file, line=first.line, col=first.col)
    return parse_trigger(normalise_trigger(definition, name), name, origins)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'attend.compiler' has no attribute {name!r}")
    value = getattr(__import__(module, fromlist=[name]), name)  # the importlib package stays unimported
    globals()[name] = value  # later lookups skip this hook
    return value
