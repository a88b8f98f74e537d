"""Model check: on random poll sequences each `on` fires exactly the keys its set definition names.

The model is DESIGN.md's definition written with Python sets (S = keys whose item satisfies where),
first item of a key winning; the compiled trigger must fire those keys, in document order (removed and
leaves in the previous poll's order), poll after poll, with its state round-tripped through JSON.
Ids are JSON values of every type: integers (past a float's range too), floats, strings that read like
them, booleans, null, lists and mappings, so `1`, `1.0`, `"1"` and `true` are four items (the model keys
items by their canonical JSON text). Every state must be JSON data that reads back unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import attend
from property_examples import examples

SCALAR_ID = st.one_of(st.integers(0, 4), st.sampled_from([10**400, -(10**309), 2**53 + 1]), st.sampled_from([0.0, -0.0, 1.0, 1.5, 1e300]),
                      st.sampled_from(["0", "1", "2", "\x1f1", ""]), st.booleans(), st.none())
ID = st.one_of(SCALAR_ID, st.lists(SCALAR_ID, max_size=2),
               st.dictionaries(st.sampled_from(["a", "b", "1"]), SCALAR_ID, max_size=2))
ITEM = st.fixed_dictionaries({"id": ID, "state": st.sampled_from(["open", "closed"]),
                              "n": st.integers(0, 2)})
POLLS = st.lists(st.lists(ITEM, max_size=6), min_size=2, max_size=6)


def _items(poll: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    for item in poll:
        items.setdefault(_text(item["id"]), item)
    return items


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _open(item: dict[str, Any]) -> bool:
    return item["state"] == "open"


def _model(on: str, prev: dict[str, Any], now: dict[str, Any]) -> list[str]:
    if on == "added":
        return [k for k, v in now.items() if k not in prev and _open(v)]
    if on == "removed":
        return [k for k, v in prev.items() if k not in now and _open(v)]
    if on == "changed":
        return [k for k, v in now.items() if k in prev and prev[k] != v and _open(v)]
    s_prev = {k for k, v in prev.items() if _open(v)}
    s_now = {k for k, v in now.items() if _open(v)}
    if on == "enters":
        return [k for k in now if k in s_now - s_prev]
    return [k for k in prev if k in s_prev - s_now]


#: The trigger of each `on`, compiled once: a compiled trigger keeps nothing between steps (its state is what
#: `step` takes and returns), so sharing it across examples tests that too.
BY_ON = {on: attend.compile_trigger({"path": "$[*]", "key": "id", "on": on, "where": {"state": "open"}})
         for on in ("added", "removed", "changed", "enters", "leaves")}


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(["added", "removed", "changed", "enters", "leaves"]), POLLS)
def test_each_on_fires_exactly_the_keys_of_its_set_definition(on: str, polls: list[list[dict]]) -> None:
    trigger = BY_ON[on]
    state = None
    previous: dict[str, Any] | None = None
    for poll in polls:
        fires, state = trigger.step(state, poll)
        text = json.dumps(state, allow_nan=False)
        assert json.loads(text) == state
        state = json.loads(text)
        now = _items(poll)
        expected = [] if previous is None else _model(on, previous, now)
        assert [_text(f.key) for f in fires] == expected
        previous = now
