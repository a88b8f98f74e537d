"""An mcp sensor's remote-server headers: the `${VAR}` reference syntax and how a header value is shown.

One implementation for everything that shows a sensor's `mcp.server.headers` (explain, the TUI's fields
table, `attend settings list` and `settings get`): a literal credential written into a sensor file never
reaches a terminal or an agent's transcript. runtime/mcp/config.py expands the same `${VAR}` syntax.
Pure: no runtime, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["VAR_REFERENCE", "is_header_path", "shown_header", "shown_value"]

#: `${NAME}` or `${NAME:-default}`; the default may be empty and runs to the first closing brace.
VAR_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

#: A header value's leading scheme word (`Bearer`, `Token`), shown by `shown_header` before what it hides.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*\s+)?(.*)$", re.DOTALL)


def shown_header(value: Any) -> str:
    """A header value as attend shows it: `${VAR}` references as written, a literal credential hidden but
    for its scheme word and length (`Bearer <hidden: 12 characters>`)."""
    text = str(value)
    match = _SCHEME.match(text)
    scheme, rest = (match.group(1) or "", match.group(2)) if match else ("", text)
    if not rest or VAR_REFERENCE.sub("", rest) == "":
        return text
    return f"{scheme}<hidden: {len(rest)} characters>"


def is_header_path(path: tuple[str, ...]) -> bool:
    """Whether a sensor document path (without the `attend.sensors.NAME` prefix) is one header's value."""
    return len(path) == 4 and path[:3] == ("mcp", "server", "headers")


_HEADERS = ("mcp", "server", "headers")


def shown_value(path: tuple[str, ...], value: Any) -> Any:
    """A sensor document's value at `path` as attend shows it: every header value in it (the value itself,
    or the headers inside a `mcp`, `mcp.server` or `mcp.server.headers` mapping, or a whole sensor's)
    passed through `shown_header`; anything else as it is."""
    if is_header_path(path):
        return shown_header(value)
    if len(path) <= len(_HEADERS) and path == _HEADERS[: len(path)] and isinstance(value, Mapping):
        return {k: shown_value((*path, str(k)), v) for k, v in value.items()}
    return value
