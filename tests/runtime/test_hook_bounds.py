"""A hook reads at most what it hands over, however long the journal (issue 34, item 7).

A Stop hook that read every undelivered row before cutting its answer took 27-33 s and 1 GB on a journal
of a million rows (benchmarks/bench_stop_backlog.py times it now). The bound is checked by what it reads:
the journal rows decoded into entries, counted as they are read, and the rows a handover marks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from attend.commands.drain import CONTEXT_LIMIT, STOP_LINES
from attend.runtime.sessions.handover import HANDOVER_ROWS, hook_handover
from attend.runtime.store import Store, scope_for, session_rows
from attend.runtime.store.location import default_db_path

LOW, WORTH = 5000, 3 * HANDOVER_ROWS


def _store(home) -> Store:
    return Store(default_db_path(home.state / "attend"), scope=scope_for(home.project))


def _journal(store: Store, rows: list[tuple[str, str, float, float]]) -> None:
    """Journal rows (lane, priority, magnitude, age in seconds) as the poller writes them, unprinted."""
    now = time.time()
    with store.exclusive() as db:
        db.executemany(
            "INSERT INTO journal (scope, time, sensor, trigger, key, lane, priority, magnitude, description, meta)"
            " VALUES (?, ?, 'processes', 'exited', NULL, ?, ?, ?, ?, '{}')",
            [(store.scope, now - age, lane, prio, mag, f"line {n} ({prio})") for n, (lane, prio, mag, age) in
             enumerate(rows)])


@pytest.fixture
def backlog(home):
    """A session at the journal's start, then `LOW` low lines around `WORTH` high lines, a third of them stale."""
    store = _store(home)
    store.record_handover("s1", upto=store.journal_end(), handed=[])
    rows = [("event", "low", 0.5, 1.0)] * LOW
    for n in range(WORTH):
        rows.insert(n * LOW // WORTH, ("event", "high", 5.0, 7200.0 if n < WORTH // 3 else 1.0))
    _journal(store, rows)
    yield store
    store.close()


def test_a_hook_decodes_at_most_its_limit_of_rows_and_counts_the_rest(backlog, home, monkeypatch) -> None:
    decoded: list[int] = []
    real = session_rows.entry_from_row

    def counting(row):
        decoded.append(row["id"])
        return real(row)

    monkeypatch.setattr(session_rows, "entry_from_row", counting)
    handover = hook_handover(backlog, "s1", project_dir=str(home.project))
    # The fresh lines up to the limit, and the last of the stale ones (its summary line): nothing else.
    assert len(decoded) <= HANDOVER_ROWS + 1
    fresh = WORTH - WORTH // 3
    summary, *lines = handover.entries
    assert summary.description == f"{WORTH // 3} notifications while this session was away; attend sensors history"
    assert len(lines) == HANDOVER_ROWS and handover.more == fresh - HANDOVER_ROWS
    assert all(e.priority == "high" for e in lines)
    assert handover.upto == backlog.journal_end()


def test_the_queries_of_a_hook_read_the_index_of_the_rows_worth_a_turn(backlog) -> None:
    rows, mine, params = backlog._turn_rows("s1", 0, backlog.journal_end(), "peers", "session")
    plan = " ".join(str(r[3]) for r in backlog._db.execute(f"EXPLAIN QUERY PLAN WITH r AS ({rows}) SELECT * FROM r"
                                                           f" WHERE {mine} ORDER BY id LIMIT 1", params))
    assert "USING INDEX journal_turn " in plan and "USING INDEX journal_turn_unprinted " in plan, plan
    assert "SCAN journal" not in plan, plan


def test_a_handover_marks_at_most_a_batch_of_the_rows_it_passed_over(backlog, monkeypatch) -> None:
    monkeypatch.setattr(session_rows, "MARK_BATCH", 1000)
    unprinted = "SELECT COUNT(*) FROM journal WHERE printed = 0"
    before = backlog._db.execute(unprinted).fetchone()[0]
    handed = [e.id for e in backlog.journal()[-3:]]
    backlog.record_handover("s1", upto=backlog.journal_end(), handed=handed)
    assert before - backlog._db.execute(unprinted).fetchone()[0] == 1000 + 3
    backlog.record_handover("s1", upto=backlog.journal_end(), handed=[])  # the next hook marks the next batch
    assert before - backlog._db.execute(unprinted).fetchone()[0] == 2000 + 3


def test_the_stop_hooks_answer_says_how_many_more_it_did_not_hand_over(backlog, home) -> None:
    backlog.close()
    payload = {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False, "cwd": str(home.project)}
    out = home.attend("drain", "--format", "hook", input=json.dumps(payload))
    assert out.returncode == 0, out.stderr
    reason = json.loads(out.stdout)["reason"].splitlines()
    fresh = WORTH - WORTH // 3
    assert reason[0] == f"attend: {fresh + 1} notifications arrived while you worked:"
    shown = [line for line in reason if line.startswith("[attend ")]
    assert len(shown) == STOP_LINES  # a Stop hook lists at most 10 lines, then counts the rest
    assert reason[-1] == f"(+{fresh + 1 - STOP_LINES} more; attend sensors history shows them)"
    assert len("\n".join(reason)) <= CONTEXT_LIMIT



def test_an_index_the_hooks_name_is_made_again_when_the_store_opens_without_it(backlog, home) -> None:
    backlog._db.execute("DROP INDEX journal_turn_unprinted")
    backlog.close()
    with _store(home) as store:
        assert hook_handover(store, "s1", project_dir=str(home.project)).entries


# -- the doorbell's wait, on an explicit clock (runtime/sessions/doorbell.py `ring`) ------------------

class Clock:
    """Monotonic seconds that move only when the doorbell sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds


def _ring(store, home, clock: Clock, *, claude_pid: int | None = None, ceiling: float = 60.0):
    from attend.runtime.sessions.doorbell import Claude, ring

    shown: list = []
    polled: list[float] = []
    why = ring(store, "s1", project_dir=str(home.project), claude=Claude(claude_pid), show=shown.append,
               foreground=False, carried=lambda: True, keep_polled=lambda: polled.append(clock.now),
               clock=clock, sleep=clock.sleep, ceiling=ceiling, open_bell=None)  # no bell: a look every check
    return why, shown, polled


def test_the_doorbell_ends_at_its_ceiling_having_looked_at_its_cadence_and_kept_a_poller(home) -> None:
    from attend.runtime.sessions.doorbell import BEAT, DOORBELL_CHECK, LIVENESS_CHECK

    clock = Clock()
    with _store(home) as store:
        why, shown, polled = _ring(store, home, clock, ceiling=2 * BEAT)
        beat = store.session("s1")
    assert (why, shown) == ("ceiling", [])
    assert clock.now == pytest.approx(2 * BEAT, abs=DOORBELL_CHECK)
    assert clock.sleeps == pytest.approx(2 * BEAT / DOORBELL_CHECK, abs=2)  # one look per check, never busy
    assert 2 * BEAT / (LIVENESS_CHECK + DOORBELL_CHECK) <= len(polled) <= 2 * BEAT / LIVENESS_CHECK + 1
    assert beat is not None  # it beat for the session (a headless poller's idle limit reads it)


def test_the_doorbell_ends_when_its_claude_code_process_is_gone_within_a_liveness_check(home) -> None:
    from attend.runtime.sessions.doorbell import LIVENESS_CHECK

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    clock = Clock()
    with _store(home) as store:
        why, shown, _ = _ring(store, home, clock, claude_pid=gone.pid)
    assert (why, shown) == ("gone", [])
    assert clock.now <= LIVENESS_CHECK + 0.5
