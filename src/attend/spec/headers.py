"""An mcp sensor's remote-server headers: the `${VAR}` reference syntax and how a header value is shown.

One implementation for everything that shows a sensor's `mcp.server.headers` (explain, the TUI's fields
table, `attend settings list` and `settings get`): a literal credential written into a sensor file never
reaches a terminal or an agent's transcript. runtime/mcp/servers.py expands the same `${VAR}` syntax.
Pure: no runtime, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from attend.redact import MARK, credential_name, redact_data

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["VAR_REFERENCE", "is_header_path", "shown_header", "shown_source_line", "shown_value"]

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


#: Where a sensor document holds a remote server's headers.
_HEADERS = ("mcp", "server", "headers")


def is_header_path(path: tuple[str, ...]) -> bool:
    """Whether a sensor document path (without the `attend.sensors.NAME` prefix) is one header's value."""
    return len(path) == len(_HEADERS) + 1 and path[: len(_HEADERS)] == _HEADERS


def shown_value(path: tuple[str, ...], value: object) -> object:
    """A sensor document's value at `path` as attend shows it: every header value in it (the value itself,
    or the headers inside a `mcp`, `mcp.server` or `mcp.server.headers` mapping, or a whole sensor's)
    passed through `shown_header`; anything else through the redaction policy (`attend.redact`): a
    string under a name that names a credential (`command.env.API_TOKEN`) is `<redacted>`, an argv's
    value after `--token` too, and any string is redacted."""
    if is_header_path(path):
        return shown_header(value)
    if len(path) <= len(_HEADERS) and path == _HEADERS[: len(path)] and isinstance(value, Mapping):
        return {k: shown_value((*path, str(k)), v) for k, v in value.items()}
    if path and isinstance(value, str) and value and credential_name(path[-1]):
        return MARK
    return redact_data(value)


#: A block mapping line `key: value` (the key optionally quoted), split into its key part and its value.
_BLOCK_ENTRY = re.compile(r"^(\s*(?:\"[^\"]*\"|'[^']*'|[^\s#:][^:#]*?)\s*:\s+)(\S.*?)(\s+#.*)?$")
#: `headers:` followed by a flow mapping on the same line.
_FLOW_HEADERS = re.compile(r"^(\s*headers\s*:\s*\{)(.*)(\}.*)$")
#: One `key: value` entry of a flow mapping, its value quoted or running to the next `,` or `}`.
_FLOW_ENTRY = re.compile(r"""([^,{}:\s][^,{}:]*?\s*:\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,}\s\[{][^,}]*[^,}\s]|[^,}\s\[{])""")
#: A line holding only a `headers:` key, its entries on the lines below.
_BLOCK_HEADERS = re.compile(r"^\s*headers\s*:\s*(#.*)?$")


def _shown_scalar(text: str) -> str:
    """A header value's source text (quoted or plain) with its value passed through `shown_header`."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[0] + shown_header(text[1:-1]) + text[0]
    return shown_header(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _value_spans(lines: Sequence[str], index: int) -> list[tuple[int, int]]:
    """Where the header values on line `index` of `lines` lie: `(start, end)` character spans."""
    source = lines[index]
    flow = _FLOW_HEADERS.match(source)
    if flow:
        return [(flow.start(2) + m.start(2), flow.start(2) + m.end(2)) for m in _FLOW_ENTRY.finditer(flow.group(2))]
    entry = _BLOCK_ENTRY.match(source)
    if entry is None or entry.group(2)[0] in "[{|>&*!":
        return []
    indent = _indent(source)
    for above in reversed(lines[:index]):
        stripped = above.strip()
        if stripped and not stripped.startswith("#") and _indent(above) < indent:
            return [entry.span(2)] if _BLOCK_HEADERS.match(above) else []
    return []


def shown_source_line(lines: Sequence[str], line: int, col: int) -> tuple[str, int]:
    """Line `line` (1-based) of a sensor file split into `lines` as a diagnostic's excerpt shows it, and
    column `col` of it moved to match: each header value under a `headers:` key (a block entry below it, or
    a flow mapping on its line) passed through `shown_header`, so a literal credential never reaches a
    terminal; any other line as written."""
    if not lines:
        return "", col
    index = min(max(line, 1), len(lines)) - 1
    source = lines[index]
    shown, at, last = [], col, 0
    for start, end in _value_spans(lines, index):
        value = _shown_scalar(source[start:end])
        shown += [source[last:start], value]
        if col - 1 >= end:  # past the value: moved by the change in its length
            at += len(value) - (end - start)
        elif col - 1 > start:  # inside the value: at its start
            at -= col - 1 - start
        last = end
    return "".join(shown) + source[last:], at
