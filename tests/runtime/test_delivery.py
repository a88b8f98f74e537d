"""Delivery: priority tiers and the one-line notification format."""

from __future__ import annotations

import io

from attend.runtime.delivery import format_line, priced_for_reader, priority, write_entries
from attend.runtime.store import JournalEntry


def test_priorities_follow_the_accumulated_magnitude() -> None:
    assert [priority(m) for m in (0.0, 2.99, 3.0, 4.99, 5.0, 50.0)] == ["low", "low", "medium", "medium", "high", "high"]


def test_a_notification_is_exactly_one_line() -> None:
    line = format_line("ci", "high", "build failed\nsee log\r\nnow")
    assert line == "[attend sensor=ci priority=high] build failed see log now"


def test_a_test_fire_is_marked() -> None:
    assert format_line("ci", "medium", "x", test=True) == "[attend sensor=ci priority=medium] [test] x"


def test_an_mcp_notification_names_the_server_and_key() -> None:
    line = format_line("slack", "medium", "new message", key="C1/42", meta={"server": "slack"})
    assert line == "[attend sensor=slack priority=medium] new message (server=slack, key=C1/42)"


def _entry(i: int, prio: str) -> JournalEntry:
    return JournalEntry(i, 0.0, "s", "t", None, "event", prio, 1.0, f"d{i}", i, False, False, False, {})


def test_high_and_medium_go_to_stdout_and_low_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    ids = write_entries([_entry(1, "high"), _entry(2, "low"), _entry(3, "medium")], out, err)
    assert ids == [1, 2, 3]
    assert out.getvalue().splitlines() == ["[attend sensor=s priority=high] d1", "[attend sensor=s priority=medium] d3"]
    assert err.getvalue() == "[attend sensor=s priority=low] d2\n"


def _row(i: int, disclosure: int, magnitude: float, prio: str, lane: str = "event", sensor: str = "s") -> JournalEntry:
    return JournalEntry(i, 0.0, sensor, "t", f"k{i}", lane, prio, magnitude, f"d{i}", disclosure, False, False, False, {})


def test_a_row_hidden_from_the_reader_adds_nothing_to_the_priority_of_the_rows_it_is_shown() -> None:
    own_start, exit_, other = _row(1, 1, 3.0, "high"), _row(2, 1, 2.0, "high"), _row(3, 3, 4.0, "medium")
    entries = [own_start, exit_, other]
    shown = priced_for_reader([exit_, other], entries)
    assert [(e.id, e.priority) for e in shown] == [(2, "low"), (3, "medium")]  # a whole disclosure keeps its own
    assert priced_for_reader(entries, entries) == entries  # nothing hidden: the project's pricing
    messages = [_row(4, 4, 4.0, "medium", "message"), _row(5, 4, 4.0, "medium", "message")]
    assert priced_for_reader(messages[1:], messages) == messages[1:]  # each message is priced alone already
    presence = [_row(6, 6, 3.0, "medium", sensor="peers"), _row(7, 6, 2.0, "low", sensor="peers")]
    assert priced_for_reader(presence[1:], presence) == presence[1:]  # presence lines too (priorities)
