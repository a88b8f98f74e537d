"""One poll through the pipeline with real command sensors loaded from real files."""

from __future__ import annotations

import io
import sys

import trio
from daemon_rig import pipeline_rig

from attend.runtime import kinds
from attend.runtime.cadence import Cadence, CadenceParams
from attend.runtime.daemon import run
from attend.runtime.kinds import PollOutcome
from attend.runtime.observations import observations_from
from attend.runtime.pipeline import record_poll
from attend.runtime.store import Store, default_db_path, scope_for


def _setup(home, name: str = "items"):
    return pipeline_rig(home, name)


async def test_a_failed_poll_leaves_trigger_state_untouched(items_sensor, quiet_home) -> None:
    items = items_sensor()
    items.set([{"id": 1}, {"id": 2}])
    compiled, store, ctx = _setup(quiet_home)
    with store:
        record_poll(store, compiled, await kinds.poll(compiled, ctx), now=1.0)
        baseline = store.trigger_states("items")
        assert baseline and store.pending("items") == []

        items.fail(1)
        items.set([])
        failed = record_poll(store, compiled, await kinds.poll(compiled, ctx), now=2.0)
        assert failed.state == "exit" and "failing on purpose" in failed.message
        assert store.trigger_states("items") == baseline
        assert store.pending("items") == []
        assert store.status("items").state == "exit"

        items.fail(None)
        items.set([{"id": 1}, {"id": 2}, {"id": 3}])
        record_poll(store, compiled, await kinds.poll(compiled, ctx), now=3.0)
        assert [o.description for o in store.pending("items")] == ["new item 3"]
        assert store.status("items").state == "ok"


async def test_a_lines_output_keeps_valid_lines_and_records_the_invalid_ones(quiet_home) -> None:
    script = "print('2.5|build finished'); print('not a line'); print('1|tests ran')"
    quiet_home.write_user_sensor(
        "build",
        "spec: 1\nname: build\nkind: command\ncommand:\n"
        f"  argv: [{sys.executable!r}, -c, {script!r}]\n  output: lines\n",
    )
    compiled, store, ctx = _setup(quiet_home, "build")
    with store:
        record = record_poll(store, compiled, await kinds.poll(compiled, ctx), now=1.0)
        assert [(o.magnitude, o.description) for o in record.observations] == [(2.5, "build finished"), (1.0, "tests ran")]
        status = store.status("build")
        assert status.state == "ok"
        assert len(status.line_errors) == 1 and "not a line" in status.line_errors[0]
        assert "did not parse" in status.message


async def test_a_poll_schedules_the_next_one_in_the_same_transaction(items_sensor, quiet_home) -> None:
    items_sensor()
    compiled, store, ctx = _setup(quiet_home)
    params = CadenceParams.of(compiled.sensor.ir)
    with store:
        record = record_poll(
            store, compiled, await kinds.poll(compiled, ctx), now=100.0, cadence_params=params, cadence=Cadence.start(params)
        )
        status = store.status("items")
        assert status.last_poll == 100.0
        assert status.next_poll == 100.0 + record.cadence.interval


def test_an_observation_carries_the_mcp_server_and_the_fires_author() -> None:
    from attend.compiler import Fire

    fire = Fire("new-message", "C1/42", 3.0, "new message", {}, "ann")
    [obs] = observations_from([fire], PollOutcome(result={}, server="slack"), 5.0)
    assert obs.meta == {"server": "slack", "author": "ann"} and obs.key == "C1/42"
    [plain] = observations_from([Fire("t", 1, 1.0, "x", {}, None)], PollOutcome(result={}), 5.0)
    assert plain.meta == {}


async def test_run_reports_started_once_loaded_and_delivers(items_sensor, quiet_home, nursery) -> None:
    quiet_home.config_file.write_text("engagement: {absolute_refractory: 0}\n")
    items = items_sensor()
    out, err = io.StringIO(), io.StringIO()
    await nursery.start(lambda task_status: run(quiet_home.project, stdout=out, stderr=err, task_status=task_status))
    db = default_db_path(quiet_home.state / "attend")
    with trio.fail_after(30), Store(db, scope=scope_for(quiet_home.project)) as store:
        while store.status("items") is None or store.status("items").last_poll is None:
            await trio.sleep(0.1)
        items.set([{"id": 5}])
        while "new item 5" not in out.getvalue():
            await trio.sleep(0.1)
    assert out.getvalue() == "[attend sensor=items priority=medium] new item 5\n"
    nursery.cancel_scope.cancel()


async def test_a_poll_records_its_state_as_a_poll_state_over_a_state_recorded_at_load(items_sensor, quiet_home) -> None:
    items = items_sensor()
    items.fail(1)
    compiled, store, ctx = _setup(quiet_home)
    with store:
        store.update_status("items", state="invalid", message="items.yaml:4:11: error: [bad-duration] ...",
                            state_source="load")
        record_poll(store, compiled, await kinds.poll(compiled, ctx), now=1.0)
        status = store.status("items")
        assert (status.state, status.state_source) == ("exit", "poll")
        assert "failing on purpose" in status.message
