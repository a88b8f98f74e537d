"""`attend compile --check [PATH...] [--format text|json|github] [--strict]`: load, check, print, exit code.

On the lint path: imports only spec, grammar and compiler (never trio, mcp or textual)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from attend.compiler.check import check, exit_code, format_diagnostics, with_excerpts
from attend.errors import Diagnostic, Severity
from attend.spec import SensorSet, load_paths, load_set

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO


def _summary(sensor_set: SensorSet, diagnostics: list[Diagnostic]) -> str:
    files = {str(f.path) for s in sensor_set.sensors.values() for f in s.files}
    errors = sum(d.severity == Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    return (f"checked {plural(len(files), 'file')} ({plural(len(sensor_set.sensors), 'sensor')}): "
            f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")


def run(paths: list[str], project_dir: str, *, env: Mapping[str, str] | None = None, fmt: str = "text",
        strict: bool = False, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The whole command, in-process: load, check, print, and return the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    env = os.environ if env is None else env
    sensor_set = load_paths([Path(p) for p in paths], project_dir, env) if paths else load_set(project_dir, env)
    diagnostics = check(sensor_set, strict=strict)
    if fmt == "text":
        diagnostics = with_excerpts(diagnostics)
    out.write(format_diagnostics(diagnostics, fmt))
    if fmt == "text":
        err.write(_summary(sensor_set, diagnostics) + "\n")
    return exit_code(diagnostics, strict=strict)


def main(args: Any) -> int:
    """The `attend compile --check` handler (args: paths, format, strict, project_dir)."""
    return run(list(args.paths), args.project_dir, fmt=args.format, strict=args.strict)
