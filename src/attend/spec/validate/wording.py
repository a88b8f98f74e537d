"""How a spec problem says a value, a key path and a word (the validators' shared wording)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.spec.yamltext import yaml_text


def _shown(name: str) -> str:
    """A key path as a message shows it: as written, or escaped when it holds control characters."""
    return name if name.isprintable() else repr(name)[1:-1]


#: How much of a value a message quotes before cutting it short.
_QUOTED_CHARS = 60


def _short(value: Any) -> str:
    """The value in YAML's words, cut short for a message."""
    return yaml_text(value, _QUOTED_CHARS)


def _number(value: float) -> str:
    """A bound as a message shows it: `1,000,000`, not `1000000.0`."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _listed(constraint: object) -> list[object]:
    return constraint if isinstance(constraint, list) else [constraint]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {_short(value)}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _a(word: str) -> str:
    """`word` with its indefinite article ("an mcp", "a command")."""
    return f"{'an' if word.strip('`').startswith(('mcp', 'a', 'e', 'i', 'o', 'u')) else 'a'} {word}"
