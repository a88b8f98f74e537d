"""What `attend sensors`, `sensors poll` and the sensors tab report: each sensor joined with its live status, one real poll and its verdicts.

Decisions (docs/runtime.md has the user's view):
- `sensors [list]` loads every layer itself (a daemon need not run) and joins each sensor with its live
  status from the store. A sensor whose file stopped validating shows `invalid` with the error, and
  `running_last_good: true` when a daemon still runs its last good version.
- `sensors poll NAME` runs one real poll through the same code as the daemon (`pipeline.record_poll`),
  against the stored trigger state; a dry run writes nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.runnable import compiled_or_error, first_error, runnable
from attend.runtime.store import open_project_store
from attend.runtime.store.sensor_status import LOAD_STATE, POLL_STATE
from attend.text import iso_time

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from attend.compiler import CompiledSensor, Fire
    from attend.runtime.kinds import PollContext, PollOutcome
    from attend.runtime.sessions.status import ProjectSessions
    from attend.runtime.store import SensorStatus, Store
    from attend.runtime.store.shelves import ShelfJSON
    from attend.spec.loaded import LayerPaths, MergedSensor, SensorSet

    class SessionJson(TypedDict):
        """A live session of the project, as a row lists it."""

        session: str
        conduit: str
        stream_stopped: float | None

    class SensorRow(TypedDict):
        """One sensor as `attend sensors list --json` shows it (`sensor_row`; `sensor_rows` adds the rest)."""

        name: str
        kind: str | None
        layer: str
        file: str | None
        enabled: bool
        description: str
        state: str
        message: str
        since: str | None
        last_poll: str | None
        next_poll: str | None
        interval: float | None
        lane: str
        lane_note: str
        overrides: list[str]
        requires: list[str]
        line_errors: list[str]
        failures: int
        running_last_good: bool
        wake_error: str
        shelves: NotRequired[list[ShelfJSON]]
        flapping: NotRequired[list[dict[str, Any]]]
        daemon_running: NotRequired[bool]
        polling_session: NotRequired[str | None]
        attached_sessions: NotRequired[list[str]]
        hooks_sessions: NotRequired[list[str]]
        sessions: NotRequired[list[SessionJson]]

#: The state `attend sensors` shows for a valid sensor turned off with `enabled: false` (it never polls).
DISABLED_STATE = "disabled"


def _overrides(sensor: MergedSensor) -> list[str]:
    """Fields whose value relaxes a safety default, shown beside the sensor."""
    out = []
    fields = sensor.ir
    if fields.mcp is not None and fields.mcp.allow_unannotated:
        out.append("mcp.allow_unannotated")
    if fields.lane_exception:
        out.append("lane_exception")
    return out


def probe_state(compiled: CompiledSensor | None, record: dict[str, Any] | None) -> str | None:
    """An mcp sensor's `unprobed` message when its probe record would not let it poll now, else None.

    What the kind checks before each poll (`mcp.policy.probe_problem`), so a listing shows what the sensor
    would do now: `unprobed` before any daemon polled it, and no longer once a probe recorded it.
    """
    if compiled is None or compiled.kind != "mcp":
        return None
    from attend.runtime.mcp.policy import probe_problem, unprobed_message
    from attend.runtime.mcp.servers import McpSettings

    settings = McpSettings(compiled.sensor.ir.mcp)
    problem = probe_problem(record, settings.fingerprint)
    return None if problem is None else unprobed_message(compiled.name, problem, settings.resource is not None)


def sensor_row(
    sensor: MergedSensor, status: SensorStatus | None, probe: dict[str, Any] | None = None,
    compiled: tuple[CompiledSensor | None, str] | None = None, *, daemon_running: bool = False,
) -> SensorRow:
    """One sensor as `attend sensors list --json` shows it.

    The spec-level states (`invalid`, `refused` and their message) come from `sensor`, loaded from the
    files and config as they are now; the runtime ones (the last poll's state, failures, fires) from
    `status`. A state the daemon recorded at load (`state_source: load`) counts only while a daemon
    runs (it is that daemon's view, and it reloads at once on a change); with none running, a sensor
    now valid and trusted shows what a sensor that never polled shows.

    Args:
        sensor: the loaded sensor.
        status: its status row from the store (None: it never polled).
        probe: an mcp sensor's stored probe record.
        compiled: `compiled_or_error(sensor)` when the caller already has it (the sensors tab keeps it
            between refreshes); computed here otherwise.
        daemon_running: a daemon runs for the project.
    """
    if status is not None and status.state_source == LOAD_STATE and not daemon_running:
        status = _without_load_state(status)
    if compiled is None:
        compiled = compiled_or_error(sensor) if runnable(sensor) else (None, "")
    built, compile_error = compiled
    row: SensorRow = {
        "name": sensor.name,
        "kind": sensor.kind,
        "layer": sensor.layer,
        "file": str(sensor.file) if sensor.file else None,
        "enabled": sensor.enabled,
        "description": sensor.ir.description,
        "state": "ok",
        "message": "",
        "since": None,
        "last_poll": None,
        "next_poll": None,
        "interval": sensor.ir.interval,
        "lane": sensor.ir.lane,
        "lane_note": "",
        "overrides": _overrides(sensor),
        "requires": list(sensor.ir.requires),
        "line_errors": [],
        "failures": 0,
        "running_last_good": False,
        "wake_error": "",
    }
    if status is not None:
        row["state"], row["message"] = status.state, status.message
        row["since"], row["last_poll"] = iso_time(status.since), iso_time(status.last_poll)
        row["next_poll"] = iso_time(status.next_poll) if sensor.enabled else None
        row["line_errors"], row["failures"], row["wake_error"] = status.line_errors, status.failures, status.wake_error
        if status.interval is not None:
            row["interval"] = status.interval
    if built is not None:
        row["lane"], row["lane_note"] = built.lane, built.lane_note or ""
    if not runnable(sensor) or compile_error:
        row["state"], row["message"] = "invalid" if compile_error else sensor.status, compile_error or first_error(sensor)
        row["running_last_good"] = bool(status is not None and status.file_error)
        row["wake_error"] = ""
        if not row["running_last_good"]:
            row["next_poll"] = None
    elif not sensor.enabled:
        # Not `ok`: a sensor that never polls would otherwise read as healthy (its stored status, if
        # any, is from before it was turned off).
        row["state"] = DISABLED_STATE
        row["message"] = f"enabled: false; turn it on with `attend settings set attend.sensors.{sensor.name}.enabled true`"
        row["next_poll"], row["wake_error"] = None, ""
    else:
        unprobed = probe_state(built, probe)
        if unprobed is not None:
            row["state"], row["message"] = "unprobed", unprobed
        elif row["state"] == "unprobed":
            row["state"], row["message"] = "ok", "probed; the next poll calls the tool"  # the probe cleared it
    return row


def _without_load_state(status: SensorStatus) -> SensorStatus:
    """`status` with the state recorded at load dropped: the runtime facts (polls, failures) stay."""
    from attend.records import replace

    return replace(status, state="ok", message="", since=None, state_source=POLL_STATE)


def sensor_rows(
    sensor_set: SensorSet, store: Store, project_dir: str | Path,
    compiled: dict[str, tuple[CompiledSensor | None, str]] | None = None, sessions: ProjectSessions | None = None,
) -> list[SensorRow]:
    """Every sensor of `sensor_set` joined with its live status, as `attend sensors list --json` shows it.

    Args:
        sensor_set: the loaded sensors.
        store: the open project store (its status rows are read once).
        project_dir: the project, whose daemon (if one runs) polls the sensors.
        compiled: each sensor's `compiled_or_error` when the caller keeps them (the sensors tab).
        sessions: the project's sessions (`session_status.project_sessions`) when the caller has them.
    """
    from attend.runtime.noise.query import sensor_noise
    from attend.runtime.sessions.status import project_sessions

    statuses = store.statuses()
    noise = {name: sensor_noise(store, name, limit=1) for name in sensor_set.sensors}
    if sessions is None:
        from attend.runtime.sessions.handover import conduits

        sessions = project_sessions(project_dir, store=store, conduits=conduits(project_dir))
    probes = {name: store.get_probe(name) for name, s in sensor_set.sensors.items() if s.kind == "mcp"}
    daemon = sessions.lock_pid
    compiled = compiled or {}
    rows = [_guarded_row(s, statuses.get(name), probes.get(name), compiled.get(name), daemon_running=daemon is not None)
            for name, s in sorted(sensor_set.sensors.items())]
    for row in rows:
        row["shelves"] = noise[row["name"]]["shelves"]
        row["flapping"] = noise[row["name"]]["flapping"]
        row["daemon_running"] = daemon is not None
        row["polling_session"] = sessions.poller.session if sessions.poller else None
        row["attached_sessions"] = [s.session for s in sessions.attached]
        row["hooks_sessions"] = [s.session for s in sessions.hooks]
        row["sessions"] = [{"session": s.session, "conduit": s.conduit, "stream_stopped": s.stream_stopped}
                           for s in sessions.every()]
        if daemon is None:
            row["next_poll"] = None  # nothing polls without a daemon
    return rows


def _guarded_row(
    sensor: MergedSensor, status: SensorStatus | None, probe: dict[str, Any] | None = None,
    compiled: tuple[CompiledSensor | None, str] | None = None, *, daemon_running: bool = False,
) -> SensorRow:
    """`sensor_row`, with the last-resort guard: a bug showing one sensor shows it `invalid`, not a crash."""
    try:
        return sensor_row(sensor, status, probe, compiled, daemon_running=daemon_running)
    except Exception as exc:  # noqa: BLE001 - this sensor invalid, the rest listed
        return {"name": sensor.name, "kind": None, "layer": sensor.layer, "enabled": False,
                "file": str(sensor.file) if sensor.file else None, "description": "", "state": "invalid",
                "message": f"attend failed showing this sensor ({type(exc).__name__}: {exc}); this is a bug in "
                           "attend, please report it", "since": None, "last_poll": None, "next_poll": None,
                "interval": None, "lane": "event", "lane_note": "", "overrides": [], "requires": [],
                "line_errors": [], "failures": 0, "running_last_good": False, "wake_error": ""}


async def _poll_once(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    from attend.runtime import kinds

    if compiled.kind != "mcp":
        return await kinds.poll(compiled, ctx)
    from attend.runtime.mcp.pool import running_pool

    async with running_pool(ctx):
        return await kinds.poll(compiled, ctx)


def _poll_guarded(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    """One poll; a kind's unforeseen exception is this poll's failure (as in the daemon), never a crash."""
    import trio

    from attend.runtime.kinds import PollOutcome

    try:
        return trio.run(_poll_once, compiled, ctx)
    except Exception as exc:  # noqa: BLE001 - a kind's bug: the poll failed, state untouched
        return PollOutcome.failed("unavailable", f"the poll raised {type(exc).__name__}: {exc}")


def fire_json(fire: Fire) -> dict[str, Any]:
    return {"trigger": fire.trigger, "key": fire.key, "magnitude": fire.magnitude, "description": fire.description}


def poll_report(
    compiled: CompiledSensor, paths: LayerPaths, project_dir: str | Path, env: dict[str, str], *, dry_run: bool,
    stream_for: float = 5.0, session: str | None = None, clock: Clock = WALL_CLOCK,
) -> dict[str, Any]:
    """One real poll of `compiled` and each trigger's verdict: what `attend sensors poll` reports.

    Args:
        compiled: the compiled sensor (the sensors tab passes a pending edit of it, not yet written).
        paths: the layer paths (the store's location).
        project_dir: the project directory.
        env: the environment the poll sees.
        dry_run: store nothing (`--dry-run`): evaluate against the trigger states the store holds (read,
            never written), what the next real poll would fire (the tab's preview). A real poll's fires are
            in the report's `lines`, which its caller shows: they are journaled as delivered.
        stream_for: a streaming command: seconds its process runs and its records are collected.
        session: a `scope: session` sensor's session: the poll's focus, its trigger and crate state
            (`name@session`), and the one session its lines are for (`meta.session`).
        clock: the wall clock (the poll's time, and the store's).
    """
    from attend.runtime.delivery import format_line
    from attend.runtime.kinds import PollContext
    from attend.runtime.pipeline import record_poll

    with open_project_store(paths, clock=clock) as store:
        ctx = PollContext(project_dir=Path(project_dir), env=env, paths=paths, store=store, stream_for=stream_for,
                          session=session)
        started = time.monotonic()
        outcome = _poll_guarded(compiled, ctx)
        elapsed = time.monotonic() - started
        # A dry run evaluates against the stored state (what the next real poll would fire) and writes
        # nothing; a real one shows its fires here and journals them as delivered (never replayed).
        record = record_poll(store, compiled, outcome, now=store.now(), dry_run=dry_run, shown=True, session=session)
    step = record.step
    lines = [format_line(compiled.name, prio, o.description, key=o.key, meta=o.meta, lane=compiled.lane)
             for o, prio in zip(record.observations, record.priorities, strict=True)]
    report = {
        "sensor": compiled.name,
        **({"session": session} if session is not None else {}),
        "state": record.state,
        "message": record.message,
        "seconds": round(elapsed, 3),
        "result": outcome.result,
        "line_errors": list(outcome.line_errors),
        "triggers": list(step.verdicts) if step is not None else [],
        "fires": [fire_json(f) for f in step.fires if f not in record.shelved] if step is not None else [],
        "held": [
            {"trigger": part["trigger"], **{k: v for k, v in o.items() if k != "outcome"}}
            for part in record.trace.get("triggers", []) for o in part["outcomes"] if o.get("outcome") == "held"
        ],
        "warnings": list(step.warnings) if step is not None else [],
        "stored": not dry_run and record.state == "ok",
        "dry_run": bool(dry_run),
        "priority": record.priority if record.observations else None,
        "lines": lines,
        "delivered": bool(lines) and not dry_run,
    }
    if outcome.server:
        report["server"] = outcome.server
    if outcome.collected_for is not None:  # a streaming command: how long its records were collected
        report["collected_for"] = outcome.collected_for
    return report
