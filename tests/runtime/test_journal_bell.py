"""The journal's bell (runtime/store/bell.py): a session's printer prints a row another connection commits
because that connection rang it, not because a timer came round, and a waiting doorbell hands a line over
the same way; a bell that never rings or cannot be bound costs only latency: the printer's fallback timer
still prints every row, and the doorbell's looks once a second (issue 39)."""

from __future__ import annotations

import io
import os
import socket
import threading
import time

import pytest
import trio

from attend.peers.identity import Session
from attend.runtime.sessions.printer import JOURNAL_FALLBACK, SessionPrinter
from attend.runtime.store import Observation, Store
from attend.runtime.store.bell import DOORBELL_LIVE, bell_address, bind_bell, doorbell_address, ring
from waiting import PATIENCE

HOUR = 3600.0


def fire(db, scope: str, text: str) -> None:
    """Commit one test row from a connection of its own, as `attend sensors fire` in another process does."""
    with Store(db, scope=scope) as writer:
        writer.journal_test("probe", [Observation("t", 1.0, text)], lane="event", priority="high")


async def printed(out: io.StringIO, text: str) -> None:
    deadline = trio.current_time() + PATIENCE
    while text not in out.getvalue():
        assert trio.current_time() < deadline, f"{text!r} never printed"
        await trio.sleep(0.01)


async def test_a_row_another_connection_commits_rings_the_session_that_prints_it(tmp_path) -> None:
    db = tmp_path / "attend.db"
    store = Store(db, scope="/p")
    out = io.StringIO()
    # An hour between the printer's own looks: only the bell can bring the row within the test's patience.
    printer = SessionPrinter(store, Session("s1", True, "flag"), stdout=out, stderr=io.StringIO(), fallback=HOUR)
    async with trio.open_nursery() as nursery:
        await nursery.start(printer.run)
        fire(db, "/p", "rung at once")
        await printed(out, "rung at once")
        nursery.cancel_scope.cancel()
    store.close()


def deaf_bell(address: bytes) -> socket.socket:
    """A bell bound where nobody rings: the signal path dead, the printer never told of a row."""
    return bind_bell(f"\0attend-test-deaf-{os.getpid()}-{time.monotonic_ns()}".encode())


def broken_bell(address: bytes) -> socket.socket:
    raise OSError("no bell here")


@pytest.mark.parametrize("open_bell", [deaf_bell, broken_bell], ids=["never rings", "cannot bind"])
async def test_without_a_working_bell_the_fallback_timer_still_prints_every_row(tmp_path, autojump_clock,
                                                                                open_bell) -> None:
    db = tmp_path / "attend.db"
    store = Store(db, scope="/p")
    out = io.StringIO()
    printer = SessionPrinter(store, Session("s1", True, "flag"), stdout=out, stderr=io.StringIO(), open_bell=open_bell)
    async with trio.open_nursery() as nursery:
        await nursery.start(printer.run)
        started = trio.current_time()
        for n in range(3):
            fire(db, "/p", f"row {n}")
        await printed(out, "row 2")
        assert trio.current_time() - started <= JOURNAL_FALLBACK + 0.01  # one look of the fallback timer
        nursery.cancel_scope.cancel()
    assert [line.rsplit(" ", 1)[1] for line in out.getvalue().splitlines()] == ["0", "1", "2"]
    store.close()


def test_a_commit_rings_each_live_session_of_its_project_and_no_other(tmp_path) -> None:
    db = tmp_path / "attend.db"
    here, there = Store(db, scope="/p"), Store(db, scope="/q")
    bells = {}
    for store, session in ((here, "a"), (here, "b"), (there, "c")):
        store.attach_session(session, pid=os.getpid(), resume=True)
        bells[session] = bind_bell(bell_address(store.scope, session, os.getpid()))
    here.set_session_role("b", "stopped", pid=None)
    fire(db, "/p", "news")

    def rang(session: str) -> bool:
        try:
            return bells[session].recv(64) == b"!"
        except BlockingIOError:
            return False

    assert [rang(s) for s in "abc"] == [True, False, False]
    assert ring("/p", [("gone", 999_999_999)]) == 0  # nobody there: nothing raised, nothing rung
    for sock in bells.values():
        sock.close()
    here.close()
    there.close()


# -- the doorbell's bell (runtime/sessions/doorbell.py): a hooks session's waiting Stop hook ----------------

def doorbell_waits(db, scope: str, **options) -> tuple[threading.Thread, threading.Event, dict]:
    """A doorbell for session s1 (at the journal's end, beating now) waiting in a thread on a store of its own;
    the event is set once it has made its first look (what comes after is for its bell or its timer)."""
    from attend.runtime.sessions.doorbell import Claude, ring

    looked, outcome = threading.Event(), {}
    with Store(db, scope=scope) as setup:
        setup.register_session("s1")
        setup.record_handover("s1", upto=setup.journal_end(), handed=[])

    def wait() -> None:
        with Store(db, scope=scope) as store:
            first_look = store.data_version

            def data_version() -> int:
                looked.set()
                return first_look()

            store.data_version = data_version  # type: ignore[method-assign]
            shown: list = []
            outcome["why"] = ring(store, "s1", project_dir="/p", claude=Claude(None), show=shown.append,
                                  foreground=False, carried=lambda: True, ceiling=PATIENCE, **options)
            outcome["shown"] = [e.description for h in shown for e in h.entries]

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, looked, outcome


@pytest.mark.parametrize("options", [
    # An hour between its own looks at the store: only the bell can bring the line within the test's patience.
    {"between": HOUR},
    # Its bell bound where nobody rings: it looks once a second all the same (LIVENESS_CHECK).
    {"open_bell": deaf_bell},
], ids=["rung by the commit", "bell never rings: its timer"])
def test_a_waiting_doorbell_hands_over_the_line_another_connection_commits(tmp_path, options) -> None:
    db = tmp_path / "attend.db"
    Store(db, scope="/p").close()
    thread, looked, outcome = doorbell_waits(db, "/p", **options)
    assert looked.wait(PATIENCE)
    fire(db, "/p", "the line")
    thread.join(PATIENCE)
    assert outcome == {"why": "rang", "shown": ["the line"]}


def test_a_commit_rings_the_doorbells_of_sessions_that_beat_lately_and_no_other(tmp_path) -> None:
    db = tmp_path / "attend.db"
    now = [1_000_000.0]
    store = Store(db, scope="/p", clock=lambda: now[0])
    store.register_session("old")
    now[0] += DOORBELL_LIVE + 1  # "old" last beat before the window
    store.register_session("beating")
    bells = {s: bind_bell(doorbell_address("/p", s)) for s in ("old", "beating")}
    with Store(db, scope="/p", clock=lambda: now[0]) as writer:
        writer.journal_test("probe", [Observation("t", 1.0, "news")], lane="event", priority="high")

    def rang(session: str) -> bool:
        try:
            return bells[session].recv(64) == b"!"
        except BlockingIOError:
            return False

    assert [rang(s) for s in ("old", "beating")] == [False, True]
    for sock in bells.values():
        sock.close()
    store.close()
