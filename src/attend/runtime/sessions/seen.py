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
  in the same transaction as the position (`session_seen`, store/session_rows.py).
- Test lines (`sensors fire`) are never filtered: a test belongs to the session that ran it.
- The first peer message (a message-lane row keyed by a message id, with an author) a session is shown from
  a sender says how to answer it (`delivery.REPLY_HINT_META`: `attend peers reply ID "..." answers it`), as a
  fact; that it was said is the seen item `:reply-hint:<author>`, recorded with the message, so each sender's
  hint is said once per session whichever conduit showed it. A digest line carries none (the next single
  message from that sender does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:

    from attend.runtime.store import JournalEntry

__all__ = ["REPLY_HINT", "authors_of", "for_session", "hint_item", "items_of"]

#: The seen item prefix recording that a session was told how to answer a sender (`:reply-hint:<author>`).
REPLY_HINT = ":reply-hint:"


def authors_of(entry: JournalEntry) -> list[str]:
    """Who composed what an entry reports: its `meta.author`, or a digest's `meta.authors`; [] for none."""
    meta = entry.meta or {}
    if isinstance(meta.get("author"), str):
        return [meta["author"]]
    authors = meta.get("authors")
    return [str(a) for a in authors] if isinstance(authors, list) else []


def items_of(entry: JournalEntry) -> list[str]:
    """The authored items an entry shows, as `<sensor>/<key>` ([] for a row without an author or key)."""
    if entry.test:
        return []
    meta = entry.meta or {}
    if isinstance(meta.get("author"), str):
        from attend.runtime.delivery import REPLY_HINT_META

        hinted = [REPLY_HINT + meta["author"]] if meta.get(REPLY_HINT_META) else []
        return [f"{entry.sensor}/{entry.key}", *hinted] if entry.key is not None else []
    keys = meta.get("keys")
    if isinstance(meta.get("authors"), list) and isinstance(keys, list):
        return [f"{entry.sensor}/{k}" for k in keys]
    return []


def hint_item(lane: str, key: str | None, author: str | None, test: bool = False) -> str | None:
    """The seen item of the reply hint a peer message's line would carry (`REPLY_HINT` and its author), or None
    for a line that is not a peer message (another lane, a test, no author, a key that is no message id)."""
    if lane != "message" or test or not isinstance(author, str) or key is None:
        return None
    from attend.peers.mailbox import MESSAGE_ID_RE

    return REPLY_HINT + author if MESSAGE_ID_RE.fullmatch(key) else None


def for_session(entries: Sequence[JournalEntry], session: str | None, seen: Iterable[str]) -> tuple[list[JournalEntry], list[str]]:
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
        fresh = [n for n in names if n not in seen]
        hint = hint_item(entry.lane, entry.key, (entry.meta or {}).get("author"))
        if hint is not None and hint not in seen:
            from attend.records import replace
            from attend.runtime.delivery import REPLY_HINT_META

            entry = replace(entry, meta={**(entry.meta or {}), REPLY_HINT_META: True})
            fresh.append(hint)
        shown.append(entry)
        seen.update(fresh)
        items.extend(fresh)
    return shown, items
