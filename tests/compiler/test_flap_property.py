"""Property tests of flap detection: on random timelines of one key's values, no window of `window`
seconds delivers more than `limit` plain fires that return the key to a value it had within the window;
a key that only ever moves to new values is never held, each of its fires marked progress; every fire
is delivered or counted as held; a flapping line always comes before its settled line, which states
the newest value; and a restart (state through JSON) changes nothing. Any stored flap map and any
`now` (integers past a float's range, NaN, text) give a state that is JSON data or a ValueError naming
`now` (issue 28, item 19)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile_times import TIME, finite_seconds

import attend
from property_examples import examples

LIMIT, WINDOW = 3, 100.0
DEFINITION = {"path": "$.n", "on": "changed", "description": "n={value}", "flap": {"limit": LIMIT, "window": WINDOW}}
#: One poll: seconds since the previous one, and the key's value (a small alphabet, so values come back).
POLLS = st.lists(st.tuples(st.integers(1, 80), st.integers(0, 3)), min_size=1, max_size=30)
#: The trigger every run starts with, compiled once: a compiled trigger keeps nothing between steps (its state
#: is what `step` takes and returns), so sharing it across examples tests that too. A restart compiles anew.
TRIGGER = attend.compile_trigger(DEFINITION, name="f")


def _run(polls: list[tuple[int, int]], restart_at: int | None = None) -> tuple[list[Any], int]:
    """Each poll's fires as (time, value, note, progress, description), and how many fires were held."""
    trigger = TRIGGER
    _, state = trigger.step(None, {"n": -1}, now=0)
    now, out, held = 0.0, [], 0
    for i, (gap, value) in enumerate(polls):
        now += gap
        if i == restart_at:
            state = json.loads(json.dumps(state))
            trigger = attend.compile_trigger(DEFINITION, name="f")
        evaluation = trigger.evaluate(state, {"n": value}, now=now)
        state = evaluation.state
        out += [(now, value, f.note, f.progress, f.description) for f in evaluation.fires]
        held += sum(1 for o in evaluation.verdict["outcomes"] if o.get("reason") == "flapping")
    return out, held


def _timeline(polls: list[tuple[int, int]]) -> list[tuple[float, int]]:
    """(time, value) from the baseline on, one entry per change of value."""
    now, values = 0.0, [(0.0, -1)]
    for gap, value in polls:
        now += gap
        if value != values[-1][1]:
            values.append((now, value))
    return values


def _returns(timeline: list[tuple[float, int]]) -> set[float]:
    """The times of the changes that return the key to a value it held at some moment within the window
    before (the model: a value held from one change until the next)."""
    out = set()
    for i, (t, value) in enumerate(timeline):
        if any(v == value and timeline[j + 1][0] > t - WINDOW for j, (_, v) in enumerate(timeline[:i])):
            out.add(t)
    return out


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(POLLS)
def test_no_window_delivers_more_than_the_limit_of_returns_and_every_fire_is_accounted_for(polls) -> None:
    out, held = _run(polls)
    timeline = _timeline(polls)
    returns = _returns(timeline)
    plain = [(t, progress) for t, _, note, progress, _ in out if note is None]
    returned = [t for t, _ in plain if t in returns]
    for t in returned:
        assert sum(1 for u in returned if t - WINDOW < u <= t) <= LIMIT
    assert all(progress == (t not in returns) for t, progress in plain)  # a move to a new value is progress
    assert len(plain) + held == len(timeline) - 1
    notes = [(note, text) for _, _, note, _, text in out if note is not None]
    assert all(a[0] != b[0] for a, b in zip(notes, notes[1:])) and (not notes or notes[0][0] == "flapping")
    for at, _, note, _, text in out:
        if note == "settled":  # it states the newest value: the last change before it
            newest = [v for t, v in timeline if t < at][-1]
            assert f": n={newest} (" in text


@settings(derandomize=True, max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(1, 80), min_size=1, max_size=30))
def test_a_key_moving_to_new_values_is_never_held(gaps: list[int]) -> None:
    out, held = _run([(gap, 10 + i) for i, gap in enumerate(gaps)])
    assert held == 0 and [(note, progress) for _, _, note, progress, _ in out] == [(None, True)] * len(gaps)


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(POLLS, st.integers(0, 29))
def test_a_restart_changes_nothing(polls, restart_at: int) -> None:
    assert _run(polls, restart_at % len(polls)) == _run(polls)


#: A stored flap entry as a damaged store or a caller could give it (times from `hostile_times.TIME`).
ENTRY = st.fixed_dictionaries({"t": st.one_of(st.lists(TIME, max_size=4), TIME)},
                              optional={"since": TIME, "held": st.one_of(st.integers(-2, 5), TIME), "last": TIME,
                                        "seen": st.one_of(st.dictionaries(st.text(max_size=3), TIME, max_size=3), TIME),
                                        "text": st.one_of(st.text(max_size=3), TIME)})


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(["", "\x1f1", "a"]), ENTRY, max_size=3), TIME, st.integers(0, 3))
def test_any_stored_flap_map_and_any_now_give_json_state_or_a_value_error_naming_now(
    entries: dict[str, Any], now: Any, n: int
) -> None:
    trigger = TRIGGER
    stored = {"v": 3, "present": True, "value": 0, "holding": True, "flap": entries}
    if not finite_seconds(now):
        with pytest.raises(ValueError, match=r"^`now` "):
            trigger.step(stored, {"n": n}, now=now)
        return
    _, state = trigger.step(stored, {"n": n}, now=now)
    text = json.dumps(state, allow_nan=False)
    assert json.loads(text) == state
    for entry in state.get("flap", {}).values():
        assert all(finite_seconds(t) for t in entry["t"])
        assert all(finite_seconds(t) for t in entry.get("seen", {}).values())
        assert all(finite_seconds(entry[f]) for f in ("since", "last") if f in entry)
