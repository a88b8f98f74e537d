"""One line per finding through the real pipeline: a command sensor whose tiers cross in one poll."""

from __future__ import annotations

import json
import sys

from daemon_rig import pipeline_rig

from attend.runtime import kinds
from attend.runtime.noise.history import render_history
from attend.runtime.noise.query import sensor_noise
from attend.runtime.pipeline import record_poll

TIER = {"path": "$.reached[*]", "key": "id", "on": "added", "description": "use {percent}%"}


def tiers_sensor(home) -> tuple[object, object, object, object]:
    data = home.root / "use.json"
    doc = {
        "spec": 1, "name": "use", "kind": "command", "threshold": 0,
        "command": {"argv": [sys.executable, "-c", "import sys; print(open(sys.argv[1]).read())", str(data)]},
        "triggers": {
            "low": {**TIER, "where": {"tier": 50}, "magnitude": 1.0},
            "mid": {**TIER, "where": {"tier": 65}, "magnitude": 2.0, "supersedes": ["low"]},
            "top": {**TIER, "where": {"tier": 83}, "magnitude": 3.0, "supersedes": ["low", "mid"]},
            "echo": {**TIER, "where": {"tier": 83}, "magnitude": 1.0},
        },
    }
    home.write_user_sensor("use", json.dumps(doc))
    compiled, store, ctx = pipeline_rig(home, "use")
    return data, compiled, store, ctx


def reached(percent: float, tiers: list[int]) -> str:
    return json.dumps({"reached": [{"id": t, "tier": t, "percent": percent} for t in tiers]})


async def test_a_jump_across_tiers_is_one_observation_and_history_says_what_it_stands_for(quiet_home) -> None:
    data, compiled, store, ctx = tiers_sensor(quiet_home)
    with store:
        data.write_text(reached(55, [50]))
        record_poll(store, compiled, await kinds.poll(compiled, ctx), now=1000.0)
        data.write_text(reached(85, [50, 65, 83]))
        record = record_poll(store, compiled, await kinds.poll(compiled, ctx), now=1030.0)
        assert [(o.trigger, o.description, o.magnitude) for o in record.observations] == [("top", "use 85%", 3.0)]
        text = render_history(sensor_noise(store, "use", now=1031.0, limit=1))
    assert "key 65: held: superseded by top" in text
    assert "key 83: held: same line (another fire of the same poll renders the same line" in text
    assert "key 83: queued" in text


def test_a_fire_delivered_late_keeps_how_long_it_was_held_and_why() -> None:
    from attend.runtime.noise.history import settle_outcomes

    trace = {"time": 1000.0, "state": "ok", "message": "", "triggers": [
        {"trigger": "t", "selected": 1, "transition": "added", "outcomes": [
            {"key": 1, "outcome": "queued", "description": "deploy finished"}]}]}
    assert settle_outcomes(trace, fired=False, reason="absolute refractory", now=1010.0)
    assert settle_outcomes(trace, fired=False, reason="relative refractory", now=1100.0)
    assert not settle_outcomes(trace, fired=True, reason="", now=1272.0)
    text = render_history({"sensor": "s", "shelves": [], "flapping": [], "history": [trace]})
    assert '    key 1: fired after 4m32s held: relative refractory  "deploy finished"' in text


def test_a_fire_delivered_at_once_reads_fired() -> None:
    from attend.runtime.noise.history import settle_outcomes

    trace = {"time": 1000.0, "state": "ok", "message": "", "triggers": [
        {"trigger": "t", "selected": 1, "transition": "added", "outcomes": [{"key": 1, "outcome": "queued"}]}]}
    settle_outcomes(trace, fired=True, reason="", now=1000.5)
    assert render_history({"sensor": "s", "shelves": [], "flapping": [], "history": [trace]}).splitlines()[-1] == \
        "    key 1: fired"
