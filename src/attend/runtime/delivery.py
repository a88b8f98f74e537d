"""Delivery: priority, the one-line stdout form, and the streams each priority goes to (DESIGN.md, Runtime).

Decision: a disclosure's accumulated magnitude ≥ 5 is `high`, ≥ 3 `medium`, else `low`; on the event lane
every event of the disclosure carries that priority. On the message lane each event (a peer message) is
its own notification: its priority comes from its own magnitude, so two open-channel messages (4.0
each) arriving in one poll are two `medium` lines, not two `high` ones (`priorities`). High and medium go to stdout (the Monitor stream), one line per
event, `[attend sensor=<name> priority=<p>] <description>`, flushed per line; low ones go to stderr.
Newlines inside a description are folded to spaces so that one event is always one line. A test fire
reads `[attend sensor=<name> priority=<p>] [test] <description>`. An event from an MCP sensor names
the server and the item's key: `<description> (server=<s>, key=<k>)`.

Decision (DESIGN.md, Delivery: budgets): the presence sensor's lines (`PRESENCE_SENSOR`) are priced one
by one like messages, never summed: starts and exits piled up during its refractory are not one `high`
line whose cooldown would hold a real `high` line of another sensor.

Decision: identical observations accumulated in one disclosure (same trigger, key, description and
meta: a `lines` command printing the same event every poll while the sensor was held) are ONE line with
a count, `deploy finished (×12)`, journaled as one row whose magnitude is their sum (`collapse_identical`).

Decision: the journal is the project's, and an event-lane disclosure's priority is computed once, over
all its rows; but a session is not shown every row (the peers lines about itself, the rows it authored:
runtime/sessions/printer.py, runtime/sessions/seen.py). A row hidden from a session contributes nothing to the priority of
what that session is shown: when a disclosure lost rows for a reader, the rows it keeps are priced again
over their own magnitudes (`priced_for_reader`), so a peer's exit (2.0) that shared a poll with the
reader's own start (3.0) reaches that reader as the `low` line it is alone, not as `high`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attend.peers.identity import PRESENCE_SENSOR
from attend.records import replace
from attend.text import fold_lines, printable

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = [
    "HIGH_AT", "MEDIUM_AT", "SESSION_META", "collapse_identical", "priced_alone", "for_other_session", "format_line", "highest",
    "is_stdout_priority", "joined", "priorities",
    "priced_for_reader", "priority", "write_entries",
]

#: The journal meta field naming the one session a `scope: session` sensor's line is for.
SESSION_META = "session"

#: Accumulated magnitude at or above which a disclosure is `high`.
HIGH_AT = 5.0
#: Accumulated magnitude at or above which a disclosure is `medium`.
MEDIUM_AT = 3.0

def priority(total: float) -> str:
    """The priority of a disclosure whose observations sum to `total`."""
    if total >= HIGH_AT:
        return "high"
    if total >= MEDIUM_AT:
        return "medium"
    return "low"


def priced_alone(lane: str, sensor: str | None) -> bool:
    """Whether each event of a disclosure is priced on its own magnitude: the message lane's, and the
    presence sensor's lines (`priorities`)."""
    return lane == "message" or sensor == PRESENCE_SENSOR


def priorities(magnitudes: Sequence[float], lane: str, sensor: str | None = None) -> list[str]:
    """The priority of each event of one disclosure, in order.

    Event lane: every event carries the priority of the disclosure's accumulated magnitude (their sum).
    Message lane, and the presence sensor's lines (`PRESENCE_SENSOR`: sessions starting and exiting):
    each event's priority is that of its own magnitude. Presence held through a refractory piles up, and
    five sessions coming and going are not more urgent than one: summed, they would make a `high` line
    that spends the cooldown a real `high` line then waits for (DESIGN.md, Delivery: budgets).
    """
    if priced_alone(lane, sensor):
        return [priority(m) for m in magnitudes]
    return [priority(sum(magnitudes))] * len(magnitudes)


def priced_for_reader(shown: Sequence[Any], entries: Sequence[Any]) -> list[Any]:
    """`shown` (the journal entries a reader gets, out of `entries`) with each event-lane disclosure that
    lost rows for this reader priced again over the magnitudes of the rows it keeps.

    Entries are `JournalEntry`s (frozen records). Message-lane and presence rows (each its own
    priority), test rows and disclosures the reader gets whole keep their stored priority.
    """
    def group(entry: Any) -> Any:
        summed = entry.lane == "event" and not entry.test and entry.sensor != PRESENCE_SENSOR
        return entry.disclosure if summed and entry.disclosure is not None else None

    whole: dict[Any, int] = {}
    for entry in entries:
        if group(entry) is not None:
            whole[group(entry)] = whole.get(group(entry), 0) + 1
    kept: dict[Any, list[Any]] = {}
    for entry in shown:
        if group(entry) is not None:
            kept.setdefault(group(entry), []).append(entry)
    repriced = {d: priority(sum(e.magnitude for e in rows)) for d, rows in kept.items() if len(rows) < whole.get(d, 0)}
    return [replace(e, priority=repriced[group(e)]) if group(e) in repriced else e for e in shown]


_RANK = {"low": 0, "medium": 1, "high": 2}


def highest(prios: Sequence[str]) -> str | None:
    """The highest of `prios` (None for none): a disclosure's priority as one word."""
    return max(prios, key=_RANK.__getitem__) if prios else None


def collapse_identical(observations: Sequence[Any], *, summed: bool = True) -> list[Any]:
    """`observations` with each run of identical ones (trigger, key, description, meta) as one.

    The one kept is the first, in its place; its description gains the count (`deploy finished (×12)`)
    and its magnitude is the group's sum (`summed`), or, for events priced alone (`priced_alone`: a
    session that started twice is no more urgent than once), the group's highest. Observations are
    `store.Observation`s (frozen records).
    """
    groups: dict[tuple[Any, ...], list[Any]] = {}
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
                           magnitude=(sum if summed else max)(o.magnitude for o in group)))
    return out


def for_other_session(entry: Any, session: str | None) -> bool:
    """Whether `entry` is a session-scoped line for another session than `session` (never shown to it).

    A reader with no session (an in-process daemon keeping no position) is shown every line.
    """
    target = (entry.meta or {}).get(SESSION_META)
    return session is not None and target is not None and target != session


def joined(entries: Sequence[Any], sensor: str) -> list[Any]:
    """`entries` with the rows of one disclosure of `sensor` as one line (descriptions joined by `; `).

    The presence lines of one poll (the peers sensor: sessions starting and exiting) are one
    notification, not one line each (DESIGN.md, Delivery). The rows stay apart in the journal, so
    each reader still leaves out its own (serve.py) before they are joined. Test rows stay apart.
    """
    out: list[Any] = []
    for entry in entries:
        last = out[-1] if out else None
        if (last is not None and entry.sensor == sensor and last.sensor == sensor and not entry.test and not last.test
                and entry.disclosure is not None and entry.disclosure == last.disclosure):
            out[-1] = replace(last, description=f"{last.description}; {entry.description}",
                              priority=highest([last.priority, entry.priority]) or last.priority)
        else:
            out.append(entry)
    return out


def is_stdout_priority(prio: str) -> bool:
    """High and medium notifications go to stdout; low ones to stderr."""
    return prio in ("high", "medium")


def format_line(
    sensor: str,
    prio: str,
    description: str,
    *,
    test: bool = False,
    key: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> str:
    """One notification as one line (without the trailing newline)."""
    text = description
    server = (meta or {}).get("server")
    if server:
        text = f"{text} (server={server}, key={key})" if key is not None else f"{text} (server={server})"
    text = printable(fold_lines(text).strip())
    marker = "[test] " if test else ""
    return f"[attend sensor={sensor} priority={prio}] {marker}{text}"


def write_entries(entries: Sequence[Any], stdout: TextIO, stderr: TextIO) -> list[int]:
    """Print journal entries to their stream, one flushed line each; return the ids printed."""
    printed = []
    for entry in entries:
        stream = stdout if is_stdout_priority(entry.priority) else stderr
        line = format_line(entry.sensor, entry.priority, entry.description, test=entry.test, key=entry.key, meta=entry.meta)
        stream.write(line + "\n")
        stream.flush()
        printed.append(entry.id)
    return printed
