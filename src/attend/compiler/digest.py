"""A sensor's `digest:`: more than `over` fires in one poll become one line (DESIGN.md, "Peers").

Decision: the digest replaces the poll's fires after every trigger ran (and, in the daemon, after
shelving), so trigger state is exactly what it would be without it: each item still counts as seen.
The one fire left weighs the heaviest of the fires it stands for (a digest holding an addressed message
is as urgent as that message), has no key, and carries in its item what delivery needs to leave a
session's own fires out: `count`, `from` (the authors, comma-separated, for the template), `authors`
and `keys`.
"""

from __future__ import annotations

from dataclasses import dataclass

from attend import ir
from attend.compiler import ops
from attend.compiler.templates import Render, compile_template
from attend.compiler.triggers import Fire

__all__ = ["DIGEST_TRIGGER", "Digest", "compile_digest"]

#: The trigger name a digest line is journaled under.
DIGEST_TRIGGER = "digest"


@dataclass(frozen=True, slots=True)
class Digest:
    """A compiled `digest:` block."""

    over: int
    render: Render

    def apply(self, fires: list[Fire]) -> list[Fire]:
        """`fires` as they are, or the one digest fire when there are more than `over` of them."""
        if len(fires) <= self.over:
            return fires
        authors = list(dict.fromkeys(str(f.author) for f in fires if f.author is not None))
        item = {"count": len(fires), "from": ", ".join(authors), "authors": authors,
                "keys": [ops.render_value(f.key) for f in fires if f.key is not None]}
        description = self.render(item, None, ops.MISSING, lambda _: None)
        return [Fire(DIGEST_TRIGGER, None, max(f.magnitude for f in fires), description, item, None)]


def compile_digest(block: ir.DigestBlock | None) -> Digest | None:
    """The `digest:` block of a validated sensor (`ir.Sensor.digest`) as a `Digest` (None when it has none)."""
    if block is None:
        return None
    from attend.errors import AttendSyntaxError, CompileError
    from attend.grammar import parse_template

    try:
        template = parse_template(block.description)
    except AttendSyntaxError as exc:  # `diagnose` reports it at its line; a caller of compile_sensor gets this
        raise CompileError(f"digest description: {exc}", field="digest", code=exc.code) from None
    return Digest(block.over, compile_template(template))
