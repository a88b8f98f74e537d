"""attend's own module-level regular expressions, compiled on first use: what `attend compile --check`
does not match, it does not compile.

Compiling a pattern is the single largest start-up cost a module-level `re.compile` hides. This
module patches nothing: it offers a pattern object of attend's own, for attend's own modules.

- `compile(pattern, flags)` returns a `LazyPattern`: the first attribute read (`match`, `search`,
  `pattern`, ...) compiles it; each attribute read once is then kept on the instance, so a hot loop's
  `PATTERN.match(text)` costs what it costs on an `re.Pattern`. Use it where the module calls the
  pattern's own methods; a `LazyPattern` is not an `re.Pattern` (`re.sub(lazy, ...)` would refuse it).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ASCII", "LazyPattern", "compile"]

_compile = re.compile
ASCII = re.ASCII


class LazyPattern:
    """An `re.Pattern` made on first use; attribute reads go to it (and are kept after the first)."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[Any] | None = None

    def compiled(self) -> re.Pattern[Any]:
        """The real pattern (compiled now if it was not yet)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = _compile(*self._source)
        return compiled

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probe dunders on the instance: not the pattern's
            raise AttributeError(name)
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value  # the next read is a plain instance-dict hit
        return value

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r}, {self._source[1]!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPattern):
            return self._source == other._source
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._source)


def compile(pattern: str | bytes, flags: int = 0) -> LazyPattern:  # noqa: A001 - re.compile's name
    """A pattern compiled on its first use (see the module docstring)."""
    return LazyPattern(pattern, flags)
