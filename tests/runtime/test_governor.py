"""The governor: cooldown between disclosures and a rolling window limit, per lane."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from attend.runtime.governor import DEFAULT_GOVERNORS, Governor, GovernorParams, governor_params, next_slot
from property_examples import examples

EVENT = DEFAULT_GOVERNORS["event"]


def test_an_idle_lane_allows_a_disclosure_now() -> None:
    assert next_slot([], 100.0, EVENT) == 100.0


def test_the_event_lane_waits_15_seconds_between_disclosures() -> None:
    assert next_slot([100.0], 101.0, EVENT) == 115.0
    assert next_slot([100.0], 116.0, EVENT) == 116.0


def test_the_event_lane_allows_at_most_3_in_a_rolling_120_seconds() -> None:
    times = [0.0, 15.0, 30.0]
    assert next_slot(times, 45.0, EVENT) == 120.0
    assert next_slot([*times, 120.0], 135.0, EVENT) == 135.0


def test_the_message_lane_is_permissive() -> None:
    msg = DEFAULT_GOVERNORS["message"]
    assert msg == GovernorParams(cooldown=3.0, limit=30, window=60.0)
    assert next_slot([10.0], 13.0, msg) == 13.0
    assert next_slot([float(t) for t in range(0, 90, 3)], 90.0, msg) == 90.0


def test_a_governor_forgets_disclosures_that_left_the_window() -> None:
    g = Governor(EVENT)
    for t in (0.0, 15.0, 30.0):
        assert g.allows(t)
        g.record(t)
    assert not g.allows(60.0)
    assert g.allows(120.0)
    g.record(500.0)
    assert g.times == [500.0]


def test_governor_parameters_come_from_config_over_the_defaults() -> None:
    params = governor_params({"event": {"cooldown": 1, "limit": 10, "window": "2m"}})
    assert params["event"] == GovernorParams(cooldown=1.0, limit=10, window=120.0)
    assert params["message"] == DEFAULT_GOVERNORS["message"]


def test_a_high_disclosure_waits_for_the_cooldown_only_never_for_the_rate_window() -> None:
    times = [0.0, 15.0, 30.0]  # the window is full until 120
    assert next_slot(times, 35.0, EVENT) == 120.0
    assert next_slot(times, 35.0, EVENT, urgent=True) == 45.0
    assert next_slot(times, 50.0, EVENT, urgent=True) == 50.0
    assert next_slot(times, 35.0, GovernorParams(cooldown=15.0, limit=0, window=120.0), urgent=True) == float("inf")


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.floats(0, 1000, allow_nan=False), max_size=8), st.floats(0, 1200, allow_nan=False),
       st.floats(0, 60), st.integers(1, 5), st.floats(1, 300))
def test_a_high_disclosure_never_waits_longer_than_a_medium_one_nor_past_the_cooldown(
    times: list[float], now: float, cooldown: float, limit: int, window: float
) -> None:
    params = GovernorParams(cooldown=cooldown, limit=limit, window=window)
    high = next_slot(times, now, params, urgent=True)
    assert now <= high <= next_slot(times, now, params)
    assert high <= max(now, max(times, default=now) + cooldown)


def test_a_high_disclosure_waits_only_for_the_cooldown_after_a_high_one_not_after_medium_ones() -> None:
    """Presence lines (medium) of sessions joining and leaving never hold a high line (issue 22)."""
    times = [0.0, 15.0, 30.0]  # medium disclosures: the window is full and the cooldown runs until 45
    assert next_slot(times, 35.0, EVENT, urgent=True, high=[]) == 35.0
    assert next_slot(times, 35.0, EVENT, urgent=True, high=[15.0]) == 35.0
    assert next_slot([*times, 34.0], 35.0, EVENT, urgent=True, high=[34.0]) == 49.0
    assert next_slot(times, 35.0, EVENT, high=[]) == 120.0  # a medium one still waits for the window
    g = Governor(EVENT)
    g.record(100.0)
    assert g.next_slot(101.0, urgent=True) == 101.0 and g.next_slot(101.0) == 115.0
    g.record(101.0, high=True)
    assert g.next_slot(102.0, urgent=True) == 116.0


def test_a_line_for_one_session_waits_only_for_the_lines_that_woke_that_session() -> None:
    g = Governor(EVENT)
    g.record(0.0, sessions=["a"])  # shown to session a only
    assert g.next_slot(1.0, sessions=["b"]) == 1.0  # b was not woken
    assert g.next_slot(1.0, sessions=["a"]) == 15.0
    assert g.next_slot(1.0) == 15.0  # a project-wide line wakes a too
    g.record(1.0, sessions=["b"])
    assert g.next_slot(2.0) == 16.0  # ... and b: it waits for every session's budget
    g.record(16.0)  # it woke both
    assert g.next_slot(17.0, sessions=["a"]) == 31.0 and g.next_slot(17.0, sessions=["b"]) == 31.0
