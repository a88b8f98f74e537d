"""What a session is shown of the journal, by its Monitor or by its hooks (DESIGN.md, "Delivery": Conduits).

Both conduits of a session choose its lines the same way (`shown_to`): the rows after its position,
less what it must not be shown (a message its Stop hook already handed over, a peers line about itself,
its own messages and the items it already saw; runtime/sessions/seen.py). Each row keeps its own
priority (runtime/delivery.py: priority is per line), so what is left out changes nothing about the rest.

Decisions implemented here (the hooks as a second conduit, commands/drain.py answers them):

- The Monitor stream of a session is live while its `attend run` process runs (its row is not
  `stopped` and its pid runs). While it is, the prompt hooks (`UserPromptSubmit`, `PostToolUse`) hand
  over nothing and the Stop hook only the message lane, as before there were hooks.
- Without it, the hooks stand in for the Monitor: they take its position (`printed_upto`) and move it
  as it would, so a line reaches the session once whichever conduit carries it, and a Monitor that
  starts later (same id) goes on from where the hooks left off. A prompt hook hands over the high and
  medium lines (what the Monitor would have put on stdout); the Stop hook every line not yet handed
  over, low ones included (what the Monitor would have left on stderr, which nobody reads).
- Test lines (`sensors fire`) are never handed over by a hook (a test belongs to the session that ran it).
- This module imports neither trio nor the sensors, and the pricing (runtime/delivery.py) only when there
  are rows to price: a hook with nothing to hand over stays cheap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence

from attend.peers.identity import PRESENCE_SENSOR, process_runs
from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["Handover", "about_itself", "conduits", "hook_handover", "monitor_live", "shown_to"]

def about_itself(entry: Any, session: str | None) -> bool:
    """A presence line (sensor `PRESENCE_SENSOR`, keyed by session id) about `session` itself."""
    return entry.sensor == PRESENCE_SENSOR and entry.key is not None and entry.key == session


def shown_to(session: str | None, entries: Sequence[Any], drained_upto: int, seen: set[str],
             *, position: int = 0) -> tuple[list[Any], list[str]]:
    """The entries `session` is shown of `entries` (journal rows after its position), and their items.

    Left out: a message-lane row its Stop hook already handed over (`position` < id ≤ `drained_upto`), a
    presence line about the session itself, a session-scoped line for another session, and what
    `seen.for_session` leaves out. A row at or before the
    session's `position` is in `entries` only because no session ever showed it (a crash between journaling
    and printing): its hook never handed it over (a hook drains only after the position the session started
    from), so it is shown, never swallowed.
    """
    if not entries:
        return [], []  # nothing after the position (every hook with nothing to hand over)
    from attend.runtime.delivery import for_other_session
    from attend.runtime.sessions.seen import for_session

    shown = [e for e in entries if not (e.lane == "message" and not e.test and position < e.id <= drained_upto)
             and not about_itself(e, session) and not for_other_session(e, session)]
    shown, items = for_session(shown, session, seen)
    return shown, items


def conduits(project_dir: str | Path, env: Mapping[str, str] | None = None) -> str:
    """`attend.delivery.conduits` of the project's config (auto when unset or unusable): auto (the hooks
    step in while a session's Monitor is not live), monitor (the Monitor stream only: the hooks carry the
    Stop hook's message lane and start no poller), hooks (the hooks only: `attend run` stays up, polls
    and beats, and prints no line)."""
    from attend.spec import layer_paths, load_config

    return str(load_config(layer_paths(project_dir, os.environ if env is None else env)).delivery.get("conduits", "auto"))


def monitor_live(store: Any, session: str) -> bool:
    """Whether `session`'s Monitor stream (`attend run`) runs now: its row is live and its process runs."""
    row = store.session(session)
    return row is not None and row.role != "stopped" and row.pid is not None and process_runs(int(row.pid))


@record
class Handover:
    """What a hook hands a session, and what to record once it is printed (`record`)."""

    entries: list[Any] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    considered: list[int] = field(default_factory=list)
    upto: int = 0
    drained_upto: int | None = None
    first_left: int | None = None

    def record(self, store: Any, session: str) -> None:
        """Record the handover (after printing: a crash in between hands the lines over again, never loses them)."""
        store.record_handover(session, printed_upto=self.upto, considered=self.considered,
                              handed=[e.id for e in self.entries], seen=self.items,
                              drained_upto=self.drained_upto, first_left=self.first_left)


def hook_handover(store: Any, session: str, *, everything: bool, project_dir: str,
                  env: Mapping[str, str] | None = None, now: float | None = None) -> Handover:
    """What a hook standing in for `session`'s Monitor hands over: high and medium lines, or (`everything`,
    the Stop hook) every line not handed over yet, low ones and the Stop hook's message lane included.

    As news (news.py, with the project's `stale_after` and digest rules, at `now`): event lines older than
    `stale_after` are one summary line, more messages of one sensor than its digest allows one digest line.
    A prompt hook shapes only the lines it hands over (the low ones it leaves are the Stop hook's, and
    shaped there), so every row is counted once.
    """
    row = store.session(session)
    position = row.printed_upto if row is not None else store.journal_end()
    entries, drained = store.session_backlog(session, position, stale_test_before=float("inf"))
    entries = [e for e in entries if not e.test]
    seen = store.seen_items(session) if entries or everything else set()
    shown, items = shown_to(session, entries, drained, seen)
    out = Handover(upto=max([position, *(e.id for e in entries)]), considered=[e.id for e in entries])
    as_news = _as_news(project_dir, os.environ if env is None else env, time.time() if now is None else now)
    if everything:
        from attend.runtime.sessions.seen import for_session, items_of

        late, end = store.drain_backlog(session, None)
        known = {e.id for e in shown}
        extra, more = for_session([e for e in late if e.id not in known and not about_itself(e, session)],
                                  session, seen | set(items))
        out.entries = as_news(sorted([*shown, *extra], key=lambda e: e.id))
        handed = {n for e in out.entries for n in items_of(e)}
        out.items = [n for n in [*items, *more] if n in handed]
        out.upto = max(out.upto, end)
        out.drained_upto = out.upto
        return out
    if not shown:
        return out  # nothing to hand over (most hooks): neither the pricing nor the seen-set code is imported
    from attend.runtime.delivery import is_stdout_priority
    from attend.runtime.sessions.seen import items_of

    out.entries = as_news([e for e in shown if is_stdout_priority(e.priority)])
    handed = {n for e in out.entries for n in items_of(e)}
    out.items = [n for n in items if n in handed]
    left = [e.id for e in shown if not is_stdout_priority(e.priority)]
    out.first_left = min(left) if left and row is None else None
    return out


def _as_news(project_dir: str, env: Mapping[str, str], now: float) -> Callable[[list[Any]], list[Any]]:
    """`news` for a hook's lines (none shaped when there are none: a hook with nothing reads no config)."""
    def shape(entries: list[Any]) -> list[Any]:
        if not entries:
            return entries
        from attend.runtime.sessions.news import digest_rules, news, stale_after

        rules: dict[str, Any] | None = None

        def digest_of(sensor: str) -> Any:
            nonlocal rules
            if rules is None:
                try:
                    rules = digest_rules(project_dir, env)
                except Exception:  # noqa: BLE001 - no digest then: every message is its own line, as in the stream
                    rules = {}
            return rules.get(sensor)

        # started: -inf, a hook's rows hold no test line (`sensors fire`) to leave out by age
        return news(entries, now=now, started=float("-inf"), stale_after=stale_after(project_dir, env),
                    digest_of=digest_of)

    return shape
