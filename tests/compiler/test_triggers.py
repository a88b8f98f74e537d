"""Trigger transition semantics (DESIGN.md, Trigger semantics): each `on`, baseline, initial, re-baselining."""

from __future__ import annotations

import json
from typing import Any

import pytest

import attend
from attend.compiler import CompiledTrigger


def _items(*pairs: tuple[int, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "state": s} for i, s in pairs]}


def _trigger(**fields: Any) -> CompiledTrigger:
    definition = {"path": "$.items[*]", "key": "id", "magnitude": 2.0, "description": "{id} {state}"}
    definition.update(fields)
    return attend.compile_trigger(definition, name="t")


def _run(trigger: CompiledTrigger, *results: Any) -> list[list[str]]:
    """Step through results from no state (the state round-trips through JSON like the store's)."""
    state = None
    out = []
    for result in results:
        fires, state = trigger.step(state, result)
        state = json.loads(json.dumps(state))
        out.append([f.description for f in fires])
    return out


def test_the_first_poll_is_a_baseline_and_fires_nothing() -> None:
    assert _run(_trigger(on="added"), _items((1, "open"), (2, "open"))) == [[]]


def test_added_fires_for_keys_present_now_and_not_before() -> None:
    got = _run(_trigger(on="added"), _items((1, "open")), _items((1, "open"), (2, "draft"), (3, "open")))
    assert got == [[], ["2 draft", "3 open"]]


def test_added_is_filtered_by_where_on_the_current_value() -> None:
    got = _run(_trigger(on="added", where={"state": "open"}), _items((1, "open")), _items((1, "x"), (2, "draft"), (3, "open")))
    assert got == [[], ["3 open"]]


def test_removed_fires_for_keys_gone_filtered_by_where_on_the_previous_value() -> None:
    trigger = _trigger(on="removed", where={"state": "open"}, description="{id} was {previous.state}")
    got = _run(trigger, _items((1, "open"), (2, "draft"), (3, "open")), _items((3, "closed")))
    assert got == [[], ["1 was open"]]


def test_changed_fires_for_the_same_key_with_a_different_value() -> None:
    trigger = _trigger(on="changed", description="{key}: {previous.state} → {state}")
    got = _run(trigger, _items((1, "a"), (2, "b")), _items((1, "a"), (2, "c"), (3, "new")))
    assert got == [[], ["2: b → c"]]


def test_changed_without_a_key_watches_the_value_as_a_whole() -> None:
    trigger = attend.compile_trigger({"path": "$.branch", "on": "changed", "description": "{previous} → {value}"})
    got = _run(trigger, {"branch": "main"}, {"branch": "main"}, {"branch": "dev"}, {"other": 1}, {"branch": "dev"})
    assert got == [[], [], ["main → dev"], [], [" → dev"]]


def test_enters_fires_when_where_starts_to_hold_and_for_a_new_item_that_satisfies_it() -> None:
    trigger = _trigger(on="enters", where={"state": "failing"})
    got = _run(trigger, _items((1, "ok"), (2, "failing")), _items((1, "failing"), (2, "failing"), (3, "failing"), (4, "ok")),
               _items((1, "failing"), (2, "failing"), (3, "failing")))
    assert got == [[], ["1 failing", "3 failing"], []]


def test_leaves_fires_when_where_stops_holding_and_for_a_removed_item_that_satisfied_it() -> None:
    trigger = _trigger(on="leaves", where={"state": "failing"}, description="{id} {state} (was {previous.state})")
    got = _run(trigger, _items((1, "failing"), (2, "failing"), (3, "ok")), _items((1, "ok"), (3, "ok")))
    assert got == [[], ["1 ok (was failing)", "2 failing (was failing)"]]


def test_enters_and_leaves_without_a_key_watch_the_value_crossing_the_condition() -> None:
    enters = attend.compile_trigger({"path": "$.current", "on": "enters", "where": {"wind": {"above": 40}},
                                     "description": "wind {wind}"})
    leaves = attend.compile_trigger({"path": "$.current", "on": "leaves", "where": {"wind": {"above": 40}},
                                     "description": "calm {wind}"})
    results = [{"current": {"wind": w}} for w in (50, 30, 45, 60, 20)]
    assert _run(enters, *results) == [[], [], ["wind 45"], [], []]
    assert _run(leaves, *results) == [[], ["calm 30"], [], [], ["calm 20"]]


def test_initial_fire_compares_the_first_poll_with_an_empty_previous_poll() -> None:
    assert _run(_trigger(on="added", initial="fire"), _items((1, "a")), _items((1, "a"))) == [["1 a"], []]


def test_a_test_evaluation_without_state_compares_with_an_empty_previous_poll() -> None:
    trigger = _trigger(on="added")
    evaluation = trigger.evaluate(None, _items((1, "a"), (2, "b")), test=True)
    assert [f.key for f in evaluation.fires] == [1, 2]
    assert evaluation.verdict["baseline"] is False
    baseline = trigger.evaluate(None, _items((1, "a")))
    assert baseline.fires == [] and baseline.verdict["baseline"] is True


def test_a_test_evaluation_with_state_compares_with_that_state() -> None:
    trigger = _trigger(on="added")
    _, state = trigger.step(None, _items((1, "a")))
    assert [f.key for f in trigger.evaluate(state, _items((1, "a"), (2, "b")), test=True).fires] == [2]


def test_step_is_pure_so_a_failed_poll_that_never_calls_it_leaves_state_untouched() -> None:
    trigger = _trigger(on="removed")
    _, state = trigger.step(None, _items((1, "a"), (2, "b")))
    snapshot = json.dumps(state, sort_keys=True)
    result = _items((1, "a"))
    trigger.step(state, result)
    assert json.dumps(state, sort_keys=True) == snapshot
    assert result == _items((1, "a"))
    # the poll after a failure compares with the last good state: nothing reads as removed then re-added
    fires, _ = trigger.step(state, _items((1, "a"), (2, "b")))
    assert fires == []


def test_state_is_versioned_json_and_an_unknown_version_is_a_baseline_with_a_warning() -> None:
    trigger = _trigger(on="added")
    _, state = trigger.step(None, _items((1, "a")))
    assert state["v"] == 3 and json.loads(json.dumps(state)) == state
    evaluation = trigger.evaluate({"v": 99, "items": {}}, _items((1, "a"), (2, "b")))
    assert evaluation.fires == []
    assert evaluation.verdict["baseline"] is True
    assert any("version 99" in w and "re-baselined" in w for w in evaluation.warnings)


def test_editing_what_is_compared_changes_the_definition_hash_so_state_rebaselines() -> None:
    base = _trigger(on="added", where={"state": "open"})
    assert _trigger(on="added", where={"state": "closed"}).definition_hash != base.definition_hash
    assert _trigger(on="added", where={"state": "open"}, path="$.other[*]").definition_hash != base.definition_hash
    assert _trigger(on="removed", where={"state": "open"}).definition_hash != base.definition_hash


def test_editing_magnitude_or_description_keeps_the_baseline() -> None:
    base = _trigger(on="added")
    assert _trigger(on="added", magnitude=9.0, description="other").definition_hash == base.definition_hash
    assert _trigger(on="added", path="$['items'][*]").definition_hash == base.definition_hash


def test_items_without_their_key_and_duplicate_keys_are_warned_about() -> None:
    trigger = _trigger(on="added", initial="fire")
    evaluation = trigger.evaluate(None, {"items": [{"id": 1, "state": "a"}, {"state": "b"}, {"id": 1, "state": "c"}]})
    assert [f.description for f in evaluation.fires] == ["1 a"]
    assert any("no `id` field" in w for w in evaluation.warnings)
    assert any("first item with each key wins" in w for w in evaluation.warnings)


def test_fire_key_is_the_key_value_as_in_the_json_and_dotted_keys_reach_inside_items() -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "ref.id", "on": "added", "initial": "fire"})
    fires, state = trigger.step(None, [{"ref": {"id": 7}}, {"ref": {"id": "x"}}, {"ref": {"id": [1, {"a": 2}]}}])
    assert [f.key for f in fires] == [7, "x", [1, {"a": 2}]]
    assert len(state["items"]) == 3 and json.loads(json.dumps(state)) == state


@pytest.mark.parametrize("field", ["id", "ref.id"])
def test_items_keyed_1_and_quoted_1_are_two_items_and_each_fires(field: str) -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": field, "on": "added", "description": "{key}"})
    wrap = (lambda v: {"id": v}) if field == "id" else (lambda v: {"ref": {"id": v}})
    _, state = trigger.step(None, [wrap(1)])
    fires, state = trigger.step(json.loads(json.dumps(state)), [wrap(1), wrap("1"), wrap(True), wrap(1.5)])
    assert [(f.key, f.description) for f in fires] == [("1", "1"), (True, "true"), (1.5, "1.5")]
    assert [type(f.key) for f in fires] == [str, bool, float]
    fires, _ = trigger.step(state, [wrap("1"), wrap(True), wrap(1.5), wrap(1)])
    assert fires == []


def test_a_string_key_that_looks_like_an_encoded_key_is_still_its_own_item() -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": "added", "initial": "fire"})
    fires, state = trigger.step(None, [{"id": 1}, {"id": "\x1f1"}, {"id": '\x1f"x"'}, {"id": "x"}])
    assert [f.key for f in fires] == [1, "\x1f1", '\x1f"x"', "x"]
    assert len(state["items"]) == 4


def test_a_version_2_state_with_stringified_keys_migrates_keeping_its_baseline() -> None:
    trigger = attend.compile_trigger({"path": "$[*]", "key": "id", "on": "enters", "where": {"open": True}})
    stored = {"v": 2, "items": {"1": {"id": 1, "open": True}, "x": {"id": "x", "open": False}}, "holding": ["1"]}
    evaluation = trigger.evaluate(stored, [{"id": 1, "open": True}, {"id": "x", "open": True}, {"id": "1", "open": True}])
    assert evaluation.verdict["baseline"] is False and evaluation.warnings == []
    assert [f.key for f in evaluation.fires] == ["x", "1"]  # int 1 held before; "x" and the string "1" enter


def test_a_fire_carries_magnitude_item_and_author() -> None:
    trigger = _trigger(on="added", initial="fire", author="user.login")
    (fire,) = trigger.step(None, {"items": [{"id": 1, "state": "a", "user": {"login": "ada"}}]})[0]
    assert (fire.trigger, fire.key, fire.magnitude, fire.author) == ("t", 1, 2.0, "ada")
    assert fire.item == {"id": 1, "state": "a", "user": {"login": "ada"}}


def test_the_verdict_explains_selection_conditions_and_the_transition() -> None:
    trigger = _trigger(on="enters", where={"state": "open", "id": {"above": 1}})
    _, state = trigger.step(None, _items((1, "open")))
    verdict = trigger.evaluate(state, _items((1, "open"), (2, "open"), (3, "closed"))).verdict
    assert verdict["selected"] == 3 and verdict["items"] == 3 and verdict["holding"] == 1
    assert verdict["conditions"] == [
        {"condition": 'state: {equals: "open"}', "held": 2, "of": 3},
        {"condition": "id: {above: 1}", "held": 2, "of": 3},
    ]
    assert verdict["fired"] == [2] and verdict["transition"].startswith("enters")


@pytest.mark.parametrize(
    ("definition", "field", "code"),
    [
        ({"on": "added"}, "key", "on-rules"),
        ({"on": "enters", "key": "id"}, "where", "on-rules"),
        ({"key": "id"}, "on", "on-rules"),  # the code a sensor file gets for the same trigger
        ({"on": "grows"}, "on", "bad-value"),
        ({"on": "changed", "magnitude": -1}, "magnitude", "bad-value"),
        ({"on": "changed", "path": "$.a["}, "path", "path-syntax"),
        ({"on": "changed", "description": "{a"}, "description", "template-syntax"),
        ({"on": "enters", "where": {"a..b": 1}}, "where", "pattern-syntax"),
        ({"on": "enters", "where": {"a": {"matches": "(unclosed"}}}, "where", "regex-syntax"),
        ({"on": "enters", "where": {"a": {"above": "ten"}}}, "where", "operator"),
        ({"on": "enters", "where": {"a": {"greater": 1}}}, "where", "operator"),
        ({"on": "enters", "where": {"a": {"in": "x"}}}, "where", "operator"),
        ({"on": "enters", "where": {"a": {"like": 3}}}, "where", "operator"),
        ({"on": "changed", "initial": "now"}, "initial", "bad-value"),
    ],
)
def test_an_invalid_trigger_raises_compile_error_naming_the_field(definition: dict, field: str, code: str) -> None:
    with pytest.raises(attend.CompileError) as info:
        attend.compile_trigger(definition)
    assert (info.value.field, info.value.code) == (field, code)


def test_a_compile_error_in_an_expression_carries_the_column_inside_it() -> None:
    with pytest.raises(attend.CompileError) as info:
        attend.compile_trigger({"on": "changed", "path": "$.items[*]x"})
    assert info.value.column == 11
    with pytest.raises(attend.CompileError) as info:
        attend.compile_trigger({"on": "enters", "where": {"a": {"matches": "ab(c"}}})
    assert info.value.column == 3 and "missing )" in info.value.message  # at the "(" left open


def test_the_public_api_example_of_the_design_works() -> None:
    trigger = attend.compile_trigger({"path": "$.items[*]", "key": "id", "on": "added",
                                      "magnitude": 3.0, "description": "new item {id}"}, name="new-item")
    fires, state = trigger.step(None, {"items": [{"id": "a"}]})
    assert fires == []
    fires, state = trigger.step(state, {"items": [{"id": "a"}, {"id": "b"}]})
    assert [(f.trigger, f.key, f.magnitude, f.description) for f in fires] == [("new-item", "b", 3.0, "new item b")]


def test_triggers_sharing_a_path_and_key_decide_the_same_as_when_stepped_alone() -> None:
    from attend.compiler.sensors import evaluate_triggers

    triggers = {
        "a": _trigger(on="added"),
        "c": _trigger(on="changed"),
        "e": _trigger(on="enters", where={"state": "open"}),
        "w": attend.compile_trigger({"path": "$.items[*]", "on": "changed"}, name="w"),
    }
    first = {"items": [{"id": 1, "state": "x"}, {"state": "no key"}]}
    second = {"items": [{"id": 1, "state": "open"}, {"id": 2, "state": "open"}, {"id": 2, "state": "dup"}]}
    step = evaluate_triggers(triggers, {}, first)
    step = evaluate_triggers(triggers, step.states, second)
    alone = []
    for t in triggers.values():
        _, state = t.step(None, first)
        alone += [(f.trigger, f.key, f.description) for f in t.step(state, second)[0]]
    assert [(f.trigger, f.key, f.description) for f in step.fires] == alone
    assert sum("first item with each key wins" in w for w in step.warnings) == 3
