"""News, not backlog (runtime/sessions/news.py): what a (re)starting stream hands over, with an explicit now."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from attend.compiler.digest import compile_digest
from attend.ir import DigestBlock
from attend.runtime.sessions.news import AWAY_SENSOR, away_text, news
from attend.runtime.store.journal import JournalEntry

NOW = 1_800_000_000.0
STARTED = NOW - 1.0
STALE = 600.0
DIGEST = compile_digest(DigestBlock(over=8, description="{count} new messages from {from}; attend peers inbox"))


def row(n: int, *, age: float, lane: str = "event", test: bool = False, magnitude: float = 3.0,
        sensor: str = "s", author: str | None = None) -> JournalEntry:
    meta = {"author": author} if author else {}
    prio = "high" if magnitude >= 5 else "medium" if magnitude >= 3 else "low"
    return JournalEntry(n, NOW - age, sensor, "t", f"k{n}", lane, prio, magnitude, f"line {n}", n, test, False,
                        False, meta)


def shaped(entries, digest=None):
    return news(entries, now=NOW, started=STARTED, stale_after=STALE, digest_of=lambda _: digest)


def test_event_lines_older_than_stale_after_become_one_line_and_younger_ones_stay() -> None:
    out = shaped([row(1, age=3600), row(2, age=601, magnitude=6), row(3, age=599), row(4, age=5)])
    assert [(e.sensor, e.priority, e.description) for e in out] == [
        (AWAY_SENSOR, "medium", "2 notifications while this session was away; attend sensors history"),
        ("s", "medium", "line 3"), ("s", "medium", "line 4")]
    assert away_text(1) == "1 notification while this session was away; attend sensors history"


def test_the_summary_of_only_low_lines_is_low_and_never_high() -> None:
    assert shaped([row(1, age=900, magnitude=1)])[0].priority == "low"
    assert shaped([row(1, age=900, magnitude=9)])[0].priority == "medium"


def test_a_test_row_from_before_the_stream_started_is_never_handed_over() -> None:
    out = shaped([row(1, age=30, test=True), row(2, age=0.5, test=True)])
    assert [e.id for e in out] == [2]


def test_messages_are_never_stale_and_more_than_the_digest_over_become_one_line() -> None:
    nine = [row(n, age=86_400, lane="message", magnitude=7, sensor="messages", author="a") for n in range(1, 10)]
    (one,) = shaped(nine, DIGEST)
    assert (one.sensor, one.priority, one.description) == ("messages", "high", "9 new messages from a; attend peers inbox")
    assert one.meta == {"authors": ["a"], "keys": [f"k{n}" for n in range(1, 10)]}
    assert [e.id for e in shaped(nine[:8], DIGEST)] == list(range(1, 9))
    assert [e.id for e in shaped(nine)] == list(range(1, 10))  # a sensor without a digest rule: one line each


@given(st.lists(st.tuples(st.sampled_from(["event", "message"]), st.floats(0, 2000), st.booleans()), max_size=30))
def test_every_row_of_the_backlog_is_shown_digested_or_counted_once(spec) -> None:
    entries = [row(n, age=age, lane=lane, test=test, author="a" if lane == "message" else None)
               for n, (lane, age, test) in enumerate(spec, 1)]
    out = shaped(entries, DIGEST)
    shown = [e.id for e in out if e.sensor != AWAY_SENSOR and e.trigger != "digest"]
    counted = sum(e.meta["count"] for e in out if e.sensor == AWAY_SENSOR)
    digested = sum(len(e.meta["keys"]) for e in out if e.trigger == "digest")
    handed = [e for e in entries if not (e.test and e.time < STARTED)]
    assert len(shown) == len(set(shown))
    assert len(shown) + counted + digested == len(handed)
    assert all(e.sensor != AWAY_SENSOR or NOW - entries[e.id - 1].time > STALE for e in out)


def test_a_row_a_crash_kept_from_every_session_is_counted_once_it_is_stale_never_dropped(home) -> None:
    """The poller died between journaling and printing: a session starting an hour later is told, in one line."""
    import io

    from attend.peers.identity import Session
    from attend.runtime.sessions.printer import SessionPrinter
    from attend.runtime.store import Observation, open_project_store
    from attend.spec import layer_paths

    clock = {"now": NOW - 3600}
    with open_project_store(layer_paths(home.project, home.env()), clock=lambda: clock["now"]) as store:
        for n in (1, 2):
            store.commit_poll("s", states=None, observations=[Observation("t", 3.0, f"line {n}", key=str(n))],
                              status={"state": "ok"})
            store.disclose("s", store.pending("s"), lane="event", priority="medium", time_=clock["now"])
        clock["now"] = NOW  # nobody printed them (printed = 0); an hour later a new session starts
        out, err = io.StringIO(), io.StringIO()
        printer = SessionPrinter(store, Session("late", True, "flag"), stdout=out, stderr=err,
                                 clock=lambda: clock["now"])
        assert printer.print_new() == 1
        assert out.getvalue() == ("[attend sensor=attend priority=medium] 2 notifications while this session was away;"
                                  " attend sensors history\n")
        assert printer.print_new() == 0  # handed over once: recorded with the round
        again = SessionPrinter(store, Session("later", True, "flag"), stdout=io.StringIO(), stderr=io.StringIO(),
                               clock=lambda: clock["now"])
        assert again.print_new() == 0  # printed now: a later session is not told again
