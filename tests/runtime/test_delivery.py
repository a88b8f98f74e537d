"""Delivery: priority tiers and the one-line notification format."""

from __future__ import annotations

import io

from attend.runtime.delivery import format_line, joined, priorities, priority, write_entries
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


def test_each_line_of_a_disclosure_has_its_own_priority_whatever_it_goes_out_with() -> None:
    # Nine 0.5 lines (4.5 together) are nine low lines; a 0.5 line beside a 3.0 and a 6.0 one stays low.
    assert priorities([0.5] * 9) == ["low"] * 9
    assert priorities([0.5, 3.0, 6.0]) == ["low", "medium", "high"]


def test_presence_lines_of_one_poll_join_only_with_lines_of_their_own_priority() -> None:
    start_a, exit_b, start_c, exit_d = (_row(1, 1, 3.0, "medium", sensor="peers"), _row(2, 1, 0.5, "low", sensor="peers"),
                                        _row(3, 1, 3.0, "medium", sensor="peers"), _row(4, 1, 0.5, "low", sensor="peers"))
    other_poll = _row(5, 5, 3.0, "medium", sensor="peers")
    lines = joined([start_a, exit_b, start_c, exit_d, other_poll], "peers")
    assert [(e.description, e.priority) for e in lines] == [("d1; d3", "medium"), ("d2; d4", "low"), ("d5", "medium")]
