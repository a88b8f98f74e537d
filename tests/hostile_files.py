"""The hostile sensor files of issue 17 (and 14.0), written into a folder beside one valid file.

Each took attend down, stalled it or slipped through before its bound existed. Used by
tests/runtime/test_hostile_folder.py (compile --check and a real daemon over the folder) and by
benchmarks/bench_hostile.py (worst-case seconds and MB per file).
"""

from __future__ import annotations

from pathlib import Path


def _head(name: str) -> str:
    return f"spec: 1\nname: {name}\nkind: command\ncommand: {{argv: [echo, '{{}}']}}\n"


def _where(name: str, pattern: str) -> str:
    return _head(name) + f"triggers:\n  t: {{on: enters, where: {{f: {{matches: '{pattern}'}}}}}}\n"


#: name → text (str) or raw bytes: every file `compile --check` must report with a position.
HOSTILE: dict[str, str | bytes] = {
    "regex-crash": _where("regex-crash", "(?:a|bc){1000000}"),  # segfaulted the regex compiler
    "regex-cost": _where("regex-cost", "(?:a|b){1000000}"),  # 1.6 s and 403 MB, passed clean
    "regex-nested-repeat": _where("regex-nested-repeat", "(?:(?:a|bc){1000}){1000}"),  # segfault
    "regex-flags": _where("regex-flags", "(?a)(?u)"),  # ValueError escaped
    "regex-groups": _where("regex-groups", "(" * 400 + "a" + ")" * 400),  # RecursionError escaped
    "regex-long": _where("regex-long", "a" * 5000),
    "regex-many": _head("regex-many") + "triggers:\n" + "".join(
        f"  t{i}: {{on: enters, where: {{f: {{matches: '(?:a|b{i}){{20000}}'}}}}}}\n" for i in range(250)),
    "regex-budget": _head("regex-budget") + "triggers:\n" + "".join(
        f"  t{i}: {{on: enters, where: {{f: {{matches: '(?:a|b{i}){{999}}'}}}}}}\n" for i in range(250)),
    "too-many-triggers": _head("too-many-triggers") + "triggers:\n" + "".join(
        f"  t{i}: {{on: enters, where: {{f: {{matches: '(?:a|b){{999}}'}}}}}}\n" for i in range(300)),
    "unknown-fields": _head("unknown-fields") + "triggers:\n  t:\n    on: changed\n" + "".join(
        f"    u{i}: 1\n" for i in range(5000)),  # cerberus: quadratic in errors
    "argv-lists": "spec: 1\nname: argv-lists\nkind: command\ncommand: {argv: [" + ", ".join(["[]"] * 3000) + "]}\n",
    "operators-one-line": _head("operators-one-line") + "triggers:\n  t: {on: enters, where: {f: {"
    + ", ".join(f"op{i}: 1" for i in range(5000)) + "}}}\n",  # 505 MB of excerpts
    "description-huge": _head("description-huge") + "triggers:\n  t: {on: changed, description: '"
    + "{a}" * 50000 + "'}\n",
    "nan": _head("nan") + "threshold: .nan\ntriggers:\n  t: {on: changed, magnitude: .nan}\n",
    "interval-digits": _head("interval-digits") + "interval: '" + "9" * 400 + "s'\n",
    "interval-arabic-digit": _head("interval-arabic-digit") + "interval: '٣s'\n",
    "interval-zeros": _head("interval-zeros") + "interval: 1" + "0" * 400 + "\n",  # OverflowError, exit 70
    "magnitude-1e400": _head("magnitude-1e400") + "triggers:\n  t: {on: changed, magnitude: 1e400}\n",
    "integer-6000-digits": _head("integer-6000-digits") + "threshold: " + "9" * 6000 + "\n",  # ValueError
    "cr-line-breaks": b"spec: 1\rname: cr-line-breaks\rkind: command\rcommand: {argv: [a]}\rx: \x07\r",
    "nel-line-breaks": "spec: 1\x85name: nel-line-breaks\x85kind: command\x85x: \x07\x85".encode(),
}

#: A pattern that is valid and bounded but not linear: it must be searched with the match timeout.
FUZZY = "(?b)" + "x{e<=2}" * 12

VALID = _head("calm") + "interval: 1s\nmin_interval: 0.2s\ntriggers:\n  t: {on: changed}\n"


def write_hostile_files(folder: Path) -> list[Path]:
    """Write every hostile file and the valid `calm.yaml` into `folder`; returns the hostile paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in HOSTILE.items():
        path = folder / f"{name}.yaml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    (folder / "calm.yaml").write_text(VALID)
    return paths
