"""One line per finding through the real pipeline: a command sensor whose tiers cross in one poll."""

from __future__ import annotations

import json
import os
import sys

from attend.compiler import compile_sensor
from attend.runtime import kinds
from attend.runtime.kinds import PollContext
from attend.runtime.noise.history import render_history
from attend.runtime.noise.query import sensor_noise
from attend.runtime.pipeline import record_poll
from attend.runtime.store import Store, default_db_path, scope_for
from attend.spec import layer_paths, load_set

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
    paths = layer_paths(home.project, os.environ)
    compiled = compile_sensor(load_set(home.project, os.environ).sensors["use"])
    store = Store(default_db_path(paths.state_dir), scope=scope_for(home.project))
    ctx = PollContext(project_dir=home.project, env=dict(os.environ), paths=paths, store=store)
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
