"""Delivery: priority, the one-line stdout form, and the streams each priority goes to (DESIGN.md, Runtime).

Decision (DESIGN.md, Delivery: what a line may contain; issue 33): priority is per line. A line's
magnitude ≥ 5 is `high`, ≥ 3 `medium`, else `low`, whatever it goes out with: the accumulator sums the
magnitudes of a sensor's observations to decide WHEN they go out (threshold, refractory), never how loud
each one is. Nine 0.5 lines that together reach a sensor's threshold are nine `low` lines, not a nine-line
`medium` wake; a 0.5 line disclosed beside a 3.0 line stays `low` (stderr) while the 3.0 one is `medium`.
The same on the message lane (each peer message is its own notification) and for the presence sensor's
lines. High and medium go to stdout (the Monitor stream), one line
per event, `[attend sensor=<name> priority=<p>] <description>`, flushed per line; low ones go to stderr.
Newlines inside a description are folded to spaces so that one event is always one line, but on the message
lane, where each line of a description is printed as a line of its own (at most `MESSAGE_LINES`, each with
the prefix): a long peer message's parts (sensors/messages.py). A test fire
reads `[attend sensor=<name> priority=<p>] [test] <description>`. An event from an MCP sensor names
the server and the item's key: `<description> (server=<s>, key=<k>)`.

Decision: folding and grouping never lift a line above its own priority either. Identical observations
accumulated in one disclosure (same trigger, key, description and meta: a `lines` command printing the
same event every poll while the sensor was held) are ONE line with a count, `deploy finished (×12)`,
journaled as one row whose magnitude is the highest of theirs, not their sum (`collapse_identical`); the
presence lines of one poll are one line only with the lines of the same priority (`joined`).

Decision: the journal is the project's, but a session is not shown every row (the peers lines about
itself, the rows it authored: runtime/sessions/printer.py, runtime/sessions/seen.py). Since each row is
priced on its own, a row hidden from a session changes nothing about the priority of what it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attend.peers.identity import SESSION_META
from attend.records import replace
from attend.text import changes_text, fold_lines, printable
from attend.vocab import PRIORITIES

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from attend.runtime.store import JournalEntry, Observation
    from attend.vocab import Priority

__all__ = [
    "HIGH_AT", "MEDIUM_AT", "MESSAGE_LINES", "PROGRESS_META", "REPLY_HINT_META", "SESSION_META", "collapse_identical",
    "format_line", "highest", "is_stdout_priority", "joined", "newest_per_key", "priorities",
    "priority", "reply_hint", "write_entries",
]


#: The meta field marking a progressing key's line (`Fire.progress`: a move to a value the key has not had
#: within its flap window), which the relative refractory does not hold back (runtime/engagement.py).
PROGRESS_META = "progress"

#: Accumulated magnitude at or above which a disclosure is `high`.
HIGH_AT = 5.0
#: Accumulated magnitude at or above which a disclosure is `medium`.
MEDIUM_AT = 3.0

def priority(total: float) -> Priority:
    """The priority of a disclosure whose observations sum to `total`."""
    if total >= HIGH_AT:
        return "high"
    if total >= MEDIUM_AT:
        return "medium"
    return "low"


def priorities(magnitudes: Sequence[float]) -> list[Priority]:
    """The priority of each line of one disclosure, in order: each its own magnitude's (`priority`), never
    lifted by the lines it goes out with (DESIGN.md, Delivery: priority is per line)."""
    return [priority(m) for m in magnitudes]


_RANK = {prio: rank for rank, prio in enumerate(PRIORITIES)}


def highest(prios: Sequence[Priority]) -> Priority | None:
    """The highest of `prios` (None for none): a disclosure's priority as one word."""
    if not prios:
        return None
    return max(prios, key=_RANK.__getitem__)


def collapse_identical(observations: Sequence[Observation]) -> list[Observation]:
    """`observations` with each run of identical ones (trigger, key, description, meta) as one.

    The one kept is the first, in its place; its description gains the count (`deploy finished (×12)`)
    and its magnitude is the group's highest: twelve times the same finding is that finding, no louder
    (priority is per line). Observations are `store.Observation`s (frozen records).
    """
    groups: dict[tuple[Any, ...], list[Observation]] = {}
    for obs in observations:
        identity = (obs.trigger, obs.key, obs.description, tuple(sorted((str(k), repr(v)) for k, v in obs.meta.items())))
        groups.setdefault(identity, []).append(obs)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        out.append(replace(first, description=f"{first.description} (×{len(group)})",
                           magnitude=max(o.magnitude for o in group)))
    return out


def newest_per_key(observations: Sequence[Observation]) -> list[Observation]:
    """`observations` (one held accumulator, oldest first) with each key held with several values as ONE
    line: its newest, where its newest came, its description ending with how many changes it stands for
    (`upstream origin/main moved: 9e8d7c6 → 1a2b3c4 (4 changes held)`), weighing the heaviest of them, so
    the count never lifts its priority (DESIGN.md, Noise controls: held keys keep their newest value).

    A key's lines are those of one keyed trigger with the same key and meta (its session, its server,
    its author; `PROGRESS_META` aside). A key whose lines all read the same is left to
    `collapse_identical` (`deploy finished (×3)`), and so are the lines without a key (a `lines`
    output's, a digest's, a keyless trigger's): each stays a line of its own. Observations are
    `store.Observation`s (frozen records).
    """
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, obs in enumerate(observations):
        if obs.key is None:
            continue
        meta = tuple(sorted((str(k), repr(v)) for k, v in (obs.meta or {}).items() if k != PROGRESS_META))
        groups.setdefault((obs.trigger, obs.key, meta), []).append(i)
    newest: dict[int, Observation] = {}
    dropped: set[int] = set()
    for members in groups.values():
        rows = [observations[i] for i in members]
        if len(rows) == 1 or len({o.description for o in rows}) == 1:
            continue
        last = rows[-1]
        newest[members[-1]] = replace(last, description=f"{last.description} ({changes_text(len(rows))})",
                                      magnitude=max(o.magnitude for o in rows))
        dropped.update(members[:-1])
    return [newest.get(i, obs) for i, obs in enumerate(observations) if i not in dropped]


def joined(entries: Sequence[JournalEntry], sensor: str) -> list[JournalEntry]:
    """`entries` with the rows of one disclosure of `sensor` of one priority as one line (descriptions
    joined by `; `, in the place of the first).

    The presence lines of one poll (the peers sensor: sessions starting and exiting) are one
    notification, not one line each (DESIGN.md, Delivery); but joining never lifts a line above its own
    priority, so a `low` exit elsewhere is never carried on a `medium` start's line: the rows of each
    priority join apart. The rows stay apart in the journal, so each reader still leaves out its own
    (serve.py) before they are joined. Test rows stay apart.
    """
    out: list[JournalEntry] = []
    at: dict[tuple[int | None, str], int] = {}  # (disclosure, priority) → its line in `out`
    for entry in entries:
        group = (entry.disclosure, entry.priority)
        if entry.sensor != sensor or entry.test or entry.disclosure is None:
            out.append(entry)
        elif group in at:
            line = out[at[group]]
            out[at[group]] = replace(line, description=f"{line.description}; {entry.description}")
        else:
            at[group] = len(out)
            out.append(entry)
    return out


def is_stdout_priority(prio: str) -> bool:
    """High and medium notifications go to stdout; low ones to stderr."""
    return prio in ("high", "medium")


#: The most lines one message-lane notification takes: a long peer message's parts (sensors/messages.py).
MESSAGE_LINES = 3
#: The meta field marking the first message a session is shown from a sender (runtime/sessions/seen.py): its
#: line says how to answer it.
REPLY_HINT_META = "reply_hint"


def reply_hint(key: str) -> str:
    """What the first message a session gets from a sender says about answering it, as a fact."""
    return f'(attend peers reply {key} "..." answers it)'


def format_line(
    sensor: str,
    prio: str,
    description: str,
    *,
    test: bool = False,
    key: str | None = None,
    meta: Mapping[str, Any] | None = None,
    lane: str = "event",
) -> str:
    """One notification as printed (without the trailing newline): one line, or on the message lane one line per
    line of its description, at most `MESSAGE_LINES` (the rest folded into the last), each with the prefix."""
    text = description
    server = (meta or {}).get("server")
    if server:
        text = f"{text} (server={server}, key={key})" if key is not None else f"{text} (server={server})"
    if key is not None and (meta or {}).get(REPLY_HINT_META):
        text = f"{text} {reply_hint(key)}"
    marker = "[test] " if test else ""
    prefix = f"[attend sensor={sensor} priority={prio}] {marker}"
    if lane != "message":
        return prefix + printable(fold_lines(text).strip())
    lines = [line for line in text.splitlines() if line.strip()] or [""]
    lines = [*lines[: MESSAGE_LINES - 1], " ".join(lines[MESSAGE_LINES - 1:])] if len(lines) > MESSAGE_LINES else lines
    return "\n".join(prefix + printable(fold_lines(line).strip()) for line in lines)


def write_entries(entries: Sequence[JournalEntry], stdout: TextIO, stderr: TextIO) -> list[int]:
    """Print journal entries to their stream, one flushed line each; return the ids printed."""
    printed = []
    for entry in entries:
        stream = stdout if is_stdout_priority(entry.priority) else stderr
        line = format_line(entry.sensor, entry.priority, entry.description, test=entry.test, key=entry.key,
                           meta=entry.meta, lane=entry.lane)
        stream.write(line + "\n")
        stream.flush()
        printed.append(entry.id)
    return printed
