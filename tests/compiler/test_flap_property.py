"""Property tests of flap detection: on random timelines of fires of one key, no window of `window`
seconds ever delivers more than `limit` plain fires; every fire is delivered or counted as held; a
flapping line always comes before its settled line; and a restart (state through JSON) changes nothing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import attend

LIMIT, WINDOW = 3, 100.0
DEFINITION = {"path": "$.n", "on": "changed", "description": "n={value}", "flap": {"limit": LIMIT, "window": WINDOW}}
GAPS = st.lists(st.integers(1, 80), min_size=1, max_size=30)


def _run(gaps: list[int], restart_at: int | None = None) -> tuple[list[tuple[float, str | None]], int]:
    trigger = attend.compile_trigger(DEFINITION, name="f")
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


@settings(derandomize=True, max_examples=300, deadline=None)
@given(GAPS)
def test_no_window_delivers_more_than_the_limit_and_every_fire_is_accounted_for(gaps: list[int]) -> None:
    out, held = _run(gaps)
    plain = [t for t, note in out if note is None]
    for t in plain:
        assert sum(1 for u in plain if t - WINDOW < u <= t) <= LIMIT
    assert len(plain) + held == len(gaps)
    notes = [note for _, note in out if note is not None]
    assert all(a != b for a, b in zip(notes, notes[1:])) and (not notes or notes[0] == "flapping")


@settings(derandomize=True, max_examples=300, deadline=None)
@given(GAPS, st.integers(0, 29))
def test_a_restart_changes_nothing(gaps: list[int], restart_at: int) -> None:
    assert _run(gaps, restart_at % len(gaps)) == _run(gaps)
