"""Engagement (ADR-123): threshold, absolute refractory, relative refractory."""

from __future__ import annotations

import pytest

from attend.runtime.engagement import EngagementParams, multiplier, readiness, record_fire

P = EngagementParams()


def ready(total: float, fires: list[float], now: float, *, threshold: float = 2.0, lane: str = "event"):
    return readiness(total=total, count=1, threshold=threshold, fires=fires, now=now, params=P, lane=lane)


def test_an_accumulator_below_threshold_waits_for_more_observations() -> None:
    r = ready(1.5, [], 0.0)
    assert not r.ready and r.retry_at is None


def test_an_accumulator_at_threshold_is_ready() -> None:
    assert ready(2.0, [], 0.0).ready


def test_nothing_pending_is_never_ready_even_at_threshold_zero() -> None:
    r = readiness(total=0.0, count=0, threshold=0.0, fires=[], now=0.0, params=P)
    assert not r.ready
    assert readiness(total=0.0, count=1, threshold=0.0, fires=[], now=0.0, params=P).ready


def test_absolute_refractory_holds_everything_for_60_seconds() -> None:
    r = ready(100.0, [1000.0], 1059.0)
    assert not r.ready and r.retry_at == 1060.0
    assert ready(100.0, [1000.0], 1060.0).ready


def test_the_relative_refractory_needs_three_live_fires() -> None:
    assert multiplier([0.0, 100.0], 200.0, P) == 1.0
    m = multiplier([0.0, 100.0, 200.0], 260.0, P)
    assert m == pytest.approx(1 + 1.25 * 0.5 ** (60 / 395))


def test_the_relative_multiplier_halves_its_excess_every_395_seconds() -> None:
    fires = [0.0, 100.0, 200.0]
    assert multiplier(fires, 200.0 + 395.0, P) == pytest.approx(1 + 1.25 / 2)


def test_fires_older_than_the_live_window_no_longer_count() -> None:
    fires = [0.0, 100.0, 200.0]
    assert multiplier(fires, P.live_window + 1.0, P) == 1.0


def test_a_held_accumulator_knows_when_the_raised_threshold_falls_to_it() -> None:
    fires = [0.0, 100.0, 200.0]
    now = 300.0
    total = 3.0  # threshold 2 × multiplier; ready once the multiplier falls to 1.5
    r = ready(total, fires, now)
    assert not r.ready and r.reason == "relative refractory"
    assert multiplier(fires, r.retry_at, P) == pytest.approx(1.5)
    assert ready(total, fires, r.retry_at + 1e-6).ready


def test_a_strong_observation_breaks_through_the_relative_refractory() -> None:
    assert ready(5.0, [0.0, 100.0, 200.0], 261.0).ready


def test_the_message_lane_skips_threshold_and_refractory() -> None:
    assert ready(0.1, [1000.0], 1001.0, lane="message").ready


def test_record_fire_keeps_only_live_fires() -> None:
    assert record_fire([0.0, 5000.0], 6000.0, P) == [5000.0, 6000.0]


def test_engagement_parameters_come_from_config() -> None:
    p = EngagementParams.from_config({"absolute_refractory": "5s", "relative_after": 2})
    assert (p.absolute_refractory, p.relative_after, p.relative_peak) == (5.0, 2, 2.25)
    with pytest.raises(ValueError):
        EngagementParams.from_config({"absolute_refractory": "soon"})


@pytest.mark.parametrize(
    "given",
    [
        {"relative_after": 0},  # no live fire would be indexed as the last one
        {"relative_half_life": 0},  # the multiplier divides by it
        {"live_window": 0},
        {"relative_peak": 0.5},  # a multiplier below 1 would lower the threshold after a burst
        {"relative_peak": float("nan")},
        {"relative_peak": "high"},
    ],
)
def test_engagement_parameters_the_model_cannot_use_are_refused_with_a_value_error(given) -> None:
    with pytest.raises(ValueError, match=next(iter(given))):
        EngagementParams.from_config(given)


def test_the_smallest_usable_engagement_parameters_are_accepted() -> None:
    params = EngagementParams.from_config(
        {"relative_after": 1, "relative_half_life": 0.5, "live_window": 1, "relative_peak": 1, "absolute_refractory": 0}
    )
    assert readiness(total=1.0, count=1, threshold=1.0, fires=[99.0], now=100.0, params=params).ready
