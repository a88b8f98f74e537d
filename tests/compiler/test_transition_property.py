"""Model check: on random poll sequences each `on` fires exactly the keys its set definition names.

The model is DESIGN.md's definition written with Python sets (S = keys whose item satisfies where),
first item of a key winning; the compiled trigger must fire those keys, in document order (removed and
leaves in the previous poll's order), poll after poll, with its state round-tripped through JSON.
Ids mix integers, strings that read like them and booleans: keys are JSON values, so `1`, `"1"` and
`true` are three items (the model keys items by their JSON text).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import attend

ID = st.one_of(st.integers(0, 4), st.sampled_from(["0", "1", "2", "\x1f1"]), st.booleans())
ITEM = st.fixed_dictionaries({"id": ID, "state": st.sampled_from(["open", "closed"]),
                              "n": st.integers(0, 2)})
POLLS = st.lists(st.lists(ITEM, max_size=6), min_size=2, max_size=6)


def _items(poll: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    for item in poll:
        items.setdefault(json.dumps(item["id"]), item)
    return items


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


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["added", "removed", "changed", "enters", "leaves"]), POLLS)
def test_each_on_fires_exactly_the_keys_of_its_set_definition(on: str, polls: list[list[dict]]) -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": on, "where": {"state": "open"}})
    state = None
    previous: dict[str, Any] | None = None
    for poll in polls:
        fires, state = trigger.step(state, poll)
        state = json.loads(json.dumps(state))
        now = _items(poll)
        expected = [] if previous is None else _model(on, previous, now)
        assert [json.dumps(f.key) for f in fires] == expected
        previous = now
