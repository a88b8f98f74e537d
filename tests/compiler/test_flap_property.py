"""Property tests of flap detection: on random timelines of fires of one key, no window of `window`
seconds ever delivers more than `limit` plain fires; every fire is delivered or counted as held; a
flapping line always comes before its settled line; and a restart (state through JSON) changes nothing.
Any stored flap map and any `now` (integers past a float's range, NaN, text) give a state that is JSON
data or a ValueError naming `now` (issue 28, item 19)."""

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
GAPS = st.lists(st.integers(1, 80), min_size=1, max_size=30)
#: The trigger every run starts with, compiled once: a compiled trigger keeps nothing between steps (its state
#: is what `step` takes and returns), so sharing it across examples tests that too. A restart compiles anew.
TRIGGER = attend.compile_trigger(DEFINITION, name="f")


def _run(gaps: list[int], restart_at: int | None = None) -> tuple[list[tuple[float, str | None]], int]:
    trigger = TRIGGER
    _, state = trigger.step(None, {"n": 0}, now=0)
    now, out, held = 0.0, [], 0
    for i, gap in enumerate(gaps):
        now += gap
        if i == restart_at:
            state = json.loads(json.dumps(state))
            trigger = attend.compile_trigger(DEFINITION, name="f")
        evaluation = trigger.evaluate(state, {"n": i + 1}, now=now)
        state = evaluation.state
        out += [(now, f.note) for f in evaluation.fires]
        held += sum(1 for o in evaluation.verdict["outcomes"] if o.get("reason") == "flapping")
    return out, held


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(GAPS)
def test_no_window_delivers_more_than_the_limit_and_every_fire_is_accounted_for(gaps: list[int]) -> None:
    out, held = _run(gaps)
    plain = [t for t, note in out if note is None]
    for t in plain:
        assert sum(1 for u in plain if t - WINDOW < u <= t) <= LIMIT
    assert len(plain) + held == len(gaps)
    notes = [note for _, note in out if note is not None]
    assert all(a != b for a, b in zip(notes, notes[1:])) and (not notes or notes[0] == "flapping")


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(GAPS, st.integers(0, 29))
def test_a_restart_changes_nothing(gaps: list[int], restart_at: int) -> None:
    assert _run(gaps, restart_at % len(gaps)) == _run(gaps)


#: A stored flap entry as a damaged store or a caller could give it (times from `hostile_times.TIME`).
ENTRY = st.fixed_dictionaries({"t": st.one_of(st.lists(TIME, max_size=4), TIME)},
                              optional={"since": TIME, "held": st.one_of(st.integers(-2, 5), TIME), "last": TIME})


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
        assert all(finite_seconds(entry[f]) for f in ("since", "last") if f in entry)
