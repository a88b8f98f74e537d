"""Authored items per session: never your own, and each one once (DESIGN.md, "Peers"; docs/peers.md).

A journal row from a trigger with `author` carries that author in `meta.author` (runtime/pipeline.py);
a digest row carries `meta.authors` and `meta.keys` (compiler/digest.py).

Decisions implemented here, applied by both conduits of a session (its `attend run` Monitor stream,
runtime/sessions/printer.py, and its Stop-hook drain, commands/drain.py) and by its cold start:

- A session is not shown a row whose author is its own id (a digest: whose authors are all its own):
  the session wrote it. The row still counts as handled, so its position moves past it.
- An authored row names its items `<sensor>/<key>`. A session is shown each item once: an item it
  already saw (through the other conduit's position, its cold start, or an earlier fire of the same
  message) is left out; a digest whose items were all seen is left out. The items shown are recorded
  in the same transaction as the position (`session_seen`, store/sessions.py).
- Test lines (`sensors fire`) are never filtered: a test belongs to the session that ran it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["authors_of", "for_session", "items_of"]


def authors_of(entry: Any) -> list[str]:
    """Who composed what an entry reports: its `meta.author`, or a digest's `meta.authors`; [] for none."""
    meta = entry.meta or {}
    if isinstance(meta.get("author"), str):
        return [meta["author"]]
    authors = meta.get("authors")
    return [str(a) for a in authors] if isinstance(authors, list) else []


def items_of(entry: Any) -> list[str]:
    """The authored items an entry shows, as `<sensor>/<key>` ([] for a row without an author or key)."""
    if entry.test:
        return []
    meta = entry.meta or {}
    if isinstance(meta.get("author"), str):
        return [f"{entry.sensor}/{entry.key}"] if entry.key is not None else []
    keys = meta.get("keys")
    if isinstance(meta.get("authors"), list) and isinstance(keys, list):
        return [f"{entry.sensor}/{k}" for k in keys]
    return []


def for_session(entries: Sequence[Any], session: str | None, seen: Iterable[str]) -> tuple[list[Any], list[str]]:
    """The entries `session` is shown, and the authored items they show it (to record as seen).

    Args:
        entries: journal entries, in journal order.
        session: the session id (None: an in-process daemon with no session, which filters nothing).
        seen: the items the session was already shown.
    """
    if session is None:
        return list(entries), []
    seen = set(seen)
    shown, items = [], []
    for entry in entries:
        if entry.test:
            shown.append(entry)
            continue
        authors = authors_of(entry)
        names = items_of(entry)
        own = bool(authors) and all(a == session for a in authors)
        if own or (names and all(n in seen for n in names)):
            continue
        shown.append(entry)
        fresh = [n for n in names if n not in seen]
        seen.update(fresh)
        items.extend(fresh)
    return shown, items
