"""`attend compile --check [PATH...]`: every problem of every sensor file, positioned (DESIGN.md, CLI).

With no path it checks every layer of the project and config.yaml's old keys; with paths, those files
and folders. Spec problems come from `attend.spec`; expression problems (paths, templates, patterns,
regexes) from `attend.compiler.diagnose`, run on each sensor whose structure is sound enough to compile.
Imports stay light on purpose: never trio, never mcp (benchmarks/bench_check.py measures start-up).

Exit codes: 0 clean, 1 any error (or any warning with `--strict`), 2 usage (argparse).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    pass

from attend.compiler.diagnostics import missing_descriptions
from attend.errors import Diagnostic, Severity, by_position, unforeseen
from attend.spec import SensorSet
from attend.spec.loaded import MergedSensor
from attend.spec.loading import read_source, with_excerpt

__all__ = ["BLOCKING_CODES", "check", "exit_code", "format_diagnostics", "sensor_diagnostics",
           "with_excerpts"]

#: Spec problems after which a sensor's triggers are not handed to the compiler: a file of it did not
#: parse. Any other spec problem still lets the expressions be checked (the expression checker reads
#: each field on its own and reports only expression codes), so one run shows every problem.
BLOCKING_CODES = frozenset({
    "io", "encoding", "file-too-large", "yaml-syntax", "alias-limit", "too-deep", "not-a-mapping",
    "over-budget", "too-many-errors",
})

Diagnose = Callable[[MergedSensor], list[Diagnostic]]


def check(sensor_set: SensorSet, diagnose: Diagnose | None = None, *, strict: bool = False) -> list[Diagnostic]:
    """Every diagnostic of a loaded sensor set, expression checks included, sorted and without repeats.

    Args:
        sensor_set: what `load_set` or `load_paths` returned.
        diagnose: the expression checker (default `attend.compiler.diagnose`).
        strict: add the style warnings `--strict` reports (a trigger without `description`).
    """
    found: list[Diagnostic] = list(sensor_set.diagnostics)
    for sensor in sensor_set.sensors.values():
        found.extend(sensor_diagnostics(sensor, diagnose, strict=strict))
    seen: set[tuple[str, int, int, str, str]] = set()
    unique = []
    for d in found:
        identity = (d.file, d.line, d.col, d.code, d.message)
        if identity not in seen:
            seen.add(identity)
            unique.append(d)
    return capped(sorted(unique, key=by_position))


def sensor_diagnostics(sensor: MergedSensor, diagnose: Diagnose | None = None, *, strict: bool = False) -> list[Diagnostic]:
    """One sensor's diagnostics as `check` finds them: the spec's, then the expression checks when its
    structure is sound enough to compile (unsorted; `check` sorts the whole set with `by_position`)."""
    if diagnose is None:
        from attend.compiler import diagnose as diagnose_expressions

        diagnose = diagnose_expressions
    found = list(sensor.diagnostics)
    if _compilable(sensor):
        try:
            found.extend(diagnose(sensor))
            if strict:
                found.extend(missing_descriptions(sensor))
        except Exception as exc:  # noqa: BLE001 - the last-resort guard: this file flagged, the rest checked
            found.append(unforeseen(str(sensor.file or sensor.name), exc))
    return found


def capped(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """At most MAX_ERRORS_PER_FILE errors per file (the first by position), then one line saying how many
    more there are: a file with 5,000 problems prints 50 and "and 4,950 more", not 5,000 excerpts."""
    from attend.bounds import MAX_ERRORS_PER_FILE

    errors: dict[str, int] = {}
    out = []
    stopped = {d.file for d in diagnostics if d.code == "too-many-errors"}  # said once per file
    for d in diagnostics:
        if d.severity == Severity.ERROR and d.code != "too-many-errors":
            errors[d.file] = errors.get(d.file, 0) + 1
            if errors[d.file] > MAX_ERRORS_PER_FILE:
                continue
        out.append(d)
    for file, count in errors.items():
        if count > MAX_ERRORS_PER_FILE and file not in stopped:
            out.append(Diagnostic(file, 1, 1, "too-many-errors",
                                  f"and {count - MAX_ERRORS_PER_FILE:,} or more further errors in this file, not shown "
                                  f"(at most {MAX_ERRORS_PER_FILE} are reported per file): fix these and check again"))
    return sorted(out, key=by_position)


def _compilable(sensor: MergedSensor) -> bool:
    from attend.bounds import MAX_TRIGGERS, MAX_WHERE_PROPERTIES

    if not sensor.files or any(f.data is None for f in sensor.files):
        return False
    # the document's sizes as written: what is refused here is the cost of reading it
    triggers = sensor.data.get("triggers")
    if not isinstance(triggers, dict) or len(triggers) > MAX_TRIGGERS:
        return False  # a file known invalid for its size is not compiled (its cost is what is refused)
    if any(isinstance(t, dict) and isinstance(t.get("where"), dict) and len(t["where"]) > MAX_WHERE_PROPERTIES
           for t in triggers.values()):
        return False
    return not any(d.code in BLOCKING_CODES and d.severity == Severity.ERROR for d in sensor.diagnostics)


def exit_code(diagnostics: Iterable[Diagnostic], *, strict: bool = False) -> int:
    """1 when an error (or, with `strict`, a warning) was found, else 0."""
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return 1 if any(d.severity in failing for d in diagnostics) else 0


def _github_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_diagnostics(diagnostics: list[Diagnostic], fmt: str) -> str:
    """The diagnostics in one of the output formats: `text`, `json` or `github`.

    text: `file:line:col: severity: [code] message`, its detail indented beneath; json: an array of
    `Diagnostic.to_json()` objects; github: one workflow command per diagnostic (Actions annotations).
    """
    if fmt == "json":
        import json  # only for --format json

        return json.dumps([d.to_json() for d in diagnostics], indent=2, ensure_ascii=False) + "\n"
    if not diagnostics:
        return ""
    from attend.text import (
        escaped_lines,  # each diagnostic one printable line, its breaks escaped
    )

    lines = []
    for d in diagnostics:
        if fmt == "github":
            lines.append(f"::{d.severity} file={_github_escape(d.file, prop=True)},line={d.line},col={d.col},"
                         f"title={_github_escape(f'[{d.code}]', prop=True)}::{_github_escape(d.message)}")
        else:
            lines.append(escaped_lines(str(d)))
            lines.extend("    " + escaped_lines(line) for line in d.detail.split("\n") if d.detail)
    return "".join(line + "\n" for line in lines)


#: Codes about the file as a whole: an excerpt of its first line would say nothing.
_WHOLE_FILE_CODES = frozenset({"io", "encoding", "file-too-large"})


def with_excerpts(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics, each without a detail given a caret excerpt of its source line.

    Problems that concern the whole file (at 1:1, or unreadable files) get none.
    """
    texts: dict[str, str | None] = {}
    out = []
    for d in diagnostics:
        if d.detail or d.code in _WHOLE_FILE_CODES or (d.line, d.col) == (1, 1):
            out.append(d)
            continue
        if d.file not in texts:
            texts[d.file] = read_source(Path(d.file))[0]
        text = texts[d.file]
        out.append(d if text is None else with_excerpt(d, text))
    return out






