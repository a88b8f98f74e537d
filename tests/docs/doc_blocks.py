"""The fenced blocks of the user-facing documents, and the markers that say how one is checked.

A marker is an HTML comment on the line right before a fence (invisible on GitHub):

- `<!-- docs: skip REASON -->`: not run here; REASON says why (the network, a command that never ends).
  Keep these few: every other block runs.
- `<!-- docs: exit N -->`: the block's commands are expected to exit N (default 0).
- `<!-- docs: setup COMMAND -->`: a shell command run before the block's own (what the page assumes
  exists, e.g. a file a build writes).
- `<!-- docs: sensor DOC NAME -->` (anywhere in a page): before the page's blocks run, the sensor
  example `NAME` of document DOC is written to the user layer (a page using an example of another).
- `<!-- docs: mcp-server NAME -->` (anywhere in a page): the test MCP server NAME (tests/docs/) is
  registered in ~/.claude.json, as Claude Code would have it.
- `<!-- check: KIND [ARG] -->`: docs/authoring.md's own markers (tests/sensors/test_authoring_doc.py
  checks those blocks); a `sensor`/`test` one also puts its file in the user layer here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Every document whose examples must run: add a file or a glob here and its blocks are checked.
DOCS = ("README.md", "docs/*.md", "plugin/skills/*/SKILL.md")

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[ \t]*$")
MARKER = re.compile(r"^\s*<!-- (?P<kind>docs|check): (?P<words>.*?) -->\s*$")


@dataclass(frozen=True)
class Block:
    doc: str          # path relative to the repository
    line: int         # 1-based line of the opening fence
    lang: str
    body: str
    marker: tuple[str, ...] = ()  # the marker's words, the kind first ("docs" or "check")

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def directive(self, name: str) -> tuple[str, ...] | None:
        """The words after `docs: NAME` when the block carries that marker."""
        if self.marker[:2] == ("docs", name):
            return self.marker[2:]
        return None


def documents() -> list[Path]:
    out: list[Path] = []
    for pattern in DOCS:
        out.extend(sorted(REPO.glob(pattern)))
    return out


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of `path` in order, each with the marker on the line before it."""
    lines = path.read_text().split("\n")
    doc = str(path.relative_to(REPO))
    out, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = opening["indent"]
        j = i + 1
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]):
            j += 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j])
        before = MARKER.match(lines[i - 1]) if i else None
        marker = (before["kind"], *before["words"].split()) if before else ()
        out.append(Block(doc, i + 1, opening["lang"], body, marker))
        i = j + 1
    return out


def page_directives(path: Path, name: str) -> list[tuple[str, ...]]:
    """Every `<!-- docs: NAME ... -->` marker of a page, wherever it stands."""
    return [tuple(m["words"].split()[1:]) for m in map(MARKER.match, path.read_text().split("\n"))
            if m and m["kind"] == "docs" and m["words"].split()[0] == name]


def all_blocks() -> list[Block]:
    return [b for path in documents() for b in blocks(path)]
