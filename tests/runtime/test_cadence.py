"""Cadence: start slow, halve on observations, decay back after quiet polls, back off on failures."""

from __future__ import annotations

from attend.runtime.cadence import FAILURE_BACKOFF_LIMIT, Cadence, CadenceParams, next_cadence
from attend.spec.reader import read_sensor

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
    p = CadenceParams.of(read_sensor({"interval": 300.0, "min_interval": 60.0, "decay_threshold": 4}))
    assert p == CadenceParams(300.0, 60.0, 4)


async def test_polls_follow_the_cadence_over_virtual_hours(autojump_clock) -> None:
    """A sensor that sees changes on its first three polls, then nothing, on trio's virtual clock."""
    import trio

    from attend.runtime.cadence import poll_on_cadence

    params = CadenceParams(interval=60.0, min_interval=10.0, decay_threshold=2)
    start = trio.current_time()
    times: list[float] = []

    async def poll(cadence: Cadence) -> Cadence:
        times.append(trio.current_time() - start)
        return next_cadence(params, cadence, observed=len(times) <= 3)

    with trio.move_on_after(3600):
        await poll_on_cadence(params, poll)
    gaps = [round(b - a, 2) for a, b in zip(times, times[1:])]
    assert times[0] == 0.0
    # Halving on changes; two quiet polls at 10 s (decay_threshold); then × 1.5 up to 60 s.
    assert gaps[:9] == [30.0, 15.0, 10.0, 10.0, 10.0, 15.0, 22.5, 33.75, 50.62]
    assert set(gaps[9:]) == {60.0}
    assert len(gaps) > 60


async def test_failures_back_off_on_the_virtual_clock(autojump_clock) -> None:
    import trio

    from attend.runtime.cadence import poll_on_cadence

    params = CadenceParams(interval=10.0, min_interval=5.0, decay_threshold=1)
    times: list[float] = []

    async def poll(cadence: Cadence) -> Cadence:
        times.append(trio.current_time())
        return next_cadence(params, cadence, observed=False, failed=True)

    with trio.move_on_after(600):
        await poll_on_cadence(params, poll)
    gaps = [round(b - a, 2) for a, b in zip(times, times[1:])]
    assert gaps[:4] == [10.0, 15.0, 22.5, 33.75]
    assert max(gaps) == 40.0


async def test_an_interval_of_zero_in_a_file_does_not_spin_polls_back_to_back(autojump_clock) -> None:
    """`interval: 0` validates (spec), but polling with no gap at all would spin a core on spawns."""
    import trio

    from attend.runtime.cadence import MIN_POLL_GAP, poll_on_cadence

    params = CadenceParams.of(read_sensor({"interval": 0.0, "min_interval": 0.0, "decay_threshold": 0}))
    assert (params.interval, params.min_interval) == (MIN_POLL_GAP, MIN_POLL_GAP)
    polls = 0

    async def poll(cadence: Cadence) -> Cadence:
        nonlocal polls
        polls += 1
        return next_cadence(params, cadence, observed=polls % 2 == 0)

    with trio.move_on_after(10):
        await poll_on_cadence(params, poll)
    assert polls <= 10 / MIN_POLL_GAP + 1


async def _polls_with_wakes(params: CadenceParams, wakes_at: list[float], *, poll_takes: float = 0.0,
                            run_for: float = 600.0) -> list[float]:
    """Poll times (virtual seconds from start) of a quiet sensor whose wake signal is set at `wakes_at`."""
    import trio

    from attend.runtime.cadence import poll_on_cadence
    from attend.runtime.watching.wake import WakeSignal

    wake = WakeSignal()
    start = trio.current_time()
    times: list[float] = []

    async def poll(cadence: Cadence) -> Cadence:
        times.append(round(trio.current_time() - start, 3))
        await trio.sleep(poll_takes)
        return next_cadence(params, cadence, observed=False)

    async def changes() -> None:
        for at in wakes_at:
            await trio.sleep_until(start + at)
            wake.set()

    with trio.move_on_after(run_for):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(changes)
            await poll_on_cadence(params, poll, wake=wake)
    return times


async def test_a_wake_polls_at_once_when_min_interval_has_passed(autojump_clock) -> None:
    params = CadenceParams(interval=60.0, min_interval=5.0, decay_threshold=3)
    times = await _polls_with_wakes(params, [20.0], run_for=100.0)
    assert times == [0.0, 20.0, 80.0]  # the interval counts again from the woken poll


async def test_a_burst_that_goes_on_after_the_poll_it_woke_is_one_more_poll_after_min_interval(autojump_clock) -> None:
    """The watcher hands a burst over once it has been quiet for a step; what the burst writes after that
    (the next 4.9 s here) is one more poll, once `min_interval` has passed, not one poll per change."""
    params = CadenceParams(interval=60.0, min_interval=5.0, decay_threshold=3)
    times = await _polls_with_wakes(params, [20.0, 20.05, 21.0, 24.9], run_for=40.0)
    assert times == [0.0, 20.0, 25.0]


async def test_a_burst_of_changes_inside_min_interval_is_one_poll_at_its_end(autojump_clock) -> None:
    params = CadenceParams(interval=60.0, min_interval=5.0, decay_threshold=3)
    times = await _polls_with_wakes(params, [1.0, 1.5, 2.0, 4.9], run_for=30.0)
    assert times == [0.0, 5.0]


async def test_a_change_during_a_poll_polls_once_more_after_it(autojump_clock) -> None:
    params = CadenceParams(interval=60.0, min_interval=5.0, decay_threshold=3)
    # The first poll runs from 0 to 2 s; a change at 1 s may not have been seen by it.
    times = await _polls_with_wakes(params, [1.0], poll_takes=2.0, run_for=30.0)
    assert times == [0.0, 7.0]  # min_interval after the poll ended


async def test_without_changes_the_interval_stays_the_fallback(autojump_clock) -> None:
    params = CadenceParams(interval=60.0, min_interval=5.0, decay_threshold=3)
    assert await _polls_with_wakes(params, [], run_for=130.0) == [0.0, 60.0, 120.0]


async def test_a_pending_for_brings_the_next_poll_forward_to_when_it_is_due(autojump_clock) -> None:
    """A trigger whose `for:` will have held 25 s after a poll gets its next poll then, not a minute later."""
    import trio

    from attend.runtime.cadence import poll_on_cadence

    params = CadenceParams(interval=60.0, min_interval=10.0, decay_threshold=2)
    start = trio.current_time()
    times: list[float] = []
    due_at: list[float | None] = [start + 25.0]

    async def poll(cadence: Cadence) -> Cadence:
        now = trio.current_time()
        times.append(now - start)
        if due_at[0] is not None and now >= due_at[0]:
            due_at[0] = None  # fired: nothing pending any more
        return next_cadence(params, cadence, observed=False)

    def until_due() -> float | None:
        return None if due_at[0] is None else due_at[0] - trio.current_time()

    with trio.move_on_after(150):
        await poll_on_cadence(params, poll, until_due=until_due)
    assert times[:4] == [0.0, 25.0, 85.0, 145.0]


def test_backoff_grows_by_its_factor_per_step_and_stops_at_its_limit() -> None:
    from attend.runtime.cadence import backoff

    assert [backoff(1.0, n, factor=2.0, limit=300.0) for n in range(10)] == [
        1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 300.0]
    assert backoff(10.0, -3, factor=1.5, limit=40.0) == 10.0
    assert backoff(60.0, 1, factor=1.5, limit=60.0) == 60.0
    assert backoff(20.0, 1, factor=1.5, limit=240.0) == 30.0

