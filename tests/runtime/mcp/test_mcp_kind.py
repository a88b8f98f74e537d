"""The mcp kind's poll: the probe requirement, outcomes named after the server, failures that keep trigger state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio
from mcp_rig import Behind, mcp_sensor_yaml

from attend.compiler import CompiledSensor, compile_sensor
from attend.runtime.kinds import PollContext, PollOutcome, poll
from attend.runtime.mcp.probe import compare_results, probe_record
from attend.runtime.store import Store
from attend.spec import load_set

if TYPE_CHECKING:  # the pool imports the mcp SDK (~1 s): collection must not pay it
    from attend.runtime.mcp.pool import McpPool


def compiled_sensor(home: Any, name: str, text: str) -> CompiledSensor:
    home.write_user_sensor(name, text)
    sensor = load_set(home.project, home.env()).sensors[name]
    assert sensor.status == "ok", sensor.diagnostics
    return compile_sensor(sensor)


def record_probe(store: Store, compiled: CompiledSensor, *, confirmed: bool = True) -> None:
    """What a passed `attend sensors probe --confirm` stores (the probe itself is tested in test_mcp_probe)."""
    from attend.runtime.kinds.mcp import sensor_settings

    same = {"items": []}
    verdict = compare_results(compiled.triggers, same, same)
    store.put_probe(compiled.name, probe_record(compiled.name, sensor_settings(compiled), "x", same, same, verdict, confirmed,
                                                now=store.now()))


def test_a_probe_record_is_dated_by_the_stores_clock(home: Any, tmp_path: Any) -> None:
    from attend.runtime.kinds.mcp import sensor_settings
    from attend.runtime.mcp.probe import ProbeRun

    compiled = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", {"command": "true"}))
    same = {"items": []}
    run = ProbeRun(compiled, sensor_settings(compiled), "x", same, same, compare_results(compiled.triggers, same, same))
    with Store(tmp_path / "attend.db", clock=lambda: 1000.0) as store:
        assert run.record(store, confirmed=True)["time"] == "1970-01-01T00:16:40Z"


async def test_a_sensor_without_a_probe_record_is_unprobed_and_starts_no_server(
    home: Any, ctx: PollContext, pool: McpPool, behind: Behind, tmp_path: Any
) -> None:
    compiled = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    with Store(tmp_path / "attend.db") as store:
        ctx.store = store
        outcome = await poll(compiled, ctx)
        assert outcome.state == "unprobed"
        assert "attend sensors probe tracker" in outcome.message
        record_probe(store, compiled, confirmed=False)
        assert (await poll(compiled, ctx)).state == "unprobed"
    assert behind.starts() == []


async def test_a_probe_taken_with_other_args_is_void(
    home: Any, ctx: PollContext, pool: McpPool, behind: Behind, tmp_path: Any
) -> None:
    before = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    after = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", behind.inline("listing"), args={"limit": 5}))
    with Store(tmp_path / "attend.db") as store:
        ctx.store = store
        record_probe(store, before)
        assert (await poll(before, ctx)).ok
        voided = await poll(after, ctx)
    assert voided.state == "unprobed"
    assert "another server, tool or args" in voided.message


async def test_outcomes_name_the_server_for_notifications(
    home: Any, ctx: PollContext, pool: McpPool, behind: Behind, tmp_path: Any
) -> None:
    import json

    (ctx.project_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker-server": behind.inline("listing")}}))
    compiled = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", "tracker-server"))
    with Store(tmp_path / "attend.db") as store:
        ctx.store = store
        record_probe(store, compiled)
        outcome = await poll(compiled, ctx)
        gone = compiled_sensor(home, "other", mcp_sensor_yaml("other", "missing-server"))
        missing = await poll(gone, ctx)
    assert outcome.ok and outcome.server == "tracker-server"
    assert outcome.result == {"items": [{"id": "a", "title": "first"}]}
    assert missing.state == "invalid" and missing.server == "missing-server"


async def test_a_crash_is_a_recorded_state_and_recovery_neither_loses_nor_repeats_items(
    home: Any, ctx: PollContext, pool: McpPool, behind: Behind, tmp_path: Any
) -> None:
    pool.restart_delay = lambda failures: 0.3
    compiled = compiled_sensor(home, "tracker", mcp_sensor_yaml("tracker", behind.inline("crashing")))
    states: dict[str, Any] = {}

    async def poll_and_step() -> tuple[PollOutcome, list[str]]:
        # The runtime's rule: only a successful poll steps the triggers and replaces their state.
        nonlocal states
        outcome = await poll(compiled, ctx)
        if not outcome.ok:
            return outcome, []
        step = compiled.step(states, outcome.result)
        states = step.states
        return outcome, [fire.description for fire in step.fires]

    with Store(tmp_path / "attend.db") as store:
        ctx.store = store
        record_probe(store, compiled)
        assert (await poll_and_step())[1] == []  # the baseline
        behind.crash_marker.touch()
        crashed, fires = await poll_and_step()
        assert crashed.state == "exec_failed" and fires == []
        behind.crash_marker.unlink()
        behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
        await trio.sleep(0.4)
        recovered, fires = await poll_and_step()
    assert recovered.ok
    assert fires == ["new item b: second"]
    assert len(behind.starts()) == 2
