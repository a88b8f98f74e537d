"""Where a key path of a merged sensor stands (its origin, for a diagnostic), and reading a path of a document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.vocab import JSON

from attend.errors import Diagnostic, Severity
from attend.spec.loaded import KeyPath, Origin
from attend.spec.schema import DURATION_FIELDS


class Locator:
    """Finds where a key path of a merged sensor stands: the origin of the path or its nearest ancestor."""

    def __init__(self, origins: Mapping[KeyPath, Origin], fallback_file: str) -> None:
        self.origins = origins
        self.fallback_file = fallback_file

    def origin(self, path: KeyPath) -> Origin | None:
        """The origin of `path` or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            found = self.origins.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return self.origins.get(())

    def at_value(self, path: Iterable[Any], code: str, message: str,
                 severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        """A diagnostic pointing at the value of `path`; `fault` is the field to blame when it is
        another one (a missing `key` is reported at `on`), read by `trigger_problems`."""
        origin = self.origin(tuple(str(p) for p in path))
        if origin is None:
            return Diagnostic(self.fallback_file, 1, 1, code, message, severity)
        return Diagnostic(origin.file, origin.line, origin.col, code, message, severity)

    def at_key(self, path: Iterable[Any], code: str, message: str,
               severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        """A diagnostic pointing at the key of `path` (its value when it has no key)."""
        path = tuple(str(p) for p in path)
        origin = self.origins.get(path) if path else None
        if origin is None:
            return self.at_value(path, code, message, severity)
        span = origin.key_span
        return Diagnostic(origin.file, span.line, span.col, code, message, severity)


def _duration_paths(data: dict[str, Any]) -> list[KeyPath]:
    """Every key path of `data` that holds a duration: the fixed ones, the sensor's and each trigger's
    `flap.window`, and each trigger's `for` (the only one that may be zero: fire at once)."""
    paths: list[KeyPath] = [*DURATION_FIELDS, ("flap", "window")]
    triggers = data.get("triggers")
    if isinstance(triggers, dict):
        for name in triggers:
            paths += [("triggers", name, "for"), ("triggers", name, "flap", "window")]
    return paths


def _value_at(data: JSON, path: KeyPath) -> JSON:
    """The value at key path `path` of nested mappings, or None when some step is not a mapping or absent."""
    value = data
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value
