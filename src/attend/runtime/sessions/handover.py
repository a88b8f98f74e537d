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
- A test line (`sensors fire`) is handed over as the session's Monitor would print it: when it was made
  after the session's position (never one from before: a test belongs to the sessions that were there).
- This module imports neither trio nor the sensors, and the pricing (runtime/delivery.py) only when there
  are rows to price: a hook with nothing to hand over stays cheap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence

from attend.peers.identity import PRESENCE_SENSOR, SESSION_META, process_runs
from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from attend.compiler.digest import Digest
    from attend.runtime.store import JournalEntry, Store

__all__ = ["HANDOVER_ROWS", "STREAM_STOPPED", "Handover", "about_itself", "conduits", "hook_handover", "monitor_live",
           "run_command", "shown_to", "stream_note", "worth_a_turn"]

#: The seen item (`session_seen`) that marks a stopped Monitor stream as said to its session, with the
#: pid of the `attend run` whose stream it was: each stop is said once.
STREAM_STOPPED = ":stream-stopped:"

def about_itself(entry: JournalEntry, session: str | None) -> bool:
    """A presence line (sensor `PRESENCE_SENSOR`, keyed by session id) about `session` itself."""
    return entry.sensor == PRESENCE_SENSOR and entry.key is not None and entry.key == session


def shown_to(session: str | None, entries: Sequence[JournalEntry], drained_upto: int, seen: set[str],
             *, position: int = 0) -> tuple[list[JournalEntry], list[str]]:
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
    from attend.runtime.sessions.seen import for_session
    from attend.runtime.store.journal import for_other_session

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


def monitor_live(store: Store, session: str) -> bool:
    """Whether `session`'s Monitor stream (`attend run`) runs now: an `attend run` of it runs (its own, or,
    right after `/clear`, the one of its Claude Code process still serving the id it had before:
    status.py)."""
    row = store.session(session)
    if row is None:
        return False
    if row.role != "stopped" and row.pid is not None and process_runs(int(row.pid)):
        return True
    if row.claude_pid is None or row.claude_start is None:
        return False
    from attend.runtime.sessions.status import session_facts

    facts = session_facts(store, session)
    return facts is not None and facts.pid is not None


def run_command(project_dir: str | Path, env: Mapping[str, str] | None = None) -> str:
    """The command that starts a session's attend stream: `attend run --project DIR`, through the plugin's
    `bin/attend` when the hook runs from the plugin (`CLAUDE_PLUGIN_ROOT`: attend need not be on PATH)."""
    import shlex

    env = os.environ if env is None else env
    root = env.get("CLAUDE_PLUGIN_ROOT")
    program = shlex.quote(os.path.join(root, "bin", "attend")) if root else "attend"
    return f"{program} run --project {shlex.quote(str(project_dir))}"


def stream_note(store: Store, session: str, project_dir: str, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """The line a hook of `session` says when the session's Monitor stream stopped while it lives, and the
    seen item that records it was said; None when there is nothing to say (no stream ran in the life of
    its Claude Code process, one runs, the stop was said already, or `attend.delivery.conduits` is
    `hooks`: no stream carried its lines).

    Only for a session whose Claude Code process is known: a stop is said only in the life of the process
    whose Monitor stopped (a session resumed in a new process starts without one).
    """
    row = store.session(session)
    if row is None or row.claude_pid is None or row.claude_start is None:
        return None
    from attend.runtime.sessions.status import stopped_stream

    stopped = stopped_stream(store.host_sessions(row.claude_pid, row.claude_start) or [row])
    if stopped is None:
        return None
    when, pid = stopped
    item = f"{STREAM_STOPPED}{pid}"
    if item in store.seen_items(session):
        return None
    chosen = conduits(project_dir, env)
    if chosen == "hooks":
        return None
    at = f" at {time.strftime('%H:%M:%S', time.localtime(when))}" if when is not None else ""
    command = run_command(project_dir, env)
    if chosen == "monitor":
        return (f"attend: this session's attend stream (pid {pid}) stopped{at}; with attend.delivery.conduits "
                f"monitor its lines wait in attend's journal until a Monitor running `{command}` starts it "
                "again.", item)
    return (f"attend: this session's attend stream (pid {pid}) stopped{at}; its lines now reach it through "
            f"attend's hooks, after each prompt and tool call and when it stops. A Monitor running `{command}` "
            "starts the stream again.", item)


#: The most rows worth a turn a hook reads: more lines than fit in its answer (commands/drain.py
#: `CONTEXT_LIMIT`, 9,000 characters, holds about 200 short lines). The rest are counted, never read.
HANDOVER_ROWS = 200


def worth_a_turn(entry: JournalEntry) -> bool:
    """Whether a line is worth a turn of the agent (DESIGN.md, "Delivery"): a message, or a high or medium
    line. Low lines never are: the Monitor leaves them on stderr, the hooks in the history."""
    return entry.lane == "message" or entry.priority in ("high", "medium")


@record
class Handover:
    """What a hook hands a session, and what to record once it is printed (`record`)."""

    entries: list[JournalEntry] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    #: Lines worth a turn after `entries`, counted and not read (`HANDOVER_ROWS`).
    more: int = 0
    #: The journal id the handover reaches: the session's position once recorded.
    upto: int = 0
    #: The session's position before it.
    since: int = 0

    def record(self, store: Store, session: str) -> None:
        """Record the handover (after printing: a crash in between hands the lines over again, never loses them)."""
        store.record_handover(session, upto=self.upto, handed=[e.id for e in self.entries], seen=self.items)


def hook_handover(store: Store, session: str, *, project_dir: str, env: Mapping[str, str] | None = None,
                  now: float | None = None, limit: int = HANDOVER_ROWS) -> Handover:
    """What a hook standing in for `session`'s Monitor hands over: the lines worth a turn (`worth_a_turn`)
    it was not handed yet, read in at most `limit` rows however long the journal (store/session_rows.py
    `turn_backlog`); the low lines around them are passed over (they stay in the history).

    As news (news.py, with the project's `stale_after` and digest rules, at `now`): event lines older than
    `stale_after` are one summary line, more messages of one sensor than its digest allows one digest line.
    A hook with nothing to hand over reads one row of the store and no config.
    """
    row = store.session(session)
    position = row.printed_upto if row is not None else store.journal_end()
    ask = {"presence": PRESENCE_SENSOR, "session_meta": SESSION_META}
    out = Handover(upto=max(position, store.journal_end()), since=position)
    if not store.turn_waiting(session, position, **ask):
        return out  # nothing worth a turn (most hooks): neither the config nor the pricing is read
    env = os.environ if env is None else env
    now = store.now() if now is None else now
    from attend.runtime.sessions.news import away_line, stale_after
    from attend.runtime.sessions.seen import items_of

    backlog = store.turn_backlog(session, position, fresh_since=now - stale_after(project_dir, env), limit=limit, **ask)
    seen = store.seen_items(session)
    shown, items = shown_to(session, backlog.entries, 0, seen)
    shaped = _as_news(project_dir, env, now)([e for e in shown if worth_a_turn(e)])
    if backlog.stale_last is not None:
        shaped.insert(0, away_line(backlog.stale_last, backlog.stale, backlog.stale_magnitude))
    out.entries = shaped
    out.more = backlog.more
    out.upto = max(position, backlog.end)
    handed = {n for e in shaped for n in items_of(e)}
    out.items = [n for n in items if n in handed]
    return out


def _as_news(project_dir: str, env: Mapping[str, str], now: float) -> Callable[[list[JournalEntry]], list[JournalEntry]]:
    """`news` for a hook's lines (none shaped when there are none: a hook with nothing reads no config)."""
    def shape(entries: list[JournalEntry]) -> list[JournalEntry]:
        if not entries:
            return entries
        from attend.runtime.sessions.news import digest_rules, news, stale_after

        rules: dict[str, Any] | None = None

        def digest_of(sensor: str) -> Digest | None:
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
