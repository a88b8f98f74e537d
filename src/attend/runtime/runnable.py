"""Which loaded sensors the runtime runs (DESIGN.md, Spec v1 and Runtime).

Decision: a sensor runs when the spec loaded it `ok`, and also when its only errors are `lane-author`
(a message-lane trigger without `author`): `compile --check` reports that as an error, but DESIGN.md
has the daemon run such a sensor on the event lane and say why (the compiled sensor's `lane_note`).
Every other error (`invalid`) and the trust gate (`refused`) keep a sensor from polling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.errors import Diagnostic
    from attend.spec.loaded import MergedSensor

__all__ = ["LANE_ONLY_CODES", "REFUSED_CODE", "compiled_or_error", "first_error", "runnable"]

#: Error codes that do not stop a sensor from running (the runtime falls back and says why).
LANE_ONLY_CODES = frozenset({"lane-author"})


def _errors(sensor: MergedSensor) -> list[Diagnostic]:
    return [d for d in sensor.diagnostics if str(d.severity) == "error"]


def runnable(sensor: MergedSensor) -> bool:
    """True when the runtime may compile and poll `sensor`."""
    if sensor.status == "ok":
        return True
    if sensor.status != "invalid":
        return False
    errors = _errors(sensor)
    return bool(errors) and all(d.code in LANE_ONLY_CODES for d in errors)


#: The diagnostic code of the trust gate: a `refused` sensor is shown with this reason first.
REFUSED_CODE = "project-refused"


def first_error(sensor: MergedSensor) -> str:
    """The reason a sensor does not run, as one line.

    For a `refused` sensor that is the refusal (a warning, so it would otherwise lose to any error the
    file also has, and the user would not learn that trust is what stops it); else the first error,
    else the first diagnostic. "First" is the first of `compile --check`'s list for the sensor (its spec
    problems and its expression checks, in `by_position` order), not the order the checks ran in.
    """
    from attend.errors import by_position

    refusals = [d for d in sensor.diagnostics if d.code == REFUSED_CODE] if sensor.status == "refused" else []
    if refusals:
        return str(min(refusals, key=by_position))
    from attend.compiler.check import sensor_diagnostics

    found = sensor_diagnostics(sensor)  # the expression checks too: `compile --check`'s list
    chosen = [d for d in found if str(d.severity) == "error"] or found
    return str(min(chosen, key=by_position)) if chosen else f"sensor {sensor.name} is {sensor.status}"


def compiled_or_error(sensor: MergedSensor) -> tuple[CompiledSensor | None, str]:
    """`sensor` compiled, or (None, why): a runnable sensor that does not compile is shown as `invalid`.

    The daemon and the one-shot commands both go through here, so they call the same sensors invalid.
    """
    from attend.compiler import compile_sensor

    try:
        return compile_sensor(sensor), ""
    except Exception as exc:  # noqa: BLE001 - any compiler failure is the sensor's `invalid` state
        return None, str(exc)
