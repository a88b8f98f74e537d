"""Source positions, diagnostics with stable codes, and the error hierarchy.

A leaf module: it imports nothing from attend but the named bounds (`attend.bounds`) and, for type checkers, the
vocabulary (`attend.vocab`). Every problem attend reports about a user's input is
either a `Diagnostic` (collected, many per run: `compile --check`) or an `AttendError` (raised, one at a
time: the public API). Both print as ``file:line:col: error: [code] message``.

A request a command declines as asked (an unknown sensor, a settings write that would be invalid, a
peer message too long, an unusable state folder) is a `Refusal`: one line for the user and the exit
code the command returns, nothing changed. Each package names its own subclass (`SettingsRefusal`,
`ShelfRefused`, `ProbeRefused`, `PeerError`, `SessionError`, `StoreUnavailable`); a command catches the base.
"""

from __future__ import annotations

import enum
from functools import lru_cache

from attend import lazyre
from attend.bounds import EXCERPT_WIDTH
from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from attend.vocab import FailureState

__all__ = [
    "CODES",
    "AttendError",
    "AttendSyntaxError",
    "CompileError",
    "Diagnostic",
    "PathSyntaxError",
    "Refusal",
    "RuntimeFailure",
    "Severity",
    "Span",
    "by_position",
    "caret_excerpt",
    "line_col",
    "reason",
    "source_lines",
    "unforeseen",
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_REJECTED",
    "EXIT_OVERRIDDEN",
    "EXIT_WRITE_FAILED",
    "EXIT_INTERNAL",
]

# Exit codes: every command's, in one place (DESIGN.md, CLI). A command picks one; none invents its own.
#: Done (for `compile --check`: no error found).
EXIT_OK = 0
#: The command ran and failed: a failed poll, an error found, nothing to hand over, a check that failed.
EXIT_FAILED = 1
#: A usage error: bad arguments, an unknown sensor, trigger or key, a project folder that is not there.
EXIT_USAGE = 2
#: A settings write refused: an invalid result, a shipped sensor, trust, a name already taken.
EXIT_REJECTED = 3
#: A settings write that a higher layer overrides, so writing this layer would change nothing.
EXIT_OVERRIDDEN = 4
#: A settings file could not be written; it is as it was.
EXIT_WRITE_FAILED = 5
#: A bug in attend (an exception nothing expected): the one code no bad input may ever produce.
EXIT_INTERNAL = 70


class Severity(enum.StrEnum):
    """How bad a diagnostic is. `--strict` makes warnings fail too."""

    ERROR = "error"
    WARNING = "warning"


#: Every stable diagnostic code, with a one-line summary (docs/diagnostics.md lists them with examples).
#: Codes never change meaning once released; new problems get new codes.
CODES: dict[str, str] = {
    # Reading a file (spec/loading.py)
    "io": "the file could not be read",
    "encoding": "the file is not valid UTF-8 text",
    "file-too-large": "the file is larger than a sensor file may be",
    "yaml-syntax": "the file is not valid YAML",
    "duplicate-key": "a mapping holds the same key twice",
    "alias-limit": "YAML aliases expand past the allowed size",
    "too-deep": "the document nests deeper than allowed",
    "not-a-mapping": "the document (or a block) must be a mapping",
    # The schema (spec/schema.py, spec/validate/)
    "spec-version": "the `spec` field is missing or names an unknown version",
    "unknown-field": "a field the spec does not define",
    "wrong-type": "a field holds a value of the wrong type",
    "bad-value": "a field holds a value outside its allowed set or range",
    "required": "a required field is missing",
    "bad-name": "the sensor name breaks the naming rule or differs from the file stem",
    "bad-duration": "a duration that is not seconds or 500ms/30s/5m/1h",
    "interval-order": "min_interval is above interval",
    "kind-block-missing": "the block named after the sensor's kind is missing",
    "kind-block-mismatch": "a kind block that belongs to another kind",
    "on-rules": "the `on`/`key`/`where` combination is not allowed",
    "lane-author": "a message-lane trigger without `author`",
    "supersedes": "a trigger's `supersedes` names no trigger of the sensor, or makes a cycle",
    "project-refused": "a project file that chooses what runs, from a project not listed in project_sensors",
    "legacy-key": "an old `sensors:` key that sensor files replace",
    "layer-override": "an override file for a sensor no lower layer defines, with fields missing",
    "ignored-file": "a file attend does not read as a sensor (*.yml instead of *.yaml; a test file named to compile --check)",
    "untrusted-key": "a key a project file may not set (project_sensors): a project cannot grant itself trust",
    # Expressions (grammar/, compiler/)
    "path-syntax": "an invalid JSONPath expression",
    "template-syntax": "an invalid description template",
    "pattern-syntax": "an invalid where property or value pattern",
    "regex-syntax": "an invalid regular expression",
    "operator": "an unknown where operator or an operand of the wrong type",
    "no-description": "a trigger without `description` (a `--strict` warning: it says `<trigger>: <key> <on>`)",
    # Sensor test files (compiler/testfiles.py)
    "test-file": "a sensor test file that does not follow the test-file format",
    # Bounds (attend/bounds.py) and the last-resort guard
    "bad-number": "a number that is not finite, or an integer with too many digits",
    "too-many-errors": "a file with more errors than are reported for one file",
    "over-budget": "a sensor whose regular expressions together cost more than a sensor may",
    "check-failed": "attend failed checking this sensor (a bug in attend); the other sensors are unaffected",
}


def unforeseen(file: str, exc: BaseException) -> Diagnostic:
    """The last-resort diagnostic for an exception nobody foresaw while reading or checking one sensor.

    One sensor (or file) is marked `invalid` with it and every other one goes on (issue 14): the
    message names the exception so the bug can be reported, never as a traceback.
    """
    text = str(exc)
    text = text if len(text) <= 200 else text[:199] + "…"
    return Diagnostic(file, 1, 1, "check-failed",
                      f"attend failed checking this sensor ({type(exc).__name__}: {text}); this is a bug in "
                      "attend, please report it; the other sensors are unaffected")


def reason(exc: BaseException) -> str:
    """Why reading or writing a file failed, as a user reads it.

    An OSError says what the OS says ("No such file or directory"), not Python's
    "[Errno 2] No such file or directory: '/x'" (the message names the file already); a decode error
    names the bad byte.
    """
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start:,})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


@record(frozen=True)
class Span:
    """Where something stands in its source: 1-based line and column, 0-based offsets.

    `file` is None for an expression that did not come from a file (the public API). A span never
    takes part in the equality of the node that carries it (IR nodes declare it `compare=False`).
    """

    file: str | None = None
    line: int = 1
    col: int = 1
    offset: int = 0
    end_offset: int | None = None

    def shifted(self, text: str, offset: int, *, quote: int = 0) -> Span:
        """The span of character `offset` of an expression `text` that starts at this span.

        Used to point inside a YAML scalar: the scalar's start, plus lark's offset into the
        expression, plus one for an opening quote. Newlines inside `text` move to later lines.
        """
        line, col = line_col(text, offset)
        if line == 1:
            return Span(self.file, self.line, self.col + quote + col - 1, self.offset + quote + offset)
        return Span(self.file, self.line + line - 1, col, self.offset + quote + offset)

    def __str__(self) -> str:
        return f"{self.file or '<expr>'}:{self.line}:{self.col}"


#: A line break as the YAML reader counts one (YAML 1.1/libyaml: CRLF, CR, LF, NEL, LS, PS), so a
#: position attend computes agrees with the parser's marks whatever breaks a file uses.
#: (LS and PS as alternatives, not in the class: a class reaching past U+00FF costs `re` a 64K-entry map.)
_BREAK = lazyre.compile("\r\n|[\r\n\x85]|\u2028|\u2029")


def line_col(text: str, offset: int) -> tuple[int, int]:
    """Turn a 0-based character offset into a 1-based (line, column) pair.

    The one place this conversion happens; offsets past the end clamp to the end of the text. Lines
    break where YAML breaks them (`\\r\\n`, `\\r`, `\\n`, NEL, U+2028, U+2029).
    """
    offset = max(0, min(offset, len(text)))
    if "\n" not in text and "\r" not in text and (
            text.isascii() or ("\x85" not in text and "\u2028" not in text and "\u2029" not in text)):
        return 1, offset + 1  # one line (most expressions): no scan
    line, start = 1, 0
    for found in _BREAK.finditer(text, 0, min(offset + 1, len(text))):
        if found.end() > offset:  # the offset sits between the \r and \n of a CRLF
            break
        line, start = line + 1, found.end()
    return line, offset - start + 1


@lru_cache(maxsize=8)
def source_lines(text: str) -> tuple[str, ...]:
    """`text` split into lines where YAML breaks them (unlike `str.splitlines`, not at form feeds); a
    text ending in a break ends with an empty line, as the parser can point at it.

    Cached: a file with many problems is split once, not once per excerpt (a str keeps its hash).
    """
    return tuple(_BREAK.split(text))


def caret_excerpt(text: str, line: int, col: int, label: str = "") -> str:
    """A two-line excerpt: the source line and a caret under column `col` (python-jsonpath style).

    A line longer than `EXCERPT_WIDTH` is cut to a window of that width around the column, its cut
    ends marked `…`, so a 62 KB line with 5,000 problems prints 5,000 short excerpts, not 5,000 copies.
    """
    lines = source_lines(text) or ("",)
    source = lines[min(max(line, 1), len(lines)) - 1]
    at = max(col - 1, 0)
    if len(source) > EXCERPT_WIDTH:
        start = max(0, min(at - EXCERPT_WIDTH // 2, len(source) - EXCERPT_WIDTH))
        end = start + EXCERPT_WIDTH
        head, tail = ("…" if start > 0 else ""), ("…" if end < len(source) else "")
        source = head + source[start:end] + tail
        at = at - start + len(head)
    gutter = f"{line} | "
    pad = " " * (len(gutter) - 2) + "| "
    marker = " " * at + "^" + (f" {label}" if label else "")
    return f"{gutter}{source}\n{pad}{marker}"


@record(frozen=True)
class Diagnostic:
    """One problem found in one place. `str()` is the `compile --check` text line."""

    file: str
    line: int
    col: int
    code: str
    message: str
    severity: Severity = Severity.ERROR
    #: Optional extra lines shown under the main line in text output (a caret excerpt, a hint).
    detail: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: [{self.code}] {self.message}"

    def to_json(self) -> dict[str, object]:
        """The `--format json` form of this diagnostic."""
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "severity": str(self.severity),
            "code": self.code,
            "message": self.message,
        }


def by_position(d: Diagnostic) -> tuple[str, int, int, str]:
    """The order `compile --check` prints diagnostics in: by file, line, column, then code.

    Every list of a sensor's problems (`explain`, the first error `attend sensors` shows) uses it, so
    "the first error" is the same one everywhere.
    """
    return (d.file, d.line, d.col, d.code)


class AttendError(Exception):
    """The root of every error attend raises about a user's input.

    Carries a stable `code` and a position; `str(err)` is ``file:line:col: error: [code] message``.
    """

    default_code = "error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        file: str | None = None,
        line: int = 1,
        col: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.file = file
        self.line = line
        self.col = col

    @property
    def column(self) -> int:
        """The 1-based column of the problem (alias of `col`)."""
        return self.col

    def to_diagnostic(self) -> Diagnostic:
        """This error as a diagnostic, for commands that collect problems instead of raising."""
        return Diagnostic(self.file or "<expr>", self.line, self.col, self.code, self.message)

    def __str__(self) -> str:
        return f"{self.file or '<expr>'}:{self.line}:{self.col}: error: [{self.code}] {self.message}"


class AttendSyntaxError(AttendError):
    """An expression (path, template, pattern) that does not parse: `expression` is its text and `offset` the
    0-based offset of the problem in it."""

    default_code = "syntax"

    def __init__(self, message: str, *, expression: str = "", offset: int = 0, code: str | None = None,
                 file: str | None = None, line: int = 1, col: int = 1) -> None:
        super().__init__(message, code=code, file=file, line=line, col=col)
        self.expression = expression
        self.offset = offset


class PathSyntaxError(AttendSyntaxError):
    """An invalid JSONPath expression; `.column` is the 1-based column inside the expression."""

    default_code = "path-syntax"


class CompileError(AttendError):
    """A trigger that cannot be compiled; `.field` names the trigger field at fault (e.g. ``where``).

    A trigger reader's error also says where it stands: `keypath`, the key path of the value at fault in
    the sensor document (`on_key`: its key rather than its value), and for a problem inside an expression,
    the `expression` and the 0-based `offset` in it (None: the problem is the value itself, not a place in
    it); compiler.diagnostics positions and excerpts it."""

    default_code = "compile"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None, file: str | None = None,
                 line: int = 1, col: int = 1, keypath: tuple[str, ...] = (), expression: str = "",
                 offset: int | None = None, on_key: bool = False) -> None:
        super().__init__(message, code=code, file=file, line=line, col=col)
        self.field = field
        self.keypath = keypath
        self.expression = expression
        self.offset = offset
        self.on_key = on_key


class RuntimeFailure(AttendError):
    """A poll that failed; `state` is one of the failure-state names of DESIGN.md."""

    default_code = "runtime"

    def __init__(self, state: FailureState, message: str) -> None:
        super().__init__(message, code=state)
        self.state: FailureState = state


class Refusal(Exception):
    """A request declined as asked, nothing changed: `message` for the user (`str()` of the refusal)
    and `code`, the exit code the command returns (one of this module's `EXIT_*`).

    Subclasses set `default_code`, the exit code when none is given.
    """

    default_code = EXIT_FAILED

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code

    def __str__(self) -> str:
        return self.message
