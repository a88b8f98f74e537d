"""A poll's fires as the store's pending observations: the first step after evaluation (DESIGN.md, Runtime).

The one conversion for the daemon's polls and `sensors poll` (`pipeline.record_poll`) and for a test fire
(`sensors fire`, which journals them as test rows); it imports no trio, so the test fire's command does not.
What rides along in an observation's `meta`: the MCP server a line names, the session a `scope: session`
poll was for (only that session is shown the line), the author (a session is not told its own messages;
a digest's authors and keys), and `progress` (a move to a value the key has not had: no relative refractory).
"""

from __future__ import annotations

from typing import Any

from attend.compiler import Fire, ops
from attend.compiler.digest import DIGEST_TRIGGER
from attend.runtime.delivery import PROGRESS_META, SESSION_META
from attend.runtime.kinds import PollOutcome
from attend.runtime.store import Observation

__all__ = ["observations_from"]


def _key_text(key: Any) -> str | None:
    """A fire's key value as the observation's key text (rendered as `{key}` renders it)."""
    return None if key is None else ops.render_value(key)


def observations_from(fires: list[Fire], outcome: PollOutcome, now: float, *, session: str | None = None) -> list[Observation]:
    """The fires of one poll as observations; an MCP outcome's server rides along in `meta`, and so does
    the session a session-scoped poll was for (`meta.session`: only that session is shown the line)."""
    meta: dict[str, Any] = {"server": outcome.server} if outcome.server else {}
    if session is not None:
        meta[SESSION_META] = session
    return [
        Observation(
            trigger=str(fire.trigger),
            magnitude=float(fire.magnitude),
            description=str(fire.description),
            key=_key_text(fire.key),
            meta={**meta, **_author_meta(fire), **({PROGRESS_META: True} if getattr(fire, "progress", False) else {})},
            time=now,
        )
        for fire in fires
    ]


def _author_meta(fire: Fire) -> dict[str, Any]:
    """Who composed what a fire reports (its trigger's `author`), so delivery leaves a session's own out.

    A digest fire (compiler/digest.py) carries the authors and keys of the fires it stands for.
    """
    if fire.trigger == DIGEST_TRIGGER and fire.key is None and isinstance(fire.item, dict) and "authors" in fire.item:
        return {"authors": list(fire.item["authors"]), "keys": list(fire.item["keys"])}
    return {"author": str(fire.author)} if fire.author is not None else {}
