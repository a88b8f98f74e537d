"""The public API's contract (issue 28, item 19): `compile_trigger(...).step(state, result, now=)` gives a
state that is JSON data, or raises ValueError naming the argument it cannot take (`now`, `result`). A
stored state it cannot read (not JSON data, a time past a float's range, a key held without an item)
is never an error: the trigger re-baselines, as it does for any unreadable stored state."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import attend
from attend.compiler import ops

FLAP = {"path": "$.n", "on": "changed", "flap": {"limit": 2, "window": 100}}
HOLD = {"path": "$[*]", "key": "id", "on": "added", "for": 60}


def _json_state(state: Any) -> Any:
    """The state through JSON as the store keeps it; fails for anything JSON cannot hold unchanged."""
    text = json.dumps(state, allow_nan=False)
    assert json.loads(text) == state
    return json.loads(text)


def _flap_state() -> dict[str, Any]:
    trigger = attend.compile_trigger(FLAP)
    _, state = trigger.step(None, {"n": 0}, now=0)
    _, state = trigger.step(state, {"n": 1}, now=1)
    return _json_state(state)


@pytest.mark.parametrize("now", [10**400, -(10**400), math.nan, math.inf, -math.inf, "5", True, [1]],
                         ids=["huge", "minus-huge", "nan", "inf", "minus-inf", "text", "bool", "list"])
@pytest.mark.parametrize("definition", [FLAP, HOLD], ids=["flap", "for"])
def test_a_now_that_is_not_a_finite_number_is_a_value_error_naming_now(definition: dict, now: Any) -> None:
    trigger = attend.compile_trigger(definition)
    state = _flap_state() if definition is FLAP else _json_state(trigger.step(None, [], now=0)[1])
    before = json.dumps(state)
    with pytest.raises(ValueError, match=r"^`now` "):
        trigger.step(state, {"n": 2} if definition is FLAP else [{"id": 1}], now=now)
    assert json.dumps(state) == before


def test_a_now_past_float_range_is_refused_but_a_large_finite_one_is_kept() -> None:
    trigger = attend.compile_trigger(FLAP)
    fires, state = trigger.step(_flap_state(), {"n": 2}, now=10**300)
    assert [f.note for f in fires] == [None]
    _json_state(state)


@pytest.mark.parametrize("since", [10**400, -(10**400), "soon", True, None, [1]])
def test_a_stored_since_that_is_not_a_time_is_unreadable_state_and_re_baselines(since: Any) -> None:
    trigger = attend.compile_trigger(HOLD)
    _, state = trigger.step(None, [], now=0)
    _, state = trigger.step(state, [{"id": 1}], now=1)
    state = _json_state(state)
    (entry,) = state["pending"].values()
    entry["since"] = since
    evaluation = trigger.evaluate(state, [{"id": 1}], now=100.0)
    assert evaluation.fires == [] and "pending" not in evaluation.state
    assert any("a stored time is not a finite number" in w and "re-baselined" in w for w in evaluation.warnings)
    assert trigger.due(state) is None
    _json_state(evaluation.state)


@pytest.mark.parametrize("entry", [
    {"t": [10**400]},
    {"t": [1], "since": 1, "held": 1, "last": 10**400},
    {"t": [1], "since": 10**400, "held": 1, "last": 1},
    {"t": [1], "since": 1, "held": "2", "last": 1},
    {"t": [1], "since": 1, "held": -1, "last": 1},
    {"t": "12"},
], ids=["t", "last", "since", "held-text", "held-negative", "t-text"])
def test_a_stored_flap_entry_that_this_trigger_could_not_have_written_re_baselines(entry: dict) -> None:
    trigger = attend.compile_trigger(FLAP)
    state = {**_flap_state(), "flap": {"": entry}}
    evaluation = trigger.evaluate(state, {"n": 2}, now=50.0)
    assert evaluation.fires == [] and "flap" not in evaluation.state
    assert any("re-baselined" in w for w in evaluation.warnings)
    _json_state(evaluation.state)


def _nested(depth: int) -> Any:
    node: Any = None
    for _ in range(depth):
        node = [node]
    return node


@pytest.mark.parametrize(("result", "reason"), [
    ([{"id": 1, "x": _nested(5000)}], "nested deeper than 256 levels"),
    ([{"id": 1, "x": {1: "a", "b": 2}}], "a mapping key must be a string, not int 1"),
    ([{"id": 1, "x": {(1, 2): 3}}], "a mapping key must be a string, not tuple"),
    ([{"id": 1, "x": {1, 2}}], "a set is not a JSON value"),
    ([{"id": (1, 2)}], "a tuple is not a JSON value"),
    ([{"id": 1, "x": math.nan}], "is not a JSON number"),
    ([{"id": 10**5000}], "more than 4300 digits"),
    ([{"id": 1, "x": ops.MISSING}], "is not a JSON value"),
], ids=["deep", "int-key", "tuple-key", "set", "tuple", "nan", "long-int", "sentinel"])
def test_a_result_that_is_not_json_data_is_a_value_error_naming_result(result: Any, reason: str) -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": "added"})
    with pytest.raises(ValueError, match=r"^`result` is not JSON data: ") as raised:
        trigger.step(None, result, now=0)
    assert reason in str(raised.value)


@pytest.mark.parametrize("junk", [{1, 2}, ops.MISSING, (1, 2), math.nan])
def test_a_stored_state_that_is_not_json_data_re_baselines(junk: Any) -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": "changed", "flap": {"limit": 1, "window": 60}})
    stored = {"v": 3, "items": {"a": {"id": "a", "x": junk}}, "flap": {"a": {"t": [1.0]}}}
    fires, state = trigger.step(stored, [{"id": "a", "x": 2}], now=5)
    assert fires == [] and state == {"v": 3, "items": {"a": {"id": "a", "x": 2}}}
    stored = {"v": 3, "items": {"a": {"id": "a"}}, 1: "mixed key types"}
    assert trigger.step(stored, [{"id": "a"}], now=5) == ([], {"v": 3, "items": {"a": {"id": "a"}}})


def test_a_held_key_without_an_item_never_puts_a_missing_sentinel_in_pending() -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": "leaves", "where": {"hot": True}, "for": 60})
    evaluation = trigger.evaluate({"v": 3, "items": {}, "holding": ["a"]}, [], now=5)
    assert evaluation.fires == [] and evaluation.state == {"v": 3, "items": {}, "holding": []}
    assert any("names a key without an item" in w for w in evaluation.warnings)
