"""The discloser under trio's autojump clock: threshold, refractory and governor over virtual hours."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import trio
import trio.testing

from attend.runtime.engagement import EngagementParams
from attend.runtime.pipeline import Discloser, SensorTerms
from attend.runtime.store import Observation, Store


class Rig:
    """A discloser over a real store whose clock is trio's (virtual) clock."""

    def __init__(self, tmp_path: Path, terms: dict[str, SensorTerms], **kwargs) -> None:
        self.store = Store(tmp_path / "attend.db", clock=trio.current_time)
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.discloser = Discloser(
            self.store, terms.get, stdout=self.out, stderr=self.err, clock=trio.current_time, **kwargs
        )

    def observe(self, sensor: str, *magnitudes: float, text: str = "obs") -> None:
        self.store.commit_poll(
            sensor, states={}, observations=[Observation("t", m, f"{text} {m}") for m in magnitudes]
        )
        self.discloser.wake()

    def times(self, sensor: str | None = None) -> list[float]:
        return [round(e.time - self.t0) for e in self.store.journal(sensor=sensor)]

    @property
    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()


@pytest.fixture
async def rig(tmp_path: Path, nursery: trio.Nursery):
    terms = {
        "a": SensorTerms("event", 2.0),
        "b": SensorTerms("event", 2.0),
        "c": SensorTerms("event", 2.0),
        "d": SensorTerms("event", 2.0),
        "e": SensorTerms("event", 2.0),
        "chat": SensorTerms("message", 2.0),
    }
    r = Rig(tmp_path, terms)
    r.t0 = trio.current_time()
    await nursery.start(r.discloser.run)
    yield r
    r.store.close()


async def test_observations_below_threshold_accumulate_silently(rig: Rig, autojump_clock) -> None:
    rig.observe("a", 0.8)
    await trio.sleep(30)
    rig.observe("a", 0.8)
    await trio.sleep(30)
    assert rig.store.journal() == []
    rig.observe("a", 0.8)
    await trio.sleep(1)
    # Three identical observations in one disclosure: one line with the count, as heavy as one of them.
    [entry] = rig.store.journal()
    assert (entry.description, entry.priority, entry.magnitude) == ("obs 0.8 (×3)", "low", pytest.approx(0.8))
    assert rig.err.getvalue().count("\n") == 1 and rig.lines == []
    assert rig.store.pending("a") == []


async def test_a_disclosure_is_printed_once_per_event_each_with_its_own_priority(rig: Rig, autojump_clock) -> None:
    rig.observe("a", 3.0, 1.5)
    await trio.sleep(1)
    assert rig.lines == ["[attend sensor=a priority=medium] obs 3.0"]
    assert rig.err.getvalue().splitlines() == ["[attend sensor=a priority=low] obs 1.5"]
    assert rig.store.unprinted() == []


async def test_absolute_refractory_holds_a_sensor_for_60_seconds(rig: Rig, autojump_clock) -> None:
    rig.observe("a", 3.0)
    await trio.sleep(10)
    rig.observe("a", 9.0)
    await trio.sleep(40)
    assert rig.times("a") == [0]
    await trio.sleep(20)
    assert rig.times("a") == [0, 60]


async def test_the_relative_refractory_swallows_weak_follow_ups_after_a_burst(tmp_path: Path, autojump_clock) -> None:
    r = Rig(tmp_path, {"a": SensorTerms("event", 2.0)}, engagement=EngagementParams(absolute_refractory=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(r.discloser.run)
        for _ in range(3):
            r.observe("a", 2.0)
            await trio.sleep(20)
        assert len(r.store.journal()) == 3
        # Three live fires: a 2.0 observation no longer reaches 2.0 × ~2.2; it waits for the decay.
        r.observe("a", 2.0)
        await trio.sleep(300)
        assert len(r.store.journal()) == 3
        # A strong one breaks through at once.
        r.observe("a", 5.0)
        await trio.sleep(1)
        assert len(r.store.journal()) == 5
        nursery.cancel_scope.cancel()
    r.store.close()


async def test_the_event_governor_spaces_disclosures_15_seconds_and_3_per_120(rig: Rig, autojump_clock) -> None:
    rig.t0 = trio.current_time()
    for name in ("a", "b", "c", "d"):
        rig.observe(name, 3.0, text=name)
    await trio.sleep(200)
    assert [(e.sensor, round(e.time - rig.t0)) for e in rig.store.journal()] == [
        ("a", 0),
        ("b", 15),
        ("c", 30),
        ("d", 120),
    ]


async def test_a_held_disclosure_keeps_accumulating_and_nothing_is_dropped(rig: Rig, autojump_clock) -> None:
    rig.observe("a", 3.0)
    rig.observe("b", 3.0, text="first")
    await trio.sleep(5)
    rig.observe("b", 1.0, text="second")
    await trio.sleep(20)
    b = rig.store.journal(sensor="b")
    assert [e.description for e in b] == ["first 3.0", "second 1.0"]
    assert [e.priority for e in b] == ["medium", "low"]  # held together, each as loud as itself
    assert b[0].disclosure == b[1].disclosure and round(b[0].time - rig.t0) == 15


async def test_the_message_lane_skips_threshold_and_refractory_with_a_permissive_governor(
    rig: Rig, autojump_clock
) -> None:
    for i in range(5):
        # medium (what wakes the agent spends the governor), distinct (identical ones would be one line)
        rig.observe("chat", 3.0, text=f"message {i}")
        await trio.sleep(0.1)
    await trio.sleep(30)
    times = rig.times("chat")
    # The first goes at once; the four that came within the 3 s cooldown go together after it.
    assert times == [0, 3, 3, 3, 3]
    assert len({e.disclosure for e in rig.store.journal()}) == 2


async def test_the_governor_window_survives_a_restart(tmp_path: Path, autojump_clock) -> None:
    terms = {"a": SensorTerms("event", 0.0), "b": SensorTerms("event", 0.0)}
    first = Rig(tmp_path, terms)
    first.observe("a", 3.0)
    first.discloser.run_once()
    first.store.close()
    await trio.sleep(1)
    second = Rig(tmp_path, terms)
    second.observe("b", 3.0)
    assert second.discloser.run_once() == pytest.approx(trio.current_time() + 14)
    assert len(second.store.journal()) == 1
    second.store.close()


async def test_observations_of_a_sensor_that_is_not_loaded_wait(rig: Rig, autojump_clock) -> None:
    rig.observe("gone", 9.0)
    await trio.sleep(5)
    assert rig.store.journal() == []
    assert len(rig.store.pending("gone")) == 1


async def test_a_store_locked_by_another_process_delays_a_disclosure_without_losing_it(
    tmp_path: Path, autojump_clock
) -> None:
    import sqlite3

    store = Store(tmp_path / "attend.db", clock=trio.current_time, busy_timeout_ms=50)
    out, err = io.StringIO(), io.StringIO()
    discloser = Discloser(store, {"a": SensorTerms("event", 0.0)}.get, stdout=out, stderr=err, clock=trio.current_time)
    store.commit_poll("a", states={}, observations=[Observation("t", 3.0, "held by a lock")])
    other = sqlite3.connect(tmp_path / "attend.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    async with trio.open_nursery() as nursery:
        await nursery.start(discloser.run)
        await trio.sleep(2)
        assert "disclosure round skipped" in err.getvalue()
        assert out.getvalue() == ""
        other.execute("COMMIT")
        await trio.sleep(2)
        nursery.cancel_scope.cancel()
    other.close()
    assert out.getvalue() == "[attend sensor=a priority=medium] held by a lock\n"
    assert [e.description for e in store.journal()] == ["held by a lock"]
    store.close()


async def test_identical_observations_held_during_refractory_are_one_line_with_a_count(rig: Rig, autojump_clock) -> None:
    # A `lines` sensor printing the same event every poll: the first fires, the next 12 pile up in the
    # absolute refractory and come out as one line, not 12.
    rig.observe("a", 3.0, text="deploy finished")
    await trio.sleep(1)
    for _ in range(12):
        rig.observe("a", 3.0, text="deploy finished")
        await trio.sleep(4)
    await trio.sleep(60)
    assert rig.lines == ["[attend sensor=a priority=medium] deploy finished 3.0",
                         "[attend sensor=a priority=medium] deploy finished 3.0 (×12)"]  # folded, never louder
    assert [e.description for e in rig.store.journal()] == ["deploy finished 3.0", "deploy finished 3.0 (×12)"]


async def test_different_observations_in_one_disclosure_stay_separate_lines_in_order(rig: Rig, autojump_clock) -> None:
    rig.observe("a", 3.0, 1.5, 3.0)
    await trio.sleep(1)
    assert rig.lines == ["[attend sensor=a priority=medium] obs 3.0 (×2)"]
    assert rig.err.getvalue().splitlines() == ["[attend sensor=a priority=low] obs 1.5"]


async def test_on_the_message_lane_each_event_is_priced_by_its_own_magnitude(rig: Rig, autojump_clock) -> None:
    rig.observe("chat", 4.0, 3.5, text="open message")
    await trio.sleep(1)
    assert rig.lines == ["[attend sensor=chat priority=medium] open message 4.0",
                         "[attend sensor=chat priority=medium] open message 3.5"]
    rig.observe("chat", 7.0, 2.0, text="mixed")
    await trio.sleep(5)
    assert rig.lines[2:] == ["[attend sensor=chat priority=high] mixed 7.0"]
    assert rig.err.getvalue().splitlines() == ["[attend sensor=chat priority=low] mixed 2.0"]
    assert [e.priority for e in rig.store.journal(sensor="chat")] == ["medium", "medium", "high", "low"]


async def test_on_the_event_lane_a_line_is_never_lifted_above_its_own_priority_by_the_lines_beside_it(
        rig: Rig, autojump_clock) -> None:
    rig.observe("a", 4.0, 3.5, text="event")  # 7.5 together: each is still medium
    await trio.sleep(1)
    assert rig.lines == ["[attend sensor=a priority=medium] event 4.0", "[attend sensor=a priority=medium] event 3.5"]
    await trio.sleep(120)
    rig.observe("b", 0.5, 3.0, text="mixed")  # the 0.5 line does not go out as medium with the 3.0 one
    await trio.sleep(1)
    assert rig.lines[2:] == ["[attend sensor=b priority=medium] mixed 3.0"]
    assert rig.err.getvalue().splitlines() == ["[attend sensor=b priority=low] mixed 0.5"]
    await trio.sleep(120)
    # Nine background lines (4.5 together) reach the threshold: nine low lines, not a nine-line medium wake.
    rig.store.commit_poll("c", states={}, observations=[Observation("t", 0.5, f"started {n}") for n in range(9)])
    rig.discloser.wake()
    await trio.sleep(1)
    assert rig.lines[3:] == []
    assert [e.priority for e in rig.store.journal(sensor="c")] == ["low"] * 9


async def test_a_low_disclosure_spends_no_budget_and_a_high_one_waits_only_the_cooldown(
    rig: Rig, autojump_clock
) -> None:
    rig.t0 = trio.current_time()
    rig.observe("a", 3.0, text="a")  # medium: spends a slot at 0
    await trio.sleep(1)
    rig.observe("b", 2.0, text="b")  # low (stderr only): goes at once, spends nothing
    await trio.sleep(1)
    rig.observe("c", 3.0, text="c")  # medium: the cooldown since a's line, not since b's
    await trio.sleep(30)
    rig.observe("d", 3.0, text="d")  # medium: third slot at 30
    await trio.sleep(1)
    rig.observe("a", 3.0, text="a2")  # medium: the window (3 per 120 s) is full until 120
    rig.observe("e", 6.0, text="e")  # high: waits only for the cooldown after a high line (none yet)
    await trio.sleep(200)
    # e goes at once: the medium lines before it hold it neither by their cooldown nor by the window (a high
    # line after a high line waits its cooldown: test_governor). It woke the agent, so it counts in the
    # window a2 waits for (the third-newest of 0, 15, 32, 33 leaves it at 15 + 120).
    assert [(e.description, round(e.time - rig.t0)) for e in rig.store.journal()] == [
        ("a 3.0", 0), ("b 2.0", 1), ("c 3.0", 15), ("d 3.0", 32), ("e 6.0", 33), ("a2 3.0", 135)]


async def test_the_rebuilt_window_leaves_low_disclosures_out(tmp_path: Path, autojump_clock) -> None:
    terms = {"a": SensorTerms("event", 0.0), "b": SensorTerms("event", 0.0)}
    first = Rig(tmp_path, terms)
    first.observe("a", 1.0)  # low: stderr only
    first.discloser.run_once()
    first.store.close()
    await trio.sleep(1)
    second = Rig(tmp_path, terms)
    second.observe("b", 3.0)
    assert second.discloser.run_once() is None  # disclosed at once: no cooldown from the low line
    assert [e.sensor for e in second.store.journal()] == ["a", "b"]
    second.store.close()


async def test_the_rebuilt_window_keeps_which_disclosures_were_high(tmp_path: Path, autojump_clock) -> None:
    terms = {name: SensorTerms("event", 0.0) for name in "abc"}
    first = Rig(tmp_path, terms)
    first.observe("a", 3.0)  # medium
    first.discloser.run_once()
    first.store.close()
    await trio.sleep(1)
    second = Rig(tmp_path, terms)  # a restart: the window is rebuilt from the journal
    second.observe("b", 6.0)
    assert second.discloser.run_once() is None  # high: the medium line's cooldown does not hold it
    second.store.close()
    await trio.sleep(1)
    third = Rig(tmp_path, terms)
    third.observe("c", 6.0)
    assert third.discloser.run_once() is not None  # high after a high one 1 s ago: the cooldown holds it
    assert [e.sensor for e in third.store.journal()] == ["a", "b"]
    third.store.close()


async def test_presence_lines_piled_up_are_priced_one_by_one_and_never_hold_a_high_line(
        tmp_path: Path, autojump_clock) -> None:
    """Sessions b, c and d came and went while the peers sensor was refractory: their lines are medium and
    low as each is alone, not one `high` sum whose cooldown a real high line would wait for (issue 22)."""
    rig = Rig(tmp_path, {"peers": SensorTerms("event", 2.0), "e": SensorTerms("event", 2.0)})
    rig.t0 = trio.current_time()
    for n, magnitude in enumerate((3.0, 2.0, 3.0, 2.0, 3.0)):  # starts (3.0) and exits (2.0), piled up
        rig.observe("peers", magnitude, text=f"session {n}")
    rig.observe("peers", 3.0, text="session 0")  # session 0 started again: the same line, folded
    rig.discloser.run_once()
    rig.observe("e", 6.0, text="urgent")
    rig.discloser.run_once()
    assert [(e.sensor, e.description, e.priority, round(e.time - rig.t0)) for e in rig.store.journal()] == [
        ("peers", "session 0 3.0 (×2)", "medium", 0), ("peers", "session 1 2.0", "low", 0),
        ("peers", "session 2 3.0", "medium", 0), ("peers", "session 3 2.0", "low", 0),
        ("peers", "session 4 3.0", "medium", 0), ("e", "urgent 6.0", "high", 0)]
    rig.store.close()


def _observe_for(rig: Rig, sensor: str, session: str, magnitude: float, text: str) -> None:
    """A `scope: session` sensor's fire for one session (its line is shown to that session only)."""
    rig.store.commit_poll(sensor, states={}, observations=[
        Observation("t", magnitude, f"{text} {magnitude}", meta={"session": session})])
    rig.discloser.wake()


async def test_a_line_for_one_session_never_waits_for_the_budget_another_sessions_line_spent(
        tmp_path: Path, autojump_clock) -> None:
    """Each session's agent is woken by its own lines only: session a's context line spends a's budget,
    not b's (DESIGN.md, Delivery: budgets are spent only by what wakes the agent). A project-wide line
    wakes both, so it waits for both budgets, and spends both."""
    rig = Rig(tmp_path, {"ctx": SensorTerms("event", 0.0), "items": SensorTerms("event", 0.0)},
              engagement=EngagementParams(absolute_refractory=0.0))
    rig.t0 = trio.current_time()
    _observe_for(rig, "ctx", "a", 3.0, "a")  # medium for a: a's cooldown runs to 15
    rig.discloser.run_once()
    await trio.sleep(1)
    _observe_for(rig, "ctx", "b", 3.0, "b")  # medium for b alone: b's agent was never woken, so at once
    rig.discloser.run_once()
    await trio.sleep(1)
    rig.observe("items", 3.0, text="all")  # for every session: after b's cooldown (16), the later one
    while rig.discloser.run_once() is not None:
        await trio.sleep(0.5)
    _observe_for(rig, "ctx", "a", 3.0, "a2")  # a's own line: the project-wide line at 16 woke a too
    while rig.discloser.run_once() is not None:
        await trio.sleep(0.5)
    assert [(e.description, round(e.time - rig.t0)) for e in rig.store.journal()] == [
        ("a 3.0", 0), ("b 3.0", 1), ("all 3.0", 16), ("a2 3.0", 31)]
    rig.store.close()


async def test_the_rebuilt_window_keeps_which_session_a_line_woke(tmp_path: Path, autojump_clock) -> None:
    terms = {"ctx": SensorTerms("event", 0.0)}
    quick = EngagementParams(absolute_refractory=0.0)  # the sensor's refractory is not what is tested
    first = Rig(tmp_path, terms, engagement=quick)
    _observe_for(first, "ctx", "a", 3.0, "a")
    first.discloser.run_once()
    first.store.close()
    await trio.sleep(1)
    second = Rig(tmp_path, terms, engagement=quick)  # a restart: the window is rebuilt from the journal
    _observe_for(second, "ctx", "b", 3.0, "b")
    assert second.discloser.run_once() is None  # b's first line: a's cooldown does not hold it
    _observe_for(second, "ctx", "a", 3.0, "a2")
    assert second.discloser.run_once() is not None  # a's second line, 1 s after a's first: held
    assert [e.description for e in second.store.journal()] == ["a 3.0", "b 3.0"]
    second.store.close()


async def test_a_line_for_one_session_is_never_held_by_the_refractory_of_another_sessions_fire(
        tmp_path: Path, autojump_clock) -> None:
    """A `scope: session` sensor's refractory is each session's own: session a's fire holds a's next line
    for the absolute refractory (60 s by default), never b's; a restart reads the same fires back."""
    terms = {"ctx": SensorTerms("event", 0.0)}
    rig = Rig(tmp_path, terms)  # the default engagement: a 60 s absolute refractory
    rig.t0 = trio.current_time()
    _observe_for(rig, "ctx", "a", 1.0, "a")
    assert rig.discloser.run_once() is None
    await trio.sleep(1)
    _observe_for(rig, "ctx", "b", 1.0, "b")  # b's first line: a's fire does not hold it
    assert rig.discloser.run_once() is None
    rig.store.close()
    await trio.sleep(1)
    again = Rig(tmp_path, terms)  # a restart
    again.t0 = rig.t0
    _observe_for(again, "ctx", "a", 1.0, "a2")  # a's own refractory still holds a's next line, to 60 s
    assert again.discloser.run_once() == pytest.approx(rig.t0 + 60)
    await trio.sleep(58)
    assert again.discloser.run_once() is None
    assert [(e.description, round(e.time - rig.t0)) for e in again.store.journal()] == [
        ("a 1.0", 0), ("b 1.0", 1), ("a2 1.0", 60)]
    again.store.close()


async def test_a_project_wide_line_is_held_by_the_sensors_own_last_fire(tmp_path: Path, autojump_clock) -> None:
    rig = Rig(tmp_path, {"items": SensorTerms("event", 0.0)})
    rig.t0 = trio.current_time()
    rig.observe("items", 1.0, text="x")
    assert rig.discloser.run_once() is None
    await trio.sleep(1)
    rig.observe("items", 1.0, text="y")
    assert rig.discloser.run_once() == pytest.approx(rig.t0 + 60)
    assert rig.store.status("items").fires == [pytest.approx(rig.t0)]
    rig.store.close()


async def test_each_sessions_lines_are_priced_and_released_apart_from_another_sessions_held_line(
        tmp_path: Path, autojump_clock) -> None:
    """A `scope: session` sensor's pending lines are one accumulator per session: a's medium line held by
    a's cooldown does not carry b's low line along (b's goes out at once, low, alone), nor lift it to medium."""
    rig = Rig(tmp_path, {"ctx": SensorTerms("event", 0.0)}, engagement=EngagementParams(absolute_refractory=0.0))
    rig.t0 = trio.current_time()
    _observe_for(rig, "ctx", "a", 3.0, "a")  # medium for a: a's cooldown runs to 15
    assert rig.discloser.run_once() is None
    await trio.sleep(1)
    _observe_for(rig, "ctx", "a", 3.0, "a2")  # a's next medium line: held by a's cooldown
    _observe_for(rig, "ctx", "b", 1.0, "b")  # b's low line, pending beside it
    assert rig.discloser.run_once() == pytest.approx(rig.t0 + 15)
    assert [(e.description, e.priority, round(e.time - rig.t0)) for e in rig.store.journal()] == [
        ("a 3.0", "medium", 0), ("b 1.0", "low", 1)]
    await trio.sleep(14)
    assert rig.discloser.run_once() is None
    assert [(e.description, e.priority, round(e.time - rig.t0)) for e in rig.store.journal()][2:] == [
        ("a2 3.0", "medium", 15)]
    assert rig.store.pending("ctx") == []
    rig.store.close()


async def test_a_key_held_with_several_values_goes_out_as_its_newest_one_saying_how_many(rig: Rig, autojump_clock) -> None:
    rig.store.commit_poll("a", states={}, observations=[Observation("t", 3.0, "x is 1", key="x")])
    rig.discloser.wake()
    await trio.sleep(1)
    for value in (2, 3):  # held by the absolute refractory: x moves twice, y once, z twice to the same text
        rig.store.commit_poll("a", states={}, observations=[
            Observation("t", 3.0, f"x is {value}", key="x"), Observation("t", 0.5, "z started", key="z")])
    rig.store.commit_poll("a", states={}, observations=[Observation("t", 0.5, "y is 1", key="y")])
    rig.discloser.wake()
    await trio.sleep(60)
    held = [(e.description, e.magnitude) for e in rig.store.journal()][1:]
    assert held == [("z started (×2)", 0.5), ("x is 3 (2 changes held)", 3.0), ("y is 1", 0.5)]
