"""The typing gate (issue 38): how much of src/attend mypy can type, checked by `make test` after mypy.

`make test` runs mypy with `--any-exprs-report .venv/typing`; this reads that report and the sources, and fails
(exit 1, naming each shortfall) when

- the share of expressions typed (not `Any`) over all of src/attend is below `overall`,
- a module's share is below `module`, unless the module is listed in `below` with the floor it has now: a
  listed module fails below its own floor, so a listed module can only get better, and it leaves the list
  once it reaches `module` (the gate says so: a listed module at or above `module` fails too, so the list
  never keeps a name it no longer needs),
- src/attend holds more than `ignores` `# type: ignore` comments, or more than `unexplained` of them without an
  error code and a reason (`# type: ignore[code]  # why`, or the reason on the line before it). The goal is
  `ignores = 5` and `unexplained = 0`; both numbers only ever go down.

The numbers live in pyproject.toml, `[tool.attend.typing]`. Usage: `python tests/typing_gate.py REPORT_DIR`.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src" / "attend"

_ROW = re.compile(r"^\s*(?P<name>[\w.]+)\s+(?P<anys>\d+)\s+(?P<exprs>\d+)\s+(?P<share>[\d.]+)%\s*$")
_IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


@dataclass(frozen=True)
class Coverage:
    anys: int
    exprs: int

    @property
    def share(self) -> float:
        return 100.0 if self.exprs == 0 else 100.0 * (self.exprs - self.anys) / self.exprs


@dataclass(frozen=True)
class Floors:
    overall: float
    module: float
    ignores: int
    unexplained: int
    below: dict[str, float]


def read_report(text: str) -> dict[str, Coverage]:
    """The rows of mypy's any-exprs.txt for attend's modules, by module, and `Total`, the sum of those rows (mypy
    also checks benchmarks/, which the gate leaves out)."""
    rows: dict[str, Coverage] = {}
    for line in text.splitlines():
        match = _ROW.match(line)
        if match and (match["name"] == "attend" or match["name"].startswith("attend.")):
            rows[match["name"]] = Coverage(int(match["anys"]), int(match["exprs"]))
    if rows:
        rows["Total"] = Coverage(sum(c.anys for c in rows.values()), sum(c.exprs for c in rows.values()))
    return rows


def read_floors(pyproject: str) -> Floors:
    table = tomllib.loads(pyproject)["tool"]["attend"]["typing"]
    return Floors(overall=float(table["overall"]), module=float(table["module"]), ignores=int(table["ignores"]),
                  unexplained=int(table["unexplained"]),
                  below={name: float(floor) for name, floor in table.get("below", {}).items()})


def type_ignores(root: Path) -> list[tuple[str, int, str]]:
    """Every `# type: ignore` under root: (file, line, what is wrong with it or '')."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            match = _IGNORE.search(line)
            if not match:
                continue
            problem = ""
            if not match["codes"]:
                problem = "no error code"
            elif not match["rest"].strip().startswith("#") and not (number > 1 and lines[number - 2].strip().startswith("#")):
                problem = "no reason (a comment after it or on the line before)"
            found.append((str(path.relative_to(root.parent.parent)), number, problem))
    return found


def shortfalls(rows: dict[str, Coverage], floors: Floors, ignores: list[tuple[str, int, str]]) -> list[str]:
    problems = []
    if "Total" not in rows:
        return ["the report has no Total row: was it written by `mypy --any-exprs-report`?"]
    total = rows["Total"].share
    if total < floors.overall:
        problems.append(f"src/attend is {total:.2f} % typed, below the floor of {floors.overall} %")
    for name, coverage in sorted(rows.items()):
        if name == "Total":
            continue
        share = coverage.share
        if name in floors.below:
            if share < floors.below[name]:
                problems.append(f"{name} is {share:.2f} % typed, below its listed floor of {floors.below[name]} %")
            elif share >= floors.module:
                problems.append(f"{name} is {share:.2f} % typed, at or above {floors.module} %: remove it from "
                                "[tool.attend.typing.below]")
        elif share < floors.module:
            problems.append(f"{name} is {share:.2f} % typed, below {floors.module} % ({coverage.anys} Any "
                            f"expressions of {coverage.exprs})")
    for name in sorted(set(floors.below) - set(rows)):
        problems.append(f"{name} is listed in [tool.attend.typing.below] but is not in the report")
    if len(ignores) > floors.ignores:
        problems.append(f"{len(ignores)} `# type: ignore` comments in src/attend, more than {floors.ignores}")
    unexplained = [f"{file}:{line}: `# type: ignore` with {problem}" for file, line, problem in ignores if problem]
    if len(unexplained) > floors.unexplained:
        problems.append(f"{len(unexplained)} `# type: ignore` comments without an error code and a reason, more "
                        f"than {floors.unexplained}:")
        problems.extend(unexplained)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/typing_gate.py REPORT_DIR", file=sys.stderr)
        return 2
    report = Path(argv[0]) / "any-exprs.txt"
    rows = read_report(report.read_text(encoding="utf-8"))
    floors = read_floors((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    problems = shortfalls(rows, floors, type_ignores(SOURCES))
    for problem in problems:
        print(f"typing gate: {problem}")
    if not problems:
        print(f"typing gate: src/attend is {rows['Total'].share:.2f} % typed (floor {floors.overall} %), "
              f"{len(floors.below)} module(s) listed below {floors.module} %")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
