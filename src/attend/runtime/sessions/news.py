"""News, not backlog: what a session's stream hands over when it (re)starts (DESIGN.md, "Delivery").

A stream's first round (its `attend run` starting, or starting again) finds rows it never showed: the
ones journaled while it was down, and the ones no session ever showed (a crash between journaling and
printing). Only what is still news is handed over as it is (`news`):

- a test row (`sensors fire`) written before the stream started is never shown: a test belongs to the
  session that ran it, and that session saw it where it ran;
- a message-lane row is shown however old (a message waits for its reader), but a sensor's digest rule
  applies to the rows it has waiting: more than its `digest.over` become its one digest line;
- an event-lane row younger than `attend.delivery.stale_after` (default 10m) is shown as it is; older
  ones are one line, `N notifications while this session was away; attend sensors history` (`away_text`),
  as urgent as the most urgent of them but never `high` (old news does not interrupt);
- a row about another session, or about this session itself, was left out before (handover.py).

Every row of the backlog counts as handled (summarized, digested or shown): the stream records it with
the rest of the round, after printing, so a crash in between hands it over again and never loses it; a
row a crash kept from every session is handed over too, counted in the summary line once it is old.
Later rounds print rows as they come: what arrives while a stream runs is news.

The hooks (handover.py `hook_handover`) apply the same rules to every handover: a hook hands over what
the session missed since its last one, so its rows are a backlog each time (after a busy session's tool
call, all news; at a session's first hook, or its first prompt after an hour away, the old ones are the
summary line). `stale_after` and `digest_rules` read the project's setting and rules for both conduits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from attend.records import replace
from attend.runtime.delivery import priority

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.compiler.digest import Digest
    from attend.runtime.store import JournalEntry

__all__ = ["AWAY_SENSOR", "away_line", "away_text", "digest_rules", "news", "stale_after"]

#: The sensor name the summary line of stale notifications is printed under (it stands for several).
AWAY_SENSOR = "attend"


def away_text(count: int) -> str:
    """The one line standing for the event-lane notifications too old to hand over one by one."""
    return f"{count} notification{'s' if count != 1 else ''} while this session was away; attend sensors history"


def news(
    entries: Sequence[JournalEntry], *, now: float, started: float, stale_after: float,
    digest_of: Callable[[str], Digest | None] | None = None,
) -> list[JournalEntry]:
    """The lines a (re)starting stream hands over of its backlog `entries` (already filtered for its session).

    Args:
        entries: journal entries, in journal order.
        now: wall-clock seconds.
        started: when the stream started (a test row from before it is never shown).
        stale_after: seconds after which an event-lane row is counted in the summary line instead.
        digest_of: the compiled digest (compiler/digest.py) of a sensor by name, or None for none.

    Returns:
        Entries to print, in journal order: the summary line (when any row is stale) first, as an entry
        of `AWAY_SENSOR` with the id of the last row it stands for.
    """
    kept: list[JournalEntry] = []
    stale: list[JournalEntry] = []
    messages: dict[str, list[JournalEntry]] = {}
    for entry in entries:
        if entry.test:
            if entry.time >= started:
                kept.append(entry)
        elif entry.lane == "message":
            if entry.key is not None:  # one message (a digest row already journaled stays as it is)
                messages.setdefault(entry.sensor, []).append(entry)
            kept.append(entry)
        elif now - entry.time > stale_after:
            stale.append(entry)
        else:
            kept.append(entry)
    for sensor, rows in messages.items():
        digest = digest_of(sensor) if digest_of is not None and len(rows) > 1 else None
        if digest is not None and len(rows) > digest.over:
            line = _digested(rows, digest)
            gone = {id(e) for e in rows}
            at = next(i for i, e in enumerate(kept) if id(e) in gone)
            kept = [e for e in kept if id(e) not in gone]
            kept.insert(at, line)
    if not stale:
        return kept
    return [away_line(stale[-1], len(stale), max(e.magnitude for e in stale)), *kept]


def away_line(last: JournalEntry, count: int, worst: float) -> JournalEntry:
    """The one line standing for `count` event-lane rows too old to hand over one by one, the last of them
    `last` (a journal entry) and the highest magnitude `worst`: as urgent as the most urgent of them, but
    never `high` (old news does not interrupt)."""
    prio = priority(worst)
    return replace(last, sensor=AWAY_SENSOR, trigger="away", key=None, description=away_text(count),
                   priority="medium" if prio == "high" else prio, disclosure=None, meta={"count": count})


def stale_after(project_dir: Path | str | None, env: Mapping[str, str]) -> float:
    """`attend.delivery.stale_after` of the project's config, in seconds (the default without a project,
    or when the config cannot be read)."""
    from attend.spec import layer_paths, load_config
    from attend.spec.config import config_default
    from attend.spec.durations import parse_duration

    default = config_default(("delivery", "stale_after"))
    if project_dir is None:
        return parse_duration(default)
    try:
        return parse_duration(load_config(layer_paths(project_dir, env)).delivery.get("stale_after", default))
    except (OSError, ValueError):
        return parse_duration(default)


def digest_rules(project_dir: Path | str, env: Mapping[str, str]) -> dict[str, Any]:
    """The compiled digest rule (compiler/digest.py) of each sensor of the project that has one.

    It loads the project's sensor set: `news` asks for it only when one sensor has several messages waiting.
    """
    from attend.compiler.digest import compile_digest
    from attend.spec import load_set

    rules: dict[str, Any] = {}
    for name, loaded in load_set(project_dir, env).sensors.items():
        if loaded.status == "ok" and loaded.ir.digest is not None:
            rules[name] = compile_digest(loaded.ir.digest)
    return rules


def _digested(rows: list[JournalEntry], digest: Digest) -> JournalEntry:
    """`rows` (message-lane entries of one sensor) as the sensor's one digest line."""
    from attend.compiler.triggers import Fire

    fires = [Fire(e.trigger, e.key, e.magnitude, e.description, None,
                  (e.meta or {}).get("author") if isinstance((e.meta or {}).get("author"), str) else None)
             for e in rows]
    (one,) = digest.apply(fires)
    item = dict(one.item)
    meta = {"authors": item["authors"], "keys": item["keys"]}  # as the daemon journals a digest
    return replace(rows[-1], trigger=one.trigger, key=None, description=one.description, magnitude=one.magnitude,
                   priority=priority(one.magnitude), disclosure=None, meta=meta)
