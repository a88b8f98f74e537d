"""`attend test [PATH...] [--json]`: run sensor test files (`compiler.testfiles.run_test_file`) and report."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from attend.compiler.testfiles import TEST_SUFFIX, TestFileResult, run_test_file
from attend.errors import Diagnostic


def _discover(targets: list[str], project_dir: Path) -> tuple[list[Path], list[Diagnostic]]:
    from attend.spec import layer_paths

    problems: list[Diagnostic] = []
    if not targets:
        paths = layer_paths(project_dir, os.environ)
        folders = [paths.shipped, paths.user, paths.project]
        found = [p for folder in folders if folder.is_dir() for p in sorted(folder.glob(f"*{TEST_SUFFIX}"))]
        return found, problems
    files: list[Path] = []
    for target in map(Path, targets):
        if target.is_dir():
            files.extend(sorted(target.rglob(f"*{TEST_SUFFIX}")))
        elif target.is_file():
            files.append(target)
        elif target.exists():
            problems.append(Diagnostic(str(target), 1, 1, "test-file", "not a regular file or a folder"))
        else:
            problems.append(Diagnostic(str(target), 1, 1, "test-file", "no such test file or folder"))
    return files, problems


def _yaml_line(value: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()) + "}"


def _print_text(results: list[TestFileResult], problems: list[Diagnostic]) -> None:
    for d in problems:
        print(d, file=sys.stderr)
    for r in results:
        if r.problems:
            print(f"ERROR {r.file}")
            for d in r.problems:
                print(f"  {d}")
                if d.detail:
                    print("    " + d.detail.replace("\n", "\n    "))
            continue
        if r.ok:
            print(f"PASS  {r.file} ({r.sensor}, {len(r.polls)} poll{'s' if len(r.polls) != 1 else ''})")
            continue
        print(f"FAIL  {r.file} ({r.sensor})")
        if len(r.layers) > 1:  # an override changes what the test sees: say which files were merged
            print(f"  tested the sensor as merged from: {'; '.join(r.layers)}")
        for p in r.polls:
            if p.ok:
                continue
            print(f"  poll {p.index} (line {p.line}):")
            print("    expected:" + ("" if p.expected else " nothing"))
            for e in p.expected:
                print(f"      - {_yaml_line(e)}")
            print("    got:" + ("" if p.got else " nothing"))
            for g in p.got:
                print(f"      - {_yaml_line({k: v for k, v in g.items() if k != 'key'})}")
            for w in p.warnings + p.line_errors:
                print(f"    warning: {w}")
    if results:
        passed = sum(1 for r in results if r.ok)
        print(f"{passed} of {len(results)} test file(s) passed")


def main(args: Any) -> int:
    """`attend test [PATH...] [--json]`: run sensor test files; 0 all passed, 1 otherwise."""
    project_dir = Path(args.project_dir)
    files, problems = _discover(list(args.paths or []), project_dir)
    results = [run_test_file(f, project_dir) for f in files]
    if args.json:
        print(json.dumps({
            "ok": not problems and all(r.ok for r in results),
            "problems": [d.to_json() for d in problems],
            "files": [r.to_json() for r in results],
        }, indent=2, ensure_ascii=False))
    else:
        if not files and not problems:
            print("no sensor test files found")
        _print_text(results, problems)
    return 0 if not problems and all(r.ok for r in results) else 1
