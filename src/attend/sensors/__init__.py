"""Compiled ("crate") sensors written in Python, registered through the attend.sensors entry points.

`base` holds the contract (`Sensor`, `Focus`, `SensorUnavailable`); `git`, `processes`, `context` and
`keepwarm` are the shipped sensors whose files live in ``attend/sensors.d/``.
"""

from attend.sensors.base import (
    Focus,
    Sensor,
    SensorConfigError,
    SensorUnavailable,
    focus_from_env,
)

__all__ = ["Focus", "Sensor", "SensorConfigError", "SensorUnavailable", "focus_from_env"]
