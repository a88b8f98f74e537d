"""Session rows: each session's delivery positions, role and liveness (DESIGN.md, "Sessions").

Several `attend run` processes serve one project, one per agent session. The journal is shared; what
each session has been shown is its own:

- `printed_upto`: the last journal id this session's `attend run` wrote to its stdout/stderr. Journal
  ids grow in commit order (SQLite has one writer at a time), so "everything up to N" is exact.
- `drained_upto`: the last journal id this session's Stop hook (`attend drain`) has considered. A
  message-lane row is delivered to a session once: by its Monitor line (high and medium priority,
  id ≤ printed_upto) or by its Stop hook, never both (each conduit skips what the other handed over).
- A new session starts at the journal's end, except that it still shows rows no session ever showed
  (`printed = 0`: disclosed while no `attend run` was alive, or while the poller died before printing);
  a restarted session (same id) resumes from its stored positions.
- `role` is `polling` (the run lock's holder), `attached` or `stopped`; `pid` and `heartbeat` tell a
  live row from one a SIGKILL left behind. A stopped row keeps the pid of the `attend run` that served it
  last (None when none ever did): a session whose Monitor stream ended is told so once (handover.py).
- `claude_pid`, `claude_start`: the session's Claude Code process (its host) and its start time, recorded
  by its `attend run` and by its hooks (`register_session`); `claude_seen` when it was last registered (one
  process has one session at a time: `/clear` gives it a new id, the one registered last), `transcript`
  the transcript path its hooks were given. A session is live while its host runs (runtime/sessions/status.py).
- `session_seen`: the authored items (peer messages: `<sensor>/<key>`, runtime/sessions/seen.py) each session
  was shown, by either conduit or by its cold start, recorded in the same transaction as the position
  that shows them, so an item reaching a session twice (the cold start and then the sensor's fire) is
  shown once. `COLD_START` marks a session whose cold start is done (a restarted session gets none).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attend.records import record
from attend.runtime.store.journal import JournalEntry, JournalRows, entry_from_row, for_other_session
from attend.runtime.store.rows import BadRow, decoded, integer, optional_number, text
from attend.vocab import SESSION_ROLES

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.runtime.store.rows import StoredRow
    from attend.vocab import SessionRole

__all__ = ["COLD_START", "MARK_BATCH", "WORTH_A_TURN", "SessionRecord", "SessionRows", "TurnBacklog"]

#: Rows a one-shot `sensors poll` showed to the person who ran it (`JournalRows.commit_shown_poll`):
#: already delivered, so no session prints them and no Stop hook hands them over.
#: (A damaged `meta` is not JSON: json_extract would fail the whole query, so it is only asked of valid JSON.)
NOT_SHOWN = "(CASE WHEN json_valid(meta) THEN json_extract(meta, '$.shown') END) IS NULL"

#: The `session_seen` item that marks a session whose cold start (runtime/sessions/cold_start.py) is done.
COLD_START = ":cold-start"

#: The roles a session row holds.
ROLES = SESSION_ROLES

#: The rows worth a turn (DESIGN.md, "Delivery"): a message, or a high or medium line. The partial indexes
#: `journal_turn` and `journal_turn_unprinted` (tables.py) hold exactly these rows (the second only those no
#: session showed yet), so a hook reads them without the low lines around them.
WORTH_A_TURN = "(lane = 'message' OR priority IN ('high', 'medium'))"

#: The most rows a hook marks `printed` beside what it handed over (`record_handover`).
MARK_BATCH = 10_000


@record(frozen=True)
class SessionRecord:
    """One session's row."""

    session: str
    printed_upto: int
    drained_upto: int
    pid: int | None
    role: SessionRole
    role_since: float | None
    started: float | None
    heartbeat: float | None
    claude_pid: int | None = None
    claude_start: str | None = None
    claude_seen: float | None = None
    transcript: str | None = None


class SessionRows(JournalRows):
    """The `sessions` table of one scope, and the journal as each session sees it."""

    def journal_end(self) -> int:
        """The last journal id of the scope (0 for an empty journal)."""
        row = self._db.execute("SELECT MAX(id) FROM journal WHERE scope = ?", (self.scope,)).fetchone()
        return row[0] if row is not None and row[0].__class__ is int else 0

    def attach_session(self, session: str, *, pid: int, resume: bool, claim: bool = True) -> int:
        """Register `session` as a live `attended` process and return the journal id it prints after.

        Args:
            session: the session id.
            pid: the `attend run` process.
            resume: True for a resolved session: a stored row's position is taken up again. An
                unresolved one (`pid-<pid>`) always starts at the journal's end.
            claim: False when another live process already serves `session` here: its row (pid, role)
                stays that process's, and this one only takes up the position.
        """
        now = self._clock()
        with self._write():
            row = self._session_row(session)
            end = self.journal_end()
            if row is not None and resume:
                position = row.printed_upto
                drained = row.drained_upto
            else:
                position = drained = end
            if row is not None and not claim:
                return position
            self._db.execute(
                "INSERT OR REPLACE INTO sessions (scope, session, printed_upto, drained_upto, pid, role, role_since,"
                " started, heartbeat) VALUES (?, ?, ?, ?, ?, 'attached', ?, ?, ?)",
                (self.scope, session, position, drained, pid, now, now, now),
            )
        return position

    def set_session_role(self, session: str, role: SessionRole, *, pid: int | None, only_pid: int | None = None) -> bool:
        """Record that `session` now polls, is attached, or stopped (`pid` None when stopped); False when left.

        With `only_pid`, only a row that process holds changes: a second process serving the same
        session id stops without stopping the row of the one still running.
        """
        if role not in ROLES:
            raise ValueError(f"unknown session role {role!r}")
        now = self._clock()
        owned = "" if only_pid is None else " AND pid = ?"
        with self._write():
            cur = self._db.execute(
                f"UPDATE sessions SET role = ?, role_since = ?, pid = ?, heartbeat = ? WHERE scope = ? AND session = ?{owned}",
                (role, now, pid, now, self.scope, session, *(() if only_pid is None else (only_pid,))),
            )
        return cur.rowcount > 0

    def session_heartbeat(self, session: str, *, pid: int | None = None) -> None:
        """Record that `session`'s process is alive now (with `pid`: only while that process holds the row)."""
        owned = "" if pid is None else " AND pid = ?"
        with self._write():
            self._db.execute(
                f"UPDATE sessions SET heartbeat = ? WHERE scope = ? AND session = ?{owned}",
                (self._clock(), self.scope, session, *(() if pid is None else (pid,))),
            )

    def session(self, session: str) -> SessionRecord | None:
        """`session`'s row, or None when it never attached nor drained."""
        return self._session_row(session)

    def sessions(self) -> list[SessionRecord]:
        """Every session row of the scope, the earliest started first."""
        rows = self._db.execute("SELECT * FROM sessions WHERE scope = ? ORDER BY started, session", (self.scope,))
        return list(decoded(rows, session_from_row))

    def _session_row(self, session: str) -> SessionRecord | None:
        row = self._db.execute(
            "SELECT * FROM sessions WHERE scope = ? AND session = ?", (self.scope, session)
        ).fetchone()
        try:
            return session_from_row(row) if row is not None else None
        except BadRow:
            return None  # a damaged row is a session that never attached (doctor lists it)

    # -- the Monitor stream ------------------------------------------------------------------------

    def session_backlog(
        self, session: str | None, position: int, *, stale_test_before: float
    ) -> tuple[list[JournalEntry], int]:
        """What a session at `position` has to print, and the journal id its Stop hook reached.

        The rows after `position`, plus rows at or before it that no session ever showed (never a
        test line older than `stale_test_before`: a test belongs to the session that ran it).
        """
        rows = self._db.execute(
            "SELECT * FROM journal WHERE scope = ? AND (id > ? OR (printed = 0 AND NOT (test = 1 AND time < ?)))"
            f" AND {NOT_SHOWN} ORDER BY id",
            (self.scope, position, stale_test_before),
        )
        entries = list(decoded(rows, entry_from_row))
        return entries, (self.drained_upto(session) if session is not None else 0)

    def drained_upto(self, session: str) -> int:
        """The last journal id `session`'s Stop hook has considered (0 without a row)."""
        row = self._db.execute(
            "SELECT drained_upto FROM sessions WHERE scope = ? AND session = ?", (self.scope, session)
        ).fetchone()
        return row[0] if row is not None and row[0].__class__ is int else 0

    def advance_session(self, session: str | None, upto: int, shown: Sequence[int], seen: Sequence[str] = ()) -> None:
        """Record, in one transaction, that a session printed the rows `shown` and reached `upto`.

        The rows are marked `printed` (some session showed them); `session` None keeps no position.
        `seen`: the authored items those rows showed the session (`session_seen`).
        """
        with self._write():
            self._db.executemany("UPDATE journal SET printed = 1 WHERE id = ?", [(i,) for i in shown])
            if session is not None:
                self._db.execute(
                    "UPDATE sessions SET printed_upto = MAX(printed_upto, ?), heartbeat = ? WHERE scope = ? AND session = ?",
                    (upto, self._clock(), self.scope, session),
                )
                self._mark_seen(session, seen)

    # -- what each session was shown ---------------------------------------------------------------

    def seen_items(self, session: str) -> set[str]:
        """The authored items `session` was shown (and `COLD_START` once its cold start is done)."""
        rows = self._db.execute("SELECT item FROM session_seen WHERE scope = ? AND session = ?", (self.scope, session))
        return {r[0] for r in rows if isinstance(r[0], str)}

    def cold_start_done(self, session: str) -> bool:
        """Whether `session` had its cold start (by its Monitor stream or its Stop hook)."""
        row = self._db.execute("SELECT 1 FROM session_seen WHERE scope = ? AND session = ? AND item = ?",
                               (self.scope, session, COLD_START)).fetchone()
        return row is not None

    def mark_seen(self, session: str, items: Sequence[str]) -> None:
        """Record that `session` was shown the items `items` (a line a hook said once: handover.py)."""
        with self._write():
            self._mark_seen(session, items)

    def record_cold_start(self, session: str, seen: Sequence[str]) -> None:
        """Record, in one transaction, that `session`'s cold start showed or passed over the items `seen`."""
        with self._write():
            self._mark_seen(session, [*seen, COLD_START])

    def _mark_seen(self, session: str, items: Sequence[str]) -> None:
        now = self._clock()
        self._db.executemany("INSERT OR IGNORE INTO session_seen (scope, session, item, time) VALUES (?, ?, ?, ?)",
                             [(self.scope, session, item, now) for item in items])

    # -- the Stop hook -----------------------------------------------------------------------------

    def drain_backlog(self, session: str, lane: str | None = "message", *, limit: int | None = None,
                      low_only: bool = False) -> tuple[list[JournalEntry], int]:
        """What `session`'s Stop hook hands over on `lane` (None: every lane), and the journal id it will have reached.

        A session with a row gets the rows after its `drained_upto` that its Monitor (or its prompt hooks)
        did not already show (high and medium priority up to its `printed_upto`). A session without one
        (its first Stop hook, no `attend run` attached) gets what no conduit delivered yet on the message
        lane, then starts at the journal's end. Test lines never go to the drain, nor a `scope: session`
        sensor's line for another session (`meta.session`). With `limit`, at most that many rows are read
        and the id reached is the last of them when more wait (they are the next drain's). `low_only`
        (the session's Monitor is live: it prints the high and medium rows itself, maybe not yet) leaves
        out every high and medium row. Nothing is recorded until `claim_drained`.
        """

        row = self._session_row(session)
        end = self.journal_end()
        if row is None:
            entries = [e for e in self.undrained(lane or "message", limit=limit) if e.id <= end]
        else:
            on_lane = "" if lane is None else " AND lane = ?"
            rows = self._db.execute(
                f"SELECT * FROM journal WHERE scope = ?{on_lane} AND test = 0 AND id > ? AND id <= ?"
                f" AND NOT (id <= ? AND priority IN ('high', 'medium')) AND {NOT_SHOWN} ORDER BY id LIMIT ?",
                (self.scope, *(() if lane is None else (lane,)), row.drained_upto, end,
                 end if low_only else row.printed_upto, -1 if limit is None else limit),
            )
            entries = list(decoded(rows, entry_from_row))
        if limit is not None and len(entries) >= limit:
            end = entries[-1].id  # the rest waits for the next drain
        # A `scope: session` sensor's line for another session is never this one's (it is passed over).
        return [e for e in entries if not for_other_session(e, session)], end

    def claim_drained(self, session: str, entries: Sequence[JournalEntry], upto: int, seen: Sequence[str] = ()) -> None:
        """Record, in one transaction, that `session`'s Stop hook handed `entries` over and reached `upto`.

        `seen`: the authored items they showed the session, and those of its cold start when this drain
        did it (with `COLD_START` then).
        """
        now = self._clock()
        with self._write():
            self._db.execute(
                "INSERT OR IGNORE INTO sessions (scope, session, printed_upto, drained_upto, role, started, heartbeat)"
                " VALUES (?, ?, ?, ?, 'stopped', ?, ?)",
                (self.scope, session, upto, upto, now, now),
            )
            self._db.execute(
                "UPDATE sessions SET drained_upto = MAX(drained_upto, ?) WHERE scope = ? AND session = ?",
                (upto, self.scope, session),
            )
            self._db.executemany("UPDATE journal SET drained = 1 WHERE id = ?", [(e.id,) for e in entries])
            self._mark_seen(session, seen)


    # -- the hooks as a conduit --------------------------------------------------------------------

    def turn_waiting(self, session: str, position: int, *, presence: str, session_meta: str) -> bool:
        """Whether `turn_backlog` would find a row (one row read at most: the question every hook asks first)."""
        rows, mine, params = self._turn_rows(session, position, self.journal_end(), presence, session_meta)
        return self._db.execute(f"WITH r AS ({rows}) SELECT 1 FROM r WHERE {mine} LIMIT 1", params).fetchone() is not None

    def turn_backlog(self, session: str, position: int, *, fresh_since: float, limit: int, presence: str,
                     session_meta: str) -> TurnBacklog:
        """What a hook standing in for `session`'s Monitor has to hand over, read in a bounded number of rows.

        The rows worth a turn (`WORTH_A_TURN`: messages, high and medium lines; never a one-shot poll's
        line, a presence line about the session itself (`presence` sensor keyed by its id), or a `scope:
        session` line for another session (`meta.<session_meta>`)) that `_turn_rows` considers, read from
        the partial indexes that hold them, never from the low lines around them: at most `limit` fresh
        rows (a message or a test line however old, a line journaled at `fresh_since` or later), a count
        of the fresh rows after those, and the count, highest magnitude and last row of the older event
        lines (one summary line, runtime/sessions/news.py).
        """
        end = self.journal_end()
        rows, mine, params = self._turn_rows(session, position, end, presence, session_meta)
        fresh = "(lane = 'message' OR test = 1 OR time >= ?)"
        entries = list(decoded(self._db.execute(
            f"WITH r AS ({rows}) SELECT * FROM r WHERE {mine} AND {fresh} ORDER BY id LIMIT ?",
            (*params, fresh_since, limit)), entry_from_row))
        more = 0
        if len(entries) >= limit:
            more = int(self._db.execute(f"WITH r AS ({rows}) SELECT COUNT(*) FROM r WHERE {mine} AND {fresh} AND id > ?",
                                        (*params, fresh_since, entries[-1].id)).fetchone()[0])
        count, worst, last = self._db.execute(
            f"WITH r AS ({rows}) SELECT COUNT(*), MAX(magnitude), MAX(id) FROM r WHERE {mine}"
            " AND lane = 'event' AND test = 0 AND time < ?", (*params, fresh_since)).fetchone()
        stale = None
        if count and isinstance(last, int):
            row = self._db.execute("SELECT * FROM journal WHERE id = ?", (last,)).fetchone()
            stale = next(decoded([row], entry_from_row), None) if row is not None else None
        return TurnBacklog(entries=entries, more=more, stale=int(count or 0) if stale is not None else 0,
                           stale_magnitude=float(worst) if isinstance(worst, int | float) else 0.0,
                           stale_last=stale, end=end)

    def _turn_rows(self, session: str, position: int, end: int, presence: str,
                   session_meta: str) -> tuple[str, str, tuple[Any, ...]]:
        """The rows worth a turn a hook of `session` at `position` considers (`turn_backlog`): the row
        query (on the partial indexes that hold them), the filter for this session, and their parameters.

        Rows after the position, test lines (`sensors fire`) included, as the session's Monitor would print
        them; rows at or before it that no session showed (`printed = 0`); and for a session's first hook
        (it has no row yet) the messages no conduit delivered, as the Stop hook's drain always handed them
        over (a low one a Monitor left on its stderr: `drain_backlog`). No test line from before the
        position: a test belongs to the sessions that were there when it was made.
        """
        before = min(position, end)
        # Named, not left to the planner: without statistics it reads the unprinted low lines (journal_unprinted).
        rows = (f"SELECT * FROM journal INDEXED BY journal_turn WHERE scope = ? AND {WORTH_A_TURN} AND id > ? AND id <= ?"
                " UNION ALL SELECT * FROM journal INDEXED BY journal_turn_unprinted"
                f" WHERE scope = ? AND printed = 0 AND {WORTH_A_TURN} AND id <= ? AND test = 0")
        params: tuple[Any, ...] = (self.scope, position, end, self.scope, before)
        if self._session_row(session) is None:
            rows += (" UNION ALL SELECT * FROM journal INDEXED BY journal_undrained WHERE scope = ? AND lane = 'message'"
                     " AND drained = 0 AND printed = 1 AND priority NOT IN ('high', 'medium') AND id <= ? AND test = 0")
            params += (self.scope, before)
        mine = (f"{NOT_SHOWN} AND NOT (sensor = ? AND key IS ?)"
                f" AND COALESCE(CASE WHEN json_valid(meta) THEN json_extract(meta, '$.{session_meta}') END, ?) = ?")
        return rows, mine, (*params, presence, session, session, session)

    def record_handover(self, session: str, *, upto: int, handed: Sequence[int], seen: Sequence[str] = ()) -> None:
        """Record, in one transaction, what a hook standing in for the Monitor handed `session`.

        Args:
            session: the session id (its row is made, `stopped`, when it has none yet).
            upto: the journal id the hook reached: the session's position on every conduit
                (`printed_upto` and `drained_upto`), as the Monitor's would be.
            handed: the rows it handed over (marked `printed` and `drained`).
            seen: the authored items they showed the session.

        The rows it passed over (the low lines, the older lines its summary line stands for) are marked
        `printed` (some session was past them) at most `MARK_BATCH` a hook, the oldest first: a backlog of a
        million rows is marked over several hooks instead of holding the store for seconds in one.
        """
        now = self._clock()
        with self._write():
            self._db.execute(
                "INSERT OR IGNORE INTO sessions (scope, session, printed_upto, drained_upto, role, started, heartbeat)"
                " VALUES (?, ?, ?, ?, 'stopped', ?, ?)",
                (self.scope, session, upto, upto, now, now),
            )
            self._db.execute(
                "UPDATE sessions SET printed_upto = MAX(printed_upto, ?), drained_upto = MAX(drained_upto, ?),"
                " heartbeat = ? WHERE scope = ? AND session = ?",
                (upto, upto, now, self.scope, session),
            )
            self._db.executemany("UPDATE journal SET printed = 1, drained = 1 WHERE id = ?", [(i,) for i in handed])
            self._db.execute(
                "UPDATE journal SET printed = 1 WHERE id IN (SELECT id FROM journal WHERE scope = ? AND printed = 0"
                " AND id <= ? ORDER BY id LIMIT ?)", (self.scope, upto, MARK_BATCH))
            self._mark_seen(session, seen)

    # -- per-session sensor state ------------------------------------------------------------------

    def prune_session_states(self, before: float) -> int:
        """Delete the per-session trigger and crate states (`name@session`) of sessions gone for good; return how many.

        Gone for good: the state was last written before `before` and the session has no row beating
        since then (a session that comes back later starts its session-scoped sensors from a baseline).
        """
        gone = ("instr(sensor, '@') > 0 AND updated < ? AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.scope = ?"
                " AND s.session = substr(sensor, instr(sensor, '@') + 1) AND s.heartbeat >= ?)")
        count = 0
        with self._write():
            for table in ("trigger_state", "crate_state"):
                cur = self._db.execute(f"DELETE FROM {table} WHERE scope = ? AND {gone}",
                                       (self.scope, before, self.scope, before))
                count += int(cur.rowcount)
        return count

    def last_heartbeat(self) -> float | None:
        """The latest heartbeat of any session of the scope (a live process's, or a hook's), or None."""
        row = self._db.execute("SELECT MAX(heartbeat) FROM sessions WHERE scope = ?", (self.scope,)).fetchone()
        return float(row[0]) if isinstance(row[0], float | int) and math.isfinite(row[0]) else None


    # -- /clear: a new session id for the same Claude Code process ------------------------------------

    def register_session(self, session: str, *, host: tuple[int, str] | None = None,
                         transcript: str | None = None) -> None:
        """Record that `session` lives now (its row is made when missing): `claude_seen` and its heartbeat
        are now; with `host`, it is the session of that Claude Code process (pid, `identity.process_start`);
        with `transcript`, the transcript path its hooks were given."""
        now = self._clock()
        pid, start = host if host is not None else (None, None)
        with self._write():
            end = self.journal_end()
            self._db.execute(
                "INSERT OR IGNORE INTO sessions (scope, session, printed_upto, drained_upto, role, started, heartbeat)"
                " VALUES (?, ?, ?, ?, 'stopped', ?, ?)", (self.scope, session, end, end, now, now))
            if host is not None:
                # Another Claude Code process took the id up (`claude --resume`): the `attend run` that
                # stopped under the previous one was not this process's Monitor.
                self._db.execute(
                    "UPDATE sessions SET pid = NULL WHERE scope = ? AND session = ? AND role = 'stopped'"
                    " AND (claude_pid IS NOT ? OR claude_start IS NOT ?)", (self.scope, session, pid, start))
            self._db.execute(
                "UPDATE sessions SET claude_pid = COALESCE(?, claude_pid), claude_start = COALESCE(?, claude_start),"
                " claude_seen = ?, transcript = COALESCE(?, transcript), heartbeat = MAX(COALESCE(heartbeat, 0), ?)"
                " WHERE scope = ? AND session = ?",
                (pid, start, now, transcript, now, self.scope, session))

    def release_moved(self, session: str, pid: int) -> int:
        """Stop the rows process `pid` left live for other ids than `session` when it started again as
        itself for `session` (`/clear`: runtime/serve.py); they name no stream that stopped (pid NULL)."""
        with self._write():
            cur = self._db.execute(
                "UPDATE sessions SET role = 'stopped', pid = NULL, role_since = ? WHERE scope = ? AND pid = ?"
                " AND session != ? AND role != 'stopped'", (self._clock(), self.scope, pid, session))
        return int(cur.rowcount)

    def host_sessions(self, pid: int, start: str) -> list[SessionRecord]:
        """The rows recorded for Claude Code process `pid` started at `start` (its ids before and after `/clear`)."""
        rows = self._db.execute("SELECT * FROM sessions WHERE scope = ? AND claude_pid = ? AND claude_start = ?",
                                (self.scope, pid, start))
        return list(decoded(rows, session_from_row))

    def session_of_claude_pid(self, pid: int, *, other_than: str, start: str | None = None) -> str | None:
        """The session last recorded for Claude Code process `pid` (started at `start`, when given and
        recorded), other than `other_than` (None: none)."""
        row = self._db.execute(
            "SELECT session FROM sessions WHERE scope = ? AND claude_pid = ? AND session != ?"
            " AND (? IS NULL OR claude_start IS NULL OR claude_start = ?)"
            " ORDER BY COALESCE(claude_seen, heartbeat) DESC LIMIT 1",
            (self.scope, pid, other_than, start, start)).fetchone()
        return None if row is None else str(row[0])

    def inherit_session(self, old: str, new: str) -> bool:
        """Give `new` the delivery positions and seen items of `old` (Claude Code's `/clear`), in one transaction.

        A `new` row already there keeps the further of the two positions. False when `old` has no row.
        """
        now = self._clock()
        with self._write():
            row = self._session_row(old)
            if row is None:
                return False
            self._db.execute(
                "INSERT OR IGNORE INTO sessions (scope, session, printed_upto, drained_upto, role, started, heartbeat)"
                " VALUES (?, ?, ?, ?, 'stopped', ?, ?)", (self.scope, new, row.printed_upto, row.drained_upto, now, now))
            self._db.execute(
                "UPDATE sessions SET printed_upto = MAX(printed_upto, ?), drained_upto = MAX(drained_upto, ?),"
                " claude_pid = COALESCE(claude_pid, ?), claude_start = COALESCE(claude_start, ?)"
                " WHERE scope = ? AND session = ?",
                (row.printed_upto, row.drained_upto, row.claude_pid, row.claude_start, self.scope, new))
            self._db.execute(
                "INSERT OR IGNORE INTO session_seen (scope, session, item, time)"
                " SELECT scope, ?, item, time FROM session_seen WHERE scope = ? AND session = ?", (new, self.scope, old))
        return True


@record(frozen=True)
class TurnBacklog:
    """What a hook has to hand a session (`SessionRows.turn_backlog`): bounded, whatever the journal holds."""

    #: The first fresh rows worth a turn, in journal order (at most the hook's limit).
    entries: list[JournalEntry]
    #: How many fresh rows worth a turn come after them (counted, not read).
    more: int
    #: How many event lines worth a turn are older than the hook's `stale_after` (one summary line),
    #: their highest magnitude, and the last of them (None when there are none).
    stale: int
    stale_magnitude: float
    stale_last: JournalEntry | None
    #: The journal's end when it was read: the position the hook moves the session to.
    end: int


def session_from_row(row: StoredRow) -> SessionRecord:
    """A session row as a record; `BadRow` when a column does not hold what attend wrote."""
    role = _role(text(row["role"], "role"))
    return SessionRecord(
        session=text(row["session"], "session"),
        printed_upto=integer(row["printed_upto"], "printed_upto"),
        drained_upto=integer(row["drained_upto"], "drained_upto"),
        pid=integer(row["pid"], "pid", optional=True),
        role=role,
        role_since=optional_number(row["role_since"], "role_since"),
        started=optional_number(row["started"], "started"),
        heartbeat=optional_number(row["heartbeat"], "heartbeat"),
        claude_pid=integer(row["claude_pid"], "claude_pid", optional=True),
        claude_start=text(row["claude_start"], "claude_start", optional=True),
        claude_seen=optional_number(row["claude_seen"], "claude_seen"),
        transcript=text(row["transcript"], "transcript", optional=True),
    )


def _role(value: str) -> SessionRole:
    """`value` as a session role; `BadRow` when it is none."""
    for role in ROLES:
        if value == role:
            return role
    raise BadRow(f"role {value!r} is not one of {', '.join(ROLES)}")
