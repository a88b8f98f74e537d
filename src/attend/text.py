"""Terminal-safe text: how anything attend prints that came from elsewhere is shown, on one line when asked.

Everything attend prints that came from another process or the file system (a message's text, a
project path, a sensor's description, a diagnostic) goes through this module: `attend peers`
(commands/peers.py), the `messages` sensor (sensors/messages.py), every notification line
(runtime/delivery.py `format_line`), `attend run`'s start-up lines and `compile --check`'s text output
(compiler/check.py), every `--json` output (`json_text`), the history, explain, doctor and the sensors
tab. The one policy:

- Redaction first (`attend.redact`, the leaf this module builds on): no credential survives any text
  made here, and every cut here redacts before it cuts and never splits a `<redacted>` mark.
- `printable`: control characters become `\\xNN` escapes, the bidirectional controls that reorder
  what a reader sees (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) `\\uNNNN` escapes, and a lone
  surrogate (valid in JSON, not in UTF-8) becomes U+FFFD; newlines and tabs are kept.
- `json_text`: JSON for a terminal: non-ASCII text kept as is, except the characters `printable`
  escapes that JSON passes raw (C1 controls, the bidirectional controls, U+2028/U+2029, lone
  surrogates), which are written as `\\uNNNN` escapes: the same data, and nothing that drives the terminal.
- `quoted`: what another program said that a message quotes (a remote MCP server's refusal and its
  `WWW-Authenticate` challenge, an error a server answered with): printable on one line and cut to
  `QUOTED_CHARS`, once, where attend takes the words in (runtime/mcp/pool.py), so the status, `attend
  sensors`, `sensors probe`, `doctor`, `sensors history`, the tab and every `--json` show the same text.
- `LINE_BREAKS` are the characters that end a line (`str.splitlines`'s set: LF, CR, VT, FF, FS, GS,
  RS, NEL, LS, PS). A one-line form either folds them (`fold_lines`: each run becomes one space; with
  `printable(one_line=True)` and `one_line`, tabs too) or, where the exact text matters (a
  diagnostic), shows each as an escape (`escaped_lines`: `\\n`, `\\r`, `\\x0b`, `\\u2028`...).
"""

from __future__ import annotations

from attend import lazyre
from attend.redact import cut, redact, redact_data

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    import re
    from typing import Any

__all__ = ["LINE_BREAKS", "QUOTED_CHARS", "changes_text", "escaped_lines", "fold_lines", "iso_time", "json_text", "one_line",
           "printable", "printable_path", "quoted"]

#: Every character that ends a line (what `str.splitlines` breaks at; YAML's NEL, LS and PS among them).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

_CONTROL = lazyre.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BREAK_RUNS = lazyre.compile(f"[{LINE_BREAKS}]+")
_BREAK_OR_TAB_RUNS = lazyre.compile(f"[\t{LINE_BREAKS}]+")
_TAB_NEWLINE = lazyre.compile(r"[\t\n]")
_SURROGATES = lazyre.compile("[\ud800-\udfff]")
#: What `json.dumps(..., ensure_ascii=False)` leaves raw that a terminal acts on (it escapes the C0
#: controls itself, not DEL).
_JSON_RAW = lazyre.compile("[\x7f\x80-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` redacted (`attend.redact`: no credential survives) with control characters shown as escapes
    (and with `one_line`, each run of line breaks and tabs folded to one space)."""
    if one_line:
        text = _BREAK_OR_TAB_RUNS.sub(" ", text)
    return _CONTROL.sub(_escape, _SURROGATES.sub("\ufffd", redact(text)))


def json_text(value: object, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)` of `value` redacted (`attend.redact.redact_data`),
    with what a terminal acts on written as `\\uNNNN`. `ensure_ascii=True` may be asked for."""
    import json

    options.setdefault("ensure_ascii", False)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(redact_data(value), **options))


def printable_path(path: object) -> str:
    """A file system path as one printable token: like `printable`, and its tabs and newlines escaped too."""
    return _TAB_NEWLINE.sub(_escape, printable(str(path)))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def one_line(text: str, limit: int) -> str:
    """`text` printable on one line, cut to at most `limit` characters (the last one `…` when cut)."""
    return cut(printable(text, one_line=True).strip(), limit)  # redacted first: a cut never leaves a prefix


#: The most characters of another program's words a message quotes (docs/mcp.md: a refusing server's answer).
QUOTED_CHARS = 300


def quoted(text: str, limit: int = QUOTED_CHARS) -> str:
    """What another program said (a server's answer, its challenge, an error it sent), as a message quotes it:
    printable on one line, cut to `limit` characters (`one_line`)."""
    return one_line(text, limit)


def fold_lines(text: str) -> str:
    """`text` with each run of line breaks folded to one space (tabs kept); not yet `printable`."""
    return _BREAK_RUNS.sub(" ", text)


def escaped_lines(text: str) -> str:
    """`text` printable on one line with every line break shown as an escape (`\\n`, `\\r`, `\\x0b`,
    `\\u2028`...): a diagnostic keeps the exact text it quotes and still takes one line."""
    return printable(text.replace("\n", "\\n").replace("\r", "\\r"))


def iso_time(t: float | None) -> str | None:
    """A wall-clock time as ISO-8601 UTC to the second (None stays None): how commands show times."""
    if t is None:
        return None
    from datetime import UTC, datetime  # only where a time is shown

    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="seconds")


def changes_text(count: int) -> str:
    """How many changes one line stands for, as it ends that line: `1 change held`, `4 changes held` (a held
    key's newest value: runtime/delivery.py `newest_per_key`, a flapping key's settled line)."""
    return f"{count} change held" if count == 1 else f"{count} changes held"
