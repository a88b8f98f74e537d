"""Finding a compiled sensor's class by its entry-point name (ADR-403 §1, the crate kind).

Kept apart from the crate kind (runtime/kinds/crate.py, which needs trio) so that `attend explain`
can ask a crate sensor what it declares (its `wake_on`) without starting the runtime.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "load_sensor_class"]

#: The entry-point group compiled sensors register in (a separate package can add its own).
ENTRY_POINT_GROUP = "attend.sensors"


def load_sensor_class(source: str) -> Any:
    """The class registered as `source` in the `attend.sensors` group.

    Raises:
        LookupError: no entry point has that name, or it fails to import (the message says which).
    """
    from importlib.metadata import (
        entry_points,  # only when a crate sensor is built: slow to import
    )

    registered = entry_points(group=ENTRY_POINT_GROUP)  # one scan of the installed distributions
    matches = [ep for ep in registered if ep.name == source]
    if not matches:
        known = sorted({ep.name for ep in registered})
        raise LookupError(f"no compiled sensor {source!r} in the {ENTRY_POINT_GROUP} entry points "
                          f"(known: {', '.join(known) or 'none'})")
    try:
        return matches[0].load()
    except Exception as exc:  # noqa: BLE001 - any import error of third-party code is a recorded state
        raise LookupError(f"compiled sensor {source!r} ({matches[0].value}) failed to load: {exc}") from None
