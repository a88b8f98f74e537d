"""attend: a sensor host for coding agents.

The public Python API (DESIGN.md, Trigger semantics) is exactly these six names; they are imported
lazily so that `import attend` stays cheap for the CLI:

- `compile_path(expr)`: a callable mapping a document to the list of values the JSONPath selects.
- `compile_trigger(definition, name=...)`: a `CompiledTrigger`, whose `.step(state, result, now=)`
  returns `(fires, state)`.
- `CompiledTrigger`, `Fire`: the types of a compiled trigger and of one of its fires (`trigger`, `key`,
  `magnitude`, `description`, `item`, `author`, `note`), for annotations and `isinstance`.
- `PathSyntaxError`: raised by `compile_path` for an invalid expression (`.column` says where).
- `CompileError`: raised by `compile_trigger` for an invalid trigger (`.field` and `.column` say where).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)

from attend.errors import CompileError, PathSyntaxError

if TYPE_CHECKING:
    from typing import Any

    from attend.compiler import CompiledTrigger, Fire, compile_path, compile_trigger

__all__ = ["CompileError", "CompiledTrigger", "Fire", "PathSyntaxError", "compile_path", "compile_trigger"]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata only when asked (importlib.metadata is slow)
        try:
            from importlib.metadata import version

            return version("attend")
        except Exception:  # noqa: BLE001 - running from a source tree without metadata
            return "0+unknown"
    if name in ("compile_path", "compile_trigger", "CompiledTrigger", "Fire"):
        from attend import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module 'attend' has no attribute {name!r}")
