"""The noise controls in trigger state (DESIGN.md, Noise controls): `for:`, `clear_where`, flap
detection and state version 2, each through the public `compile_trigger(...).step(state, result, now=)`
with explicit times, plus the docs' example sensor run by `attend test`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import attend
from attend.errors import CompileError

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _keyed(on: str = "added", **extra: Any) -> Any:
    definition = {"path": "$.items[*]", "key": "id", "on": on, "description": "{id}: {state}", **extra}
    return attend.compile_trigger(definition, name="t")


def _items(*pairs: tuple[int, str]) -> dict[str, Any]:
    return {"items": [{"id": i, "state": s} for i, s in pairs]}


def _run(trigger: Any, polls: list[tuple[float, Any]], state: Any = None) -> tuple[list[tuple[float, list[str]]], Any]:
    """Step through (now, result) polls with a JSON round trip each time; the descriptions fired per poll."""
    out = []
    for now, result in polls:
        fires, state = trigger.step(state, result, now=now)
        state = json.loads(json.dumps(state))
        out.append((now, [f.description for f in fires]))
    return out, state


# --------------------------------------------------------------------------------------------- for:

def test_an_added_key_fires_only_once_it_has_stayed_for_the_duration() -> None:
    trigger = _keyed("added", **{"for": "5m"})
    fired, state = _run(trigger, [(0, _items()), (10, _items((1, "a"))), (200, _items((1, "a"))),
                                  (309, _items((1, "a"))), (310, _items((1, "a"))), (900, _items((1, "a")))])
    assert [f for _, f in fired] == [[], [], [], [], ["1: a"], []]
    assert "pending" not in state


def test_an_added_key_removed_before_the_duration_fires_nothing() -> None:
    trigger = _keyed("added", **{"for": 60})
    fired, state = _run(trigger, [(0, _items()), (10, _items((1, "a"))), (30, _items()), (100, _items())])
    assert all(f == [] for _, f in fired) and "pending" not in state


def test_a_changed_value_must_stay_the_new_one_and_a_second_change_restarts_the_wait() -> None:
    trigger = _keyed("changed", **{"for": 60, "description": "{id}: {previous.state} → {state}"})
    fired, _ = _run(trigger, [(0, _items((1, "a"))), (10, _items((1, "b"))), (40, _items((1, "c"))),
                              (80, _items((1, "c"))), (100, _items((1, "c")))])
    assert [f for _, f in fired] == [[], [], [], [], ["1: b → c"]]


def test_a_removed_key_fires_with_its_last_value_once_it_has_stayed_away() -> None:
    trigger = _keyed("removed", **{"for": 30})
    fired, _ = _run(trigger, [(0, _items((1, "a"))), (5, _items()), (20, _items()), (35, _items())])
    assert [f for _, f in fired] == [[], [], [], ["1: a"]]


def test_enters_and_leaves_wait_while_inside_or_outside() -> None:
    enters = _keyed("enters", where={"state": "hot"}, **{"for": 60})
    leaves = _keyed("leaves", where={"state": "hot"}, **{"for": 60})
    polls = [(0, _items((1, "cold"))), (10, _items((1, "hot"))), (50, _items((1, "hot"))),
             (70, _items((1, "hot"))), (80, _items((1, "cold"))), (150, _items((1, "cold")))]
    assert [f for _, f in _run(enters, polls)[0]] == [[], [], [], ["1: hot"], [], []]
    assert [f for _, f in _run(leaves, polls)[0]] == [[], [], [], [], [], ["1: cold"]]


def test_a_keyless_changed_value_waits_for_the_duration() -> None:
    trigger = attend.compile_trigger({"path": "$.n", "on": "changed", "for": "1m", "description": "{previous} → {value}"})
    fired, _ = _run(trigger, [(0, {"n": 1}), (10, {"n": 2}), (60, {"n": 2}), (70, {"n": 2})])
    assert [f for _, f in fired] == [[], [], [], ["1 → 2"]]


def test_due_says_when_the_earliest_pending_transition_will_have_held() -> None:
    trigger = _keyed("added", **{"for": 300})
    _, state = trigger.step(None, _items(), now=0)
    assert trigger.due(state) is None
    _, state = trigger.step(state, _items((1, "a")), now=10)
    _, state = trigger.step(state, _items((1, "a"), (2, "b")), now=50)
    assert trigger.due(state) == 310


def test_a_bad_for_is_a_compile_error_naming_the_field() -> None:
    with pytest.raises(CompileError) as info:
        _keyed("added", **{"for": "soon"})
    assert info.value.field == "for"


def test_step_without_now_uses_the_wall_clock() -> None:
    trigger = _keyed("added", **{"for": 3600})
    _, state = trigger.step(None, _items())
    _, state = trigger.step(state, _items((1, "a")))
    import time

    assert abs(state["pending"]["\x1f1"]["since"] - time.time()) < 60  # key 1 (a number) in state


# --------------------------------------------------------------------------------------- clear_where

def test_clear_where_keeps_a_key_inside_until_it_clears() -> None:
    definition = {"path": "$.hosts[*]", "key": "h", "on": "enters", "where": {"cpu": {"above": 90}},
                  "clear_where": {"cpu": {"below": 70}}, "description": "{h} {cpu}"}
    enters = attend.compile_trigger(definition, name="hot")
    leaves = attend.compile_trigger({**definition, "on": "leaves"}, name="cool")
    polls = [(t, {"hosts": [{"h": "a", "cpu": cpu}]}) for t, cpu in enumerate([50, 95, 85, 95, 65, 85, 95])]
    assert [f for _, f in _run(enters, polls)[0]] == [[], ["a 95"], [], [], [], [], ["a 95"]]
    assert [f for _, f in _run(leaves, polls)[0]] == [[], [], [], [], ["a 65"], [], []]


def test_clear_where_on_a_keyless_value() -> None:
    trigger = attend.compile_trigger({"path": "$", "on": "enters", "where": {"cpu": {"above": 90}},
                                      "clear_where": {"cpu": {"below": 70}}, "description": "{cpu}"})
    fired, _ = _run(trigger, [(t, {"cpu": c}) for t, c in enumerate([50, 95, 85, 95, 65, 95])])
    assert [f for _, f in fired] == [[], ["95"], [], [], [], ["95"]]


@pytest.mark.parametrize("on", ["added", "removed", "changed"])
def test_clear_where_is_refused_outside_enters_and_leaves(on: str) -> None:
    with pytest.raises(CompileError) as info:
        _keyed(on, clear_where={"state": "x"})
    assert info.value.code == "on-rules" and "enters" in str(info.value)


def test_compile_check_refuses_clear_where_on_changed_and_explains(home) -> None:
    home.write_user_sensor("bad", "spec: 1\nname: bad\nkind: command\ncommand: {argv: [x]}\ntriggers:\n"
                                  "  t:\n    path: $.n\n    on: changed\n    clear_where: {n: {below: 3}}\n")
    done = home.attend("compile", "--check")
    assert done.returncode == 1
    assert re.search(r"bad\.yaml:9:5: error: \[on-rules\] .*`clear_where` is hysteresis for `on: enters`", done.stdout)


def test_editing_clear_where_rebaselines_but_for_and_flap_do_not() -> None:
    base = _keyed("enters", where={"state": "hot"})
    assert _keyed("enters", where={"state": "hot"}, clear_where={"state": "cold"}).definition_hash != base.definition_hash
    assert _keyed("enters", where={"state": "hot"}, **{"for": 60}, flap={"limit": 2}).definition_hash == base.definition_hash


# --------------------------------------------------------------------------------------------- flap

def _flapper(**flap: Any) -> Any:
    return attend.compile_trigger({"path": "$.n", "on": "changed", "description": "n={value}",
                                   **({"flap": flap} if flap else {})}, name="f")


def test_a_key_returning_more_than_the_limit_is_flapping_then_held_then_settles_stating_its_newest_value() -> None:
    trigger = _flapper(limit=2, window="10m")
    polls = [(t * 60, {"n": t % 2}) for t in range(6)] + [(5 * 60 + 600, {"n": 1})]  # 0 1 0 1 0 1, then quiet
    fired, state = _run(trigger, polls)
    texts = [f for _, f in fired]
    assert texts[:4] == [[], ["n=1"], ["n=0"], ["n=1"]]  # a move, then two returns: within the limit
    assert len(texts[4]) == 1 and "is flapping (3 returns to an earlier value within 10m)" in texts[4][0]
    assert texts[5] == []  # held
    assert texts[6] == ["f: the watched value settled (quiet for 10m): n=1 (2 changes held)"]
    assert "flap" not in state


def test_a_key_moving_to_new_values_is_progressing_never_flapping() -> None:
    trigger = _flapper(limit=1, window="10m")
    _, state = trigger.step(None, {"n": "a"}, now=0)
    for t, head in enumerate("bcdefg", start=1):  # six moves a minute apart, each to a value never had
        fires, state = trigger.step(state, {"n": head}, now=t * 60)
        assert [(f.description, f.note, f.progress) for f in fires] == [(f"n={head}", None, True)]
    fires, state = trigger.step(state, {"n": "f"}, now=420)  # back to a value it had: a return, not news
    assert [(f.note, f.progress) for f in fires] == [(None, False)]


def test_the_flap_notifications_carry_their_note_and_held_fires_show_in_the_verdict() -> None:
    trigger = _flapper(limit=1, window=100)
    _, state = trigger.step(None, {"n": 0}, now=0)
    fires, state = trigger.step(state, {"n": 1}, now=1)
    assert [f.note for f in fires] == [None]
    fires, state = trigger.step(state, {"n": 0}, now=2)
    assert [f.note for f in fires] == [None]
    fires, state = trigger.step(state, {"n": 1}, now=3)
    assert [f.note for f in fires] == ["flapping"]
    evaluation = trigger.evaluate(state, {"n": 0}, now=4)
    assert evaluation.fires == []
    assert evaluation.verdict["outcomes"] == [{"key": None, "outcome": "held", "reason": "flapping", "description": "n=0"}]


def test_flap_false_turns_detection_off_and_defaults_are_five_in_ten_minutes() -> None:
    off = attend.compile_trigger({"path": "$.n", "on": "changed", "flap": False}, name="off")
    fired, _ = _run(off, [(t, {"n": t % 2}) for t in range(10)])
    assert sum(len(f) for _, f in fired) == 9
    default = _flapper()
    assert (default.flap.limit, default.flap.window) == (5, 600.0)
    fired, _ = _run(default, [(t, {"n": t % 2}) for t in range(10)])
    # a move, five returns, the sixth return is the flapping notice; the rest are held
    assert [len(f) for _, f in fired] == [0, 1, 1, 1, 1, 1, 1, 1, 0, 0]
    assert "is flapping" in fired[7][1][0]


def test_a_sensor_flap_applies_to_its_triggers_and_a_trigger_overrides_it_field_by_field(home) -> None:
    from attend.compiler import compile_sensor
    from attend.spec import load_set

    home.write_user_sensor("s", "spec: 1\nname: s\nkind: command\ncommand: {argv: [x]}\nflap: {limit: 2, window: 1h}\n"
                                "triggers:\n  a: {path: $.a, on: changed}\n  b: {path: $.b, on: changed, flap: {limit: 7}}\n"
                                "  c: {path: $.c, on: changed, flap: false}\n")
    compiled = compile_sensor(load_set(home.project).sensors["s"])
    flaps = {name: (t.flap.limit, t.flap.window) for name, t in compiled.triggers.items()}
    assert flaps == {"a": (2, 3600.0), "b": (7, 3600.0), "c": (0, 0.0)}


# ------------------------------------------------------------------------------------------ state v2

def test_a_stored_version_1_state_migrates_and_keeps_its_baseline() -> None:
    trigger = _keyed("added")
    v1 = {"v": 1, "items": {"1": {"id": 1, "state": "a"}}}
    evaluation = trigger.evaluate(v1, _items((1, "a"), (2, "b")), now=0)
    assert [f.key for f in evaluation.fires] == [2] and evaluation.warnings == []
    assert evaluation.state["v"] == 3 and v1 == {"v": 1, "items": {"1": {"id": 1, "state": "a"}}}


@pytest.mark.parametrize("bad", [
    "text", [1, 2], {"v": 2}, {"v": 2, "items": []}, {"v": 2, "items": {}, "holding": [[1]]},
    # item 1's key (a number) as a version-3 state writes it
    {"v": 3, "items": {}, "pending": {"\x1f1": {"since": "yesterday"}}}, {"v": 3, "items": {}, "flap": {"\x1f1": {"t": "x"}}},
    {"v": 4, "items": {}},
])
def test_a_bad_stored_state_never_crashes_the_trigger_rebaselines_with_a_message(bad: Any) -> None:
    trigger = _keyed("enters", where={"state": "hot"}, **{"for": 10})
    evaluation = trigger.evaluate(bad, _items((1, "hot")), now=5)
    assert evaluation.fires == [] and evaluation.verdict["baseline"] is True
    assert len(evaluation.warnings) == 1 and "re-baselined" in evaluation.warnings[0]
    fires, _ = trigger.step(evaluation.state, _items((1, "hot"), (2, "hot")), now=6)
    assert fires == []  # 2 entered: pending


def test_a_keyless_state_given_to_a_keyed_trigger_rebaselines_with_a_message() -> None:
    keyless = attend.compile_trigger({"path": "$.n", "on": "changed"})
    _, state = keyless.step(None, {"n": 1}, now=0)
    evaluation = _keyed("added").evaluate(state, _items((1, "a")), now=1)
    assert evaluation.fires == [] and "not written by a keyed trigger" in evaluation.warnings[0]


# -------------------------------------------------------------------------------------------- docs

def _doc_blocks(doc: Path, kind: str) -> list[tuple[str, str]]:
    block = re.compile(r"<!-- check: (\S+)(?: (\S+))? -->\n```(\w+)\n(.*?)\n```", re.S)
    return [(arg, body) for k, arg, _, body in block.findall(doc.read_text()) if k == kind]


def test_the_noise_example_in_triggers_md_checks_clean_and_passes_its_test_file(home, tmp_path) -> None:
    folder = tmp_path / "doc"
    folder.mkdir()
    for kind in ("sensor", "test"):
        for name, body in _doc_blocks(DOCS / "triggers.md", kind):
            (folder / name).write_text(body + "\n")
    assert (folder / "cpu-hot.test.yaml").exists()
    done = home.attend("compile", "--check", "--strict", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    done = home.attend("test", str(folder / "cpu-hot.test.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "cpu-hot, 7 polls" in done.stdout


def test_a_test_file_at_that_goes_backwards_is_a_positioned_error(home) -> None:
    path = home.write_user_sensor("n", "spec: 1\nname: n\nkind: command\ncommand: {argv: [x]}\n"
                                       "triggers:\n  t: {path: $.n, on: changed, for: 1m}\n")
    test = path.with_name("n.test.yaml")
    test.write_text("polls:\n  - {at: 5m, result: {n: 1}}\n  - {at: 1m, result: {n: 2}}\n")
    done = home.attend("test", str(test))
    assert done.returncode == 1
    assert "n.test.yaml:3:" in done.stdout and "before the previous poll" in done.stdout


def test_polls_without_at_are_one_interval_apart(home) -> None:
    path = home.write_user_sensor("n", "spec: 1\nname: n\nkind: command\ninterval: 1m\ncommand: {argv: [x]}\n"
                                       "triggers:\n  t: {path: $.n, on: changed, for: 2m, description: 'n={value}'}\n")
    test = path.with_name("n.test.yaml")
    test.write_text("polls:\n  - result: {n: 1}\n  - result: {n: 2}\n  - result: {n: 2}\n"
                    "  - result: {n: 2}\n    expect: [{description: n=2}]\n")
    done = home.attend("test", str(test))
    assert done.returncode == 0, done.stdout


def test_the_noise_commands_in_authoring_md_run(home) -> None:
    import shlex

    section = (DOCS / "authoring.md").read_text().split("### Noise controls", 1)[1].split("\n### ", 1)[0]
    commands = [shlex.split(line[2:], comments=True) for line in section.splitlines() if line.startswith("$ attend ")]
    assert [c[:3] for c in commands] == [["attend", "sensors", "shelve"], ["attend", "sensors", "history"]]
    trigger = _doc_blocks(DOCS / "authoring.md", "trigger")[-1][1]
    body = "\n".join("    " + line for line in trigger.splitlines())
    home.write_user_sensor("disks", f"spec: 1\nname: disks\nkind: command\ncommand: {{argv: [df]}}\ntriggers:\n  full:\n{body}\n")
    for argv in commands:
        done = home.attend(*argv[1:])
        assert done.returncode == 0, done.stderr


def test_settings_set_writes_each_noise_field_and_the_sensor_stays_valid(home) -> None:
    home.write_user_sensor("w", "spec: 1\nname: w\nkind: command\ncommand: {argv: [x]}\n"
                                "triggers:\n  t: {path: $.n, on: enters, where: {n: {above: 3}}}\n")
    for key, value in [("triggers.t.for", "5m"), ("triggers.t.clear_where.n.below", "2"),
                       ("triggers.t.flap.limit", "3"), ("flap.window", "1h")]:
        done = home.attend("settings", "set", f"attend.sensors.w.{key}", value)
        assert done.returncode == 0, done.stderr
    got = json.loads(home.attend("settings", "get", "attend.sensors.w.triggers.t.for", "--json").stdout)
    assert got["value"] == "5m" and got["layer"] == "user"
    refused = home.attend("settings", "set", "attend.sensors.w.triggers.t.for", "soon")
    assert refused.returncode == 3
    from attend.compiler import compile_sensor
    from attend.spec import load_set

    (trigger,) = compile_sensor(load_set(home.project).sensors["w"]).triggers.values()
    assert (trigger.hold, trigger.flap.limit, trigger.flap.window) == (300.0, 3, 3600.0)
    assert trigger.clear is not None


def test_the_json_schema_describes_every_noise_field(home) -> None:
    schema = json.loads(home.attend("spec", "schema").stdout)
    text = json.dumps(schema)
    assert '"for": {"description": "fire only once the transition has held this long' in text
    assert '"clear_where": {"description": "hysteresis for enters/leaves' in text
    assert text.count('"flap": {"description": "flap detection') == 2  # the sensor's and each trigger's


def test_explain_shows_for_clear_where_and_flap_with_where_the_flap_came_from(home) -> None:
    home.write_user_sensor("cpu", "spec: 1\nname: cpu\nkind: command\ncommand: {argv: [x]}\nflap: {window: 30m}\n"
                                  "triggers:\n  hot:\n    path: $\n    on: enters\n    where: {cpu: {above: 90}}\n"
                                  "    clear_where: {cpu: {below: 70}}\n    for: 2m\n"
                                  "  plain: {path: $.n, on: changed, flap: false}\n")
    text = home.attend("explain", "cpu").stdout
    assert "for:         120s: a transition waits in pending until it has held that long: the item still inside where" in text
    assert "clear_where: all of:" in text and "below 70" in text
    assert "flap:        more than 5 returns of one key to a value it had within 1800s is flapping" in text and "(the sensor's flap)" in text
    assert "flap:        off  (the trigger's flap)" in text
    plan = json.loads(home.attend("explain", "cpu/hot", "--json").stdout)["triggers"][0]["plan"]
    assert plan["noise"]["for"]["seconds"] == 120.0 and plan["noise"]["flap"]["window"] == 1800.0
    assert "pending" in plan["state"]["shape"]


def test_a_fire_marked_as_progress_keeps_every_other_field() -> None:
    import dataclasses

    from attend.compiler.triggers import Fire

    fire = Fire(trigger="moved", key="k", magnitude=2.0, description="d", item={"a": 1}, author="ann", note=None,
                previous={"a": 0})
    marked = fire.as_progress()
    assert marked.progress and not fire.progress
    assert {f.name: getattr(marked, f.name) for f in dataclasses.fields(Fire) if f.name != "progress"} == {
        f.name: getattr(fire, f.name) for f in dataclasses.fields(Fire) if f.name != "progress"}
