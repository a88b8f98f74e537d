"""The journal's bell (runtime/store/bell.py): a session's printer prints a row another connection commits
because that connection rang it, not because a timer came round; a bell that never rings or cannot be
bound costs only latency: the printer's fallback timer still prints every row (issue 39)."""

from __future__ import annotations

import io
import os
import socket
import time

import pytest
import trio

from attend.peers.identity import Session
from attend.runtime.sessions.printer import JOURNAL_FALLBACK, SessionPrinter, bind_bell
from attend.runtime.store import Observation, Store
from attend.runtime.store.bell import bell_address, ring
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
