"""One line per finding: `supersedes` and the folding of identical lines (DESIGN.md, Delivery, "One line per finding").

Decisions implemented here (pure functions of one poll's fires, so the daemon, `sensors poll`,
`sensors fire` and `attend test` share them):

- **Supersedes** (Alertmanager's inhibition, within one sensor): a trigger may name triggers it
  replaces, `supersedes: [half, two-thirds]`. When it fires in a poll, their fires in that poll are
  dropped and recorded as held, `superseded by <trigger>`. The names are checked by the spec
  (`supersedes` diagnostics: each names a trigger of the sensor, no cycles), so the relation here is a
  plain mapping. A trigger superseded by several firing triggers is attributed to the first of them in
  trigger order.
- **Folding**: fires of one poll that render the same line (same description and author; for an MCP
  sensor also the same key, which its line names) are one line: the heaviest of the group (the first
  of equals) stands for it, in the place of the group's first fire, at the highest magnitude (never
  their sum: one finding reported three ways is still one finding); the others are recorded as held,
  `same line`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attend.compiler.triggers import Fire

__all__ = ["SAME_LINE", "SUPERSEDED", "fold_fires", "supersede"]

#: The hold reason of a fire another trigger of the same poll supersedes.
SUPERSEDED = "superseded"
#: The hold reason of a fire folded into an identical line of the same poll.
SAME_LINE = "same line"


def supersede(
    fires: Sequence[Fire], supersedes: Mapping[str, Sequence[str]]
) -> tuple[list[Fire], list[tuple[Fire, dict[str, Any]]]]:
    """`fires` without those a firing trigger supersedes, and the dropped ones with why.

    Args:
        fires: one poll's fires, in trigger order.
        supersedes: trigger name → the trigger names it supersedes.

    Returns:
        The fires kept (in order), and each dropped fire with `{"reason": "superseded", "by": <trigger>}`.
    """
    if not supersedes or not fires:
        return list(fires), []
    fired = dict.fromkeys(f.trigger for f in fires)
    replaced_by: dict[str, str] = {}
    for trigger in fired:
        for other in supersedes.get(trigger, ()):
            replaced_by.setdefault(other, trigger)
    kept, held = [], []
    for fire in fires:
        by = replaced_by.get(fire.trigger)
        if by is None:
            kept.append(fire)
        else:
            held.append((fire, {"reason": SUPERSEDED, "by": by}))
    return kept, held


def fold_fires(fires: Sequence[Fire], *, by_key: bool = False) -> tuple[list[Fire], list[tuple[Fire, dict[str, Any]]]]:
    """`fires` with those that render the same line folded into the first, at the group's highest magnitude.

    Args:
        fires: one poll's fires.
        by_key: the line names the key too (an MCP sensor's `(server=…, key=…)`), so fires of different
            keys are different lines.

    Returns:
        The lines kept (in order of each group's first fire), and each folded fire with `{"reason":
        "same line", "by": <the trigger of the fire standing for its group>}`.
    """
    if len(fires) < 2:
        return list(fires), []
    groups: dict[tuple[Any, ...], list[Fire]] = {}
    for fire in fires:
        identity = (fire.description, fire.author, repr(fire.key) if by_key else None)
        groups.setdefault(identity, []).append(fire)
    kept: list[Fire] = []
    held: list[tuple[Fire, dict[str, Any]]] = []
    for group in groups.values():
        # The heaviest fire (the first of equals) stands for the group, in the place of its first fire.
        top = max(group, key=lambda f: f.magnitude)
        kept.append(top)
        held.extend((f, {"reason": SAME_LINE, "by": top.trigger}) for f in group if f is not top)
    return kept, held
