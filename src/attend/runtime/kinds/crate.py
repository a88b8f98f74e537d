"""The crate kind: one poll of a compiled sensor written in Python (ADR-403 §1).

The sensor file's core field `source` names an entry point in the ``attend.sensors`` group; the class
it points at is built once per sensor name with the file's ``crate:`` block and kept in
`PollContext.crate_instances`. Before its first poll the instance gets back the state it exported
last (`Store.get_crate_state`), so what it remembers survives a restart and one-shot CLI polls. The
poll runs in a worker thread (it may wait on subprocesses or files) under a deadline.

Outcomes: the result on success, with the exported state in `crate_state` for the pipeline to
store together with the trigger states, and what the poll skipped as unreadable in `skipped`
(from the sensor's optional ``skipped()``: a corrupt file, one line each; it becomes the status message); `invalid` for an unknown source or
a crate block the class rejects; `unavailable` when the sensor raises `SensorUnavailable`; `timeout`
past the deadline; `exec_failed` with the exception's message for any other exception. Never a
traceback: a broken sensor is a recorded state.

Focus: the project directory, with the description and keywords from ``ATTEND_FOCUS`` and
``ATTEND_FOCUS_KEYWORDS`` in the daemon's environment (`attend.sensors.base.focus_from_env`), and for
a session-scoped sensor the session it is polled for (one object, and one exported state, per session).
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import trio

from attend.runtime.kinds import PollContext, PollOutcome
from attend.sensors.base import Focus, Sensor, SensorAuthFailed, SensorConfigError, SensorUnavailable, focus_from_env
from attend.sensors.registry import ENTRY_POINT_GROUP, load_sensor_class
from attend.text import printable

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor

__all__ = ["CRATE_POLL_TIMEOUT", "ENTRY_POINT_GROUP", "CrateInstance", "load_sensor_class", "poll"]

#: How long one poll may take, in seconds, unless the crate block sets `timeout`. A poll past it is
#: recorded as `timeout`; its thread is abandoned and the instance is not polled again until it ends.
CRATE_POLL_TIMEOUT = 10.0

#: How many skipped inputs (`skipped()`) one poll's status keeps.
SKIPPED_KEPT = 20

#: Crate-block fields the kind reads itself; the sensor class never sees them.
KIND_FIELDS = ("timeout",)


class CrateInstance:
    """One sensor object, the crate block it was built from, and whether a poll thread still runs."""

    def __init__(self, sensor: Sensor, config: dict[str, Any]) -> None:
        self.sensor = sensor
        self.config = config
        self.busy = threading.Event()


def _config(compiled: CompiledSensor) -> dict[str, Any]:
    return {k: v for k, v in compiled.sensor.ir.crate.items() if k not in KIND_FIELDS}


def _instance(compiled: CompiledSensor, ctx: PollContext) -> CrateInstance | PollOutcome:
    """The sensor object for `compiled`, built (and its state restored) on first use or after an edit."""
    name = compiled.name
    key = ctx.state_key(name)  # one object per session for a session-scoped sensor
    config = _config(compiled)
    current = ctx.crate_instances.get(key)
    if isinstance(current, CrateInstance) and current.config == config:
        return current
    source = compiled.sensor.ir.source
    if not source:
        return PollOutcome.failed("invalid", "a crate sensor needs `source`, its entry-point name in attend.sensors")
    try:
        cls = load_sensor_class(source)
        sensor = cls(config)
    except LookupError as exc:
        return PollOutcome.failed("invalid", str(exc))
    except (SensorConfigError, TypeError, ValueError) as exc:
        return PollOutcome.failed("invalid", f"crate block of {name}: {exc}")
    if not callable(getattr(sensor, "poll", None)):
        return PollOutcome.failed("invalid", f"compiled sensor {source!r} has no poll(focus) method")
    importer = getattr(sensor, "import_state", None)
    if callable(importer) and ctx.store is not None:
        state = ctx.store.get_crate_state(key)
        if state is not None:
            try:
                importer(state)
            except Exception as exc:  # noqa: BLE001 - a stale state must not stop the sensor
                return PollOutcome.failed("exec_failed", f"import_state of {name} failed: {exc}")
    instance = CrateInstance(sensor, config)
    ctx.crate_instances[key] = instance
    return instance


def _timeout(compiled: CompiledSensor) -> float:
    """The crate block's `timeout` (a duration), else `CRATE_POLL_TIMEOUT`."""
    return compiled.sensor.ir.crate_timeout or CRATE_POLL_TIMEOUT


def _run(instance: CrateInstance, focus: Focus) -> Any:
    try:
        return instance.sensor.poll(focus)
    finally:
        instance.busy.clear()


async def poll(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    """Poll the compiled sensor behind `compiled` once.

    Args:
        compiled: The compiled sensor file (kind `crate`).
        ctx: The poll context; its `crate_instances` keeps the object between polls and `store` its
            exported state.

    Returns:
        The outcome: the poll result, or a failure state with its message.
    """
    instance = _instance(compiled, ctx)
    if isinstance(instance, PollOutcome):
        return instance
    if instance.busy.is_set():
        return PollOutcome.failed("timeout", "the previous poll is still running")
    timeout = _timeout(compiled)
    focus = focus_from_env(ctx.project_dir, ctx.env, session=ctx.session, transcript=ctx.transcript)
    instance.busy.set()
    try:
        with trio.move_on_after(timeout) as scope:
            result = await trio.to_thread.run_sync(_run, instance, focus, abandon_on_cancel=True)
    except SensorUnavailable as exc:
        return PollOutcome.failed("auth_failed" if isinstance(exc, SensorAuthFailed) else "unavailable",
                                  printable(str(exc), one_line=True)
                                  or "the sensor's upstream is unavailable")
    except Exception as exc:  # noqa: BLE001 - third-party poll code: any failure is a recorded state
        return PollOutcome.failed("exec_failed", printable(f"{type(exc).__name__}: {exc}", one_line=True))
    if scope.cancelled_caught:
        return PollOutcome.failed("timeout", f"the poll took longer than {timeout:g} s")
    outcome = PollOutcome(result=result)
    reporter = getattr(instance.sensor, "skipped", None)
    if callable(reporter):
        try:
            # one line each, escaped: a file name that is not UTF-8 (a lone surrogate) or holds an escape
            # sequence reaches the store and the terminal as printable text
            outcome.skipped = [printable(str(line), one_line=True) for line in reporter()][:SKIPPED_KEPT]
        except Exception as exc:  # noqa: BLE001 - third-party code: its report failing is itself reported
            outcome.skipped = [f"skipped() of {compiled.name} failed: {exc}"]
    exporter = getattr(instance.sensor, "export_state", None)
    if callable(exporter):
        try:
            state = exporter()
            json.dumps(state)
        except Exception as exc:  # noqa: BLE001
            return PollOutcome.failed("exec_failed", f"export_state of {compiled.name} failed: {exc}")
        # Stored by `pipeline.record_poll` in the same transaction as the trigger states this poll
        # produces (never on a dry run), so a crash between the two can't lose a transition.
        outcome.crate_state = state
    return outcome
