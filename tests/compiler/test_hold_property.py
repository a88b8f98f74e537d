"""Property tests of `for:` (issue 12): on random timed poll sequences a `for:` trigger never fires
before DURATION of continuous holding, fires exactly once per episode that has held, and fires the same
whether or not the daemon restarts in the middle (the state serialised to JSON and read by a freshly
compiled trigger). Derandomized, so CI runs the same examples every time. Any stored state of the
right shape (times past a float's range, held keys without items) and any `now` give a state that is
JSON data or a ValueError naming `now` (issue 28, item 19)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile_times import TIME, finite_seconds

import attend
from property_examples import examples

HOLD = 60.0
#: One poll: seconds since the previous poll, and for each of three keys whether it is hot (None: absent).
POLL = st.tuples(st.integers(0, 90), st.lists(st.sampled_from([None, False, True]), min_size=3, max_size=3))
POLLS = st.lists(POLL, min_size=1, max_size=14)

DEFINITION = {"path": "$.items[*]", "key": "id", "on": "enters", "where": {"hot": True}, "for": HOLD,
              "description": "{id}", "flap": False}


def _result(hot: list[bool | None]) -> dict[str, Any]:
    return {"items": [{"id": f"k{i}", "hot": h} for i, h in enumerate(hot) if h is not None]}


def _model(polls: list[tuple[float, list[bool | None]]]) -> list[list[str]]:
    """Per poll, the keys that fire: inside continuously since entering at time t0, first poll with now − t0 ≥ HOLD."""
    entered: dict[str, float] = {}
    fired_episode: set[str] = set()
    out: list[list[str]] = []
    for index, (now, hot) in enumerate(polls):
        fires = []
        for i, h in enumerate(hot):
            key = f"k{i}"
            if h is True:
                if key not in entered:
                    if index == 0:  # the baseline: already inside, never entered
                        entered[key] = float("-inf")
                        fired_episode.add(key)
                    else:
                        entered[key] = now
                if key not in fired_episode and now - entered[key] >= HOLD:
                    fires.append(key)
                    fired_episode.add(key)
            else:
                entered.pop(key, None)
                fired_episode.discard(key)
        out.append(fires)
    return out


def _timeline(raw: list[tuple[int, list[bool | None]]]) -> list[tuple[float, list[bool | None]]]:
    now, out = 1000.0, []
    for dt, hot in raw:
        now += dt
        out.append((now, hot))
    return out


#: The trigger every run starts with, compiled once: a compiled trigger keeps nothing between steps (its state
#: is what `step` takes and returns), so sharing it across examples tests that too. A restart compiles anew.
TRIGGER = attend.compile_trigger(DEFINITION, name="hot")


def _run(polls: list[tuple[float, list[bool | None]]], restart_at: int | None) -> list[list[str]]:
    trigger = TRIGGER
    state: Any = None
    out = []
    for index, (now, hot) in enumerate(polls):
        if index == restart_at:
            state = json.loads(json.dumps(state))
            trigger = attend.compile_trigger(DEFINITION, name="hot")
        fires, state = trigger.step(state, _result(hot), now=now)
        out.append(sorted(f.key for f in fires))
    return out


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(POLLS)
def test_a_for_trigger_fires_exactly_when_the_condition_has_held_for_the_duration(raw) -> None:
    polls = _timeline(raw)
    assert _run(polls, None) == [sorted(f) for f in _model(polls)]


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(POLLS, st.integers(0, 13))
def test_a_restart_in_the_middle_changes_nothing(raw, restart_at) -> None:
    polls = _timeline(raw)
    assert _run(polls, restart_at % len(polls)) == _run(polls, None)


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(POLLS)
def test_no_fire_comes_before_the_duration_of_continuous_holding(raw) -> None:
    polls = _timeline(raw)
    fired = _run(polls, None)
    for index, keys in enumerate(fired):
        for key in keys:
            i = int(key[1:])
            # walk back: every poll within HOLD before this one (and the one that reached back past it) had it hot
            start = index
            while start > 0 and polls[start - 1][1][i] is True:
                start -= 1
            assert start > 0, "a key inside since the baseline never fires"
            assert polls[index][0] - polls[start][0] >= HOLD


KEY = st.sampled_from(["k0", "k1", "k2"])
VALUE = st.one_of(st.fixed_dictionaries({"id": KEY, "hot": st.booleans()}), st.none(), st.integers(),
                  st.sampled_from([10**400, 1.5, "x", [1, {"a": None}]]))
PENDING = st.dictionaries(KEY, st.fixed_dictionaries({"since": TIME, "value": VALUE}, optional={"previous": VALUE}),
                          max_size=3)
#: A stored state of the right shape as a damaged store or a caller could give it (times from
#: `hostile_times.TIME`, held keys without items).
STORED = st.fixed_dictionaries({"v": st.just(3), "items": st.dictionaries(KEY, VALUE, max_size=3),
                                "holding": st.lists(KEY, max_size=3, unique=True), "pending": PENDING})
ON = st.sampled_from(["added", "removed", "changed", "enters", "leaves"])
#: The trigger of each `on`, compiled once (see TRIGGER).
BY_ON = {on: attend.compile_trigger({**DEFINITION, "on": on}, name="hot")
         for on in ("added", "removed", "changed", "enters", "leaves")}


@settings(derandomize=True, max_examples=examples(400), deadline=None)
@given(ON, STORED, st.lists(st.sampled_from([None, False, True]), min_size=3, max_size=3), st.one_of(TIME, st.just(1e3)))
def test_any_stored_state_and_any_now_give_json_state_or_a_value_error_naming_now(
    on: str, stored: dict[str, Any], hot: list[bool | None], now: Any
) -> None:
    trigger = BY_ON[on]
    if not finite_seconds(now):
        with pytest.raises(ValueError, match=r"^`now` "):
            trigger.step(stored, _result(hot), now=now)
        return
    _, state = trigger.step(stored, _result(hot), now=now)
    text = json.dumps(state, allow_nan=False)
    assert json.loads(text) == state
    assert all(finite_seconds(entry["since"]) for entry in state.get("pending", {}).values())
    assert trigger.due(state) is None or finite_seconds(trigger.due(state))
