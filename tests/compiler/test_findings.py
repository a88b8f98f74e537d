"""One line per finding: `supersedes` and folding (compiler/findings.py), pure, with explicit times."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attend.compiler.findings import SAME_LINE, SUPERSEDED, fold_fires, supersede
from attend.compiler.triggers import Fire
from property_examples import examples

NOW = 1_700_000_000.0


def fire(trigger: str, key: object, magnitude: float, description: str, author: str | None = None) -> Fire:
    return Fire(trigger, key, magnitude, description, None, author)


def test_a_firing_trigger_drops_the_fires_it_supersedes_and_says_by_whom() -> None:
    fires = [fire("half", "s/50", 1.0, "85%"), fire("two-thirds", "s/65", 2.0, "85%"), fire("high", "s/83", 3.0, "85%"),
             fire("climb", None, 2.0, "climbing")]
    relation = {"two-thirds": ("half",), "high": ("half", "two-thirds")}
    kept, held = supersede(fires, relation)
    assert [f.trigger for f in kept] == ["high", "climb"]
    assert [(f.trigger, why) for f, why in held] == [
        ("half", {"reason": SUPERSEDED, "by": "two-thirds"}), ("two-thirds", {"reason": SUPERSEDED, "by": "high"})]


def test_a_superseding_trigger_that_did_not_fire_drops_nothing() -> None:
    fires = [fire("half", "s/50", 1.0, "52%")]
    assert supersede(fires, {"high": ("half",)}) == (fires, [])


def test_identical_lines_of_one_poll_fold_into_one_at_the_highest_magnitude() -> None:
    fires = [fire("two-thirds", "s/65", 2.0, "context 85%"), fire("climb", None, 2.0, "climbing"),
             fire("high", "s/83", 3.0, "context 85%")]
    kept, held = fold_fires(fires)
    assert [(f.trigger, f.magnitude) for f in kept] == [("high", 3.0), ("climb", 2.0)]
    assert [(f.trigger, why) for f, why in held] == [("two-thirds", {"reason": SAME_LINE, "by": "high"})]


def test_lines_of_different_authors_or_of_different_keys_on_a_keyed_line_stay_apart() -> None:
    fires = [fire("said", "m1", 3.0, "done", "a"), fire("said", "m2", 3.0, "done", "b")]
    assert fold_fires(fires)[0] == fires
    same_author = [fire("t", "k1", 1.0, "x"), fire("t", "k2", 1.0, "x")]
    assert fold_fires(same_author, by_key=True)[0] == same_author
    assert len(fold_fires(same_author)[0]) == 1


_FIRES = st.lists(
    st.builds(fire, st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 3), st.sampled_from([0.5, 1.0, 2.0, 5.0]),
              st.sampled_from(["x", "y", "z"]), st.sampled_from([None, "p", "q"])),
    max_size=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(_FIRES)
def test_folding_keeps_one_fire_per_line_at_its_highest_magnitude_and_accounts_for_every_fire(fires: list[Fire]) -> None:
    kept, held = fold_fires(fires)
    lines = {(f.description, f.author) for f in fires}
    assert len(kept) == len(lines) and {(f.description, f.author) for f in kept} == lines
    for f in kept:
        assert f.magnitude == max(g.magnitude for g in fires if (g.description, g.author) == (f.description, f.author))
    assert len(kept) + len(held) == len(fires)
    assert all(why["reason"] == SAME_LINE for _, why in held)


@settings(max_examples=examples(200), deadline=None)
@given(_FIRES, st.dictionaries(st.sampled_from(["b", "c", "d"]), st.lists(st.sampled_from(["a", "b"]), max_size=2),
                               max_size=3))
def test_supersede_drops_exactly_the_fires_of_triggers_a_firing_trigger_names(fires: list[Fire], relation: dict) -> None:
    relation = {k: tuple(t for t in v if t < k) for k, v in relation.items()}  # acyclic, as the spec requires
    kept, held = supersede(fires, relation)
    fired = {f.trigger for f in fires}
    dropped = {t for k in fired for t in relation.get(k, ())}
    assert [f for f in fires if f.trigger not in dropped] == kept
    assert [f for f, _ in held] == [f for f in fires if f.trigger in dropped]
    assert all(why["by"] in fired and why["reason"] == SUPERSEDED for _, why in held)


def test_the_shipped_context_tiers_make_a_jump_one_line() -> None:
    from attend.compiler.sensors import compile_sensor
    from attend.spec import load_set

    sensor = load_set(Path.cwd(), {"HOME": "/nonexistent", "XDG_CONFIG_HOME": "/nonexistent"}).sensors["context"]
    compiled = compile_sensor(sensor)

    def poll(percent: float, tiers: list[int]) -> dict:
        return {"session": "s", "model": "m", "tokens": int(percent * 2000), "window": 200000, "percent": percent,
                "climb_per_minute": 0.0,
                "reached": [{"id": f"s/0/{t}", "tier": t, "percent": percent, "tokens": int(percent * 2000),
                             "window": 200000} for t in tiers]}

    states = compiled.step(None, poll(55.0, [50]), now=NOW).states
    step = compiled.step(states, poll(85.0, [50, 65, 83]), now=NOW + 30)
    assert [(f.trigger, f.description, f.magnitude) for f in step.fires] == [
        ("high", "context 85.0% used (170000 of 200000 tokens)", 3.0)]
