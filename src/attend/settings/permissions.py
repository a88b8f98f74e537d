"""`attend permissions`: each enabled sensor's `requires:` against Claude Code's permission rules (upstream's
permissions audit; docs/settings.md).

A sensor's `requires:` names the tool permissions an agent needs to act on what it reports, in Claude
Code's own rule syntax (`Bash(gh:*)`, `WebFetch(domain:api.github.com)`, `mcp__github__get_pull_request`).
Claude Code reads its rules from `permissions.allow`, `.ask` and `.deny` of `~/.claude/settings.json`
(`$CLAUDE_CONFIG_DIR/settings.json`), the project's `.claude/settings.json` and `.claude/settings.local.json`.

Decisions implemented here:

- A requirement is allowed when an allow rule covers every use it names, by Claude Code's matching: a bare
  tool (`Bash`) or `Tool(*)` covers every use of the tool; `Bash(P:*)` and `Bash(P *)` (a prefix: `P` alone or
  `P` followed by a space and anything) cover a prefix requirement `Bash(Q:*)` when `Q` is `P` or starts with
  `P `, and an exact command `Bash(C)` when `C` is `P` or starts with `P `; any other rule covers only the
  same text. An MCP requirement `mcp__server__tool` is covered by `mcp__server` and `mcp__server__*` too.
- Claude Code checks deny, then ask, then allow, the first match deciding: a requirement that a deny or ask
  rule covers whole is reported as blocked (by that rule, in that file) whatever allows it, since adding an
  allow rule changes nothing. A deny rule for part of it (`Bash(gh pr merge:*)` beside `Bash(gh:*)`) is the
  usual way to keep the dangerous part out, and is not reported.
- A settings file that is missing is none; one that cannot be read, or is not a JSON object, is reported and
  its rules left out. Entries that are not strings are ignored. Managed (enterprise) settings are not read.
- Only the sensors the runtime would run are audited (the caller passes them): a sensor that is turned off
  needs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attend.files import claude_folder, read_regular_file

__all__ = ["Audit", "Rule", "audit", "covers", "parse_rule", "permission_files"]

#: The largest settings.json read (bytes).
MAX_SETTINGS_BYTES = 4 << 20
#: `Tool` or `Tool(specifier)`.
RULE_RE = re.compile(r"\s*([A-Za-z0-9_.*-]+)\s*(?:\((.*)\))?\s*\Z", re.DOTALL)
#: The lists Claude Code checks, in its order.
LISTS = ("deny", "ask", "allow")


@dataclass(frozen=True, slots=True)
class Rule:
    """One permission rule: its tool and its specifier (None for the bare tool)."""

    tool: str
    spec: str | None

    def text(self) -> str:
        return self.tool if self.spec is None else f"{self.tool}({self.spec})"


def parse_rule(text: str) -> Rule | None:
    """The rule `text` writes, or None when it is not one (`Tool` or `Tool(specifier)`)."""
    match = RULE_RE.fullmatch(text)
    if match is None:
        return None
    spec = match.group(2)
    return Rule(match.group(1), None if spec is None else spec.strip())


def _prefix(spec: str) -> tuple[str, bool]:
    """(command, is a prefix) of a Bash specifier: `P:*` and `P *` (no other wildcard) are the prefix `P`."""
    for tail in (":*", " *"):
        if spec.endswith(tail) and "*" not in spec[: -len(tail)]:
            return spec[: -len(tail)].rstrip(), True
    return spec, False


def covers(rule: Rule, need: Rule) -> bool:
    """Whether `rule` matches every use `need` names (the module docstring's matching)."""
    if rule.tool.startswith("mcp__") and need.tool.startswith("mcp__") and need.spec is None:
        server = rule.tool.removesuffix("__*")
        return need.tool == rule.tool or (rule.spec is None and need.tool.startswith(server + "__"))
    if rule.tool != need.tool:
        return False
    if rule.spec is None or rule.spec == "*":
        return True
    if need.spec is None:
        return False
    if rule.spec == need.spec:
        return True
    if rule.tool != "Bash":
        return False
    command, _ = _prefix(need.spec)
    allowed, prefix = _prefix(rule.spec)
    return prefix and "*" not in command and (command == allowed or command.startswith(allowed + " "))


def permission_files(project_dir: Path | str, env: Mapping[str, str]) -> list[Path]:
    """Claude Code's settings files holding permission rules, the user's first."""
    project = Path(project_dir)
    return [claude_folder(env) / "settings.json", project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json"]


@dataclass(frozen=True, slots=True)
class Found:
    """A requirement and what decides it: the rule and the file (None: nothing allows it)."""

    rule: str
    sensors: list[str]
    by: str | None = None
    file: str | None = None
    list: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "sensors": self.sensors, "by": self.by, "file": self.file, "list": self.list}


@dataclass(slots=True)
class Audit:
    """What `attend permissions` found."""

    files: list[Path]
    allowed: list[Found] = field(default_factory=list)
    missing: list[Found] = field(default_factory=list)
    blocked: list[Found] = field(default_factory=list)
    #: Requirements that are not a rule at all (`requires: ["curl"]`), with their sensors.
    malformed: list[Found] = field(default_factory=list)
    #: Settings files that could not be read: (file, why).
    unreadable: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.blocked)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "add": [f.rule for f in self.missing],
                "missing": [f.to_json() for f in self.missing], "blocked": [f.to_json() for f in self.blocked],
                "allowed": [f.to_json() for f in self.allowed], "malformed": [f.to_json() for f in self.malformed],
                "files": [str(p) for p in self.files],
                "unreadable": [{"file": str(p), "reason": why} for p, why in self.unreadable]}


def _rules(files: list[Path]) -> tuple[list[tuple[str, Rule, str, Path]], list[tuple[Path, str]]]:
    """Every rule of the files: (list name, rule, its text, file); and the files that could not be read."""
    from attend.errors import reason

    found: list[tuple[str, Rule, str, Path]] = []
    unreadable: list[tuple[Path, str]] = []
    for path in files:
        try:
            document = json.loads(read_regular_file(path, MAX_SETTINGS_BYTES).decode("utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            unreadable.append((path, reason(exc) if isinstance(exc, OSError) else f"not JSON: {exc}"))
            continue
        if not isinstance(document, dict):
            unreadable.append((path, "not a JSON object"))
            continue
        permissions = document.get("permissions")
        for name in LISTS:
            entries = permissions.get(name) if isinstance(permissions, dict) else None
            for text in entries if isinstance(entries, list) else []:
                rule = parse_rule(text) if isinstance(text, str) else None
                if rule is not None:
                    found.append((name, rule, text, path))
    return found, unreadable


def audit(requires: Mapping[str, Iterable[str]], project_dir: Path | str, env: Mapping[str, str]) -> Audit:
    """Each requirement of `requires` (sensor name → its `requires:`) against Claude Code's rules."""
    files = permission_files(project_dir, env)
    rules, unreadable = _rules(files)
    out = Audit(files, unreadable=unreadable)
    needed: dict[str, list[str]] = {}
    for sensor, items in sorted(requires.items()):
        for item in items:
            needed.setdefault(str(item), []).append(sensor)
    for text, sensors in sorted(needed.items()):
        need = parse_rule(text)
        if need is None:
            out.malformed.append(Found(text, sensors))
            continue
        decided = next(((name, rule_text, path) for name in LISTS for list_name, rule, rule_text, path in rules
                        if list_name == name and covers(rule, need)), None)
        if decided is None:
            out.missing.append(Found(need.text(), sensors))
        elif decided[0] == "allow":
            out.allowed.append(Found(need.text(), sensors, decided[1], str(decided[2]), "allow"))
        else:
            out.blocked.append(Found(need.text(), sensors, decided[1], str(decided[2]), decided[0]))
    return out
