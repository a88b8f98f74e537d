"""Cadence: start slow, halve on observations, decay back after quiet polls, back off on failures."""

from __future__ import annotations

from attend.runtime.cadence import FAILURE_BACKOFF_LIMIT, Cadence, CadenceParams, next_cadence

PARAMS = CadenceParams(interval=60.0, min_interval=10.0, decay_threshold=3)


def test_a_sensor_starts_at_its_slowest_interval() -> None:
    assert Cadence.start(PARAMS).interval == 60.0


def test_polls_with_observations_halve_the_interval_down_to_min_interval() -> None:
    c = Cadence.start(PARAMS)
    seen = []
    for _ in range(4):
        c = next_cadence(PARAMS, c, observed=True)
        seen.append(c.interval)
    assert seen == [30.0, 15.0, 10.0, 10.0]


def test_quiet_polls_slow_down_only_after_decay_threshold_and_never_above_interval() -> None:
    c = Cadence(interval=10.0)
    seen = []
    for _ in range(9):
        c = next_cadence(PARAMS, c, observed=False)
        seen.append(c.interval)
    assert seen[:3] == [10.0, 10.0, 10.0]
    assert seen[3:6] == [15.0, 22.5, 33.75]
    assert seen[-1] == 60.0 and max(seen) == 60.0


def test_an_observation_resets_the_quiet_count() -> None:
    c = Cadence(interval=20.0, quiet_polls=5)
    c = next_cadence(PARAMS, c, observed=True)
    assert c.quiet_polls == 0 and c.interval == 10.0


def test_repeated_failures_back_off_to_a_bounded_multiple_of_interval() -> None:
    c = Cadence.start(PARAMS)
    for _ in range(30):
        c = next_cadence(PARAMS, c, observed=False, failed=True)
    assert c.interval == 60.0 * FAILURE_BACKOFF_LIMIT
    assert c.failures == 30


def test_the_first_good_poll_after_failures_returns_within_interval() -> None:
    c = Cadence(interval=240.0, failures=9, quiet_polls=9)
    c = next_cadence(PARAMS, c, observed=False)
    assert c.interval == 60.0 and c.failures == 0


def test_cadence_params_come_from_the_sensor_document() -> None:
    p = CadenceParams.from_sensor_data({"interval": 300.0, "min_interval": 60.0, "decay_threshold": 4})
    assert p == CadenceParams(300.0, 60.0, 4)
