"""The decisions of settings and sensor management, as pure functions (ADR-403 §5, DESIGN.md CLI).

Which layer a command writes, whether a higher layer overrides a key, which names are allowed and which
copy/rename/delete actions a layer permits. Nothing here reads or writes a file; `commands.py` and
`manage.py` gather the facts, ask these functions, and act.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from attend.errors import (
    EXIT_OK,
    EXIT_OVERRIDDEN,
    EXIT_REJECTED,
    EXIT_USAGE,
    EXIT_WRITE_FAILED,
    Refusal,
)
from attend.spec.loaded import LAYERS
from attend.spec.schema import NAME_PATTERN as SENSOR_NAME_RULE

__all__ = [
    "EXIT_OK",
    "EXIT_OVERRIDDEN",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "EXIT_WRITE_FAILED",
    "NAME_PATTERN",
    "WRITABLE_LAYERS",
    "SettingsRefusal",
    "delete_refusal",
    "layers_above",
    "name_problem",
    "overriding_layer",
    "rename_refusal",
    "sets_path",
    "target_layer",
]


#: A sensor name: also its file stem, so it can never hold a `/` or start with a `.` (DESIGN.md, Spec v1).
#: The spec's own rule, so a name management accepts is one the loader accepts.
NAME_PATTERN = re.compile(SENSOR_NAME_RULE)

#: The layers that settings and management write; the shipped layer is read-only.
WRITABLE_LAYERS: tuple[str, ...] = ("user", "project")


class SettingsRefusal(Refusal):
    """A settings command that stops without writing: `message` for the user, `code` the exit code."""


def target_layer(project_layer: bool) -> str:
    """The layer a write goes to: the project layer when `--project` was named, else the user layer."""
    return "project" if project_layer else "user"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a sensor name, or None when it can."""
    if NAME_PATTERN.fullmatch(name):
        return None
    return (
        f"{name!r} is not a sensor name: a name is lower-case letters, digits, '_' and '-', starting with a "
        "letter or digit (so it can never point outside the sensor folders)"
    )


def layers_above(layer: str) -> tuple[str, ...]:
    """The layers that override `layer`, lowest first."""
    return LAYERS[LAYERS.index(layer) + 1 :]


def sets_path(data: Any, path: tuple[str, ...]) -> bool:
    """Whether a file's data sets `path`: the key itself, or a non-mapping standing at a prefix of it."""
    node = data
    for segment in path:
        if not isinstance(node, Mapping):
            return True  # a scalar or list here replaces everything below it
        if segment not in node:
            return False
        node = node[segment]
    return True


def overriding_layer(path: tuple[str, ...], layer: str, stored: Mapping[str, Any]) -> str | None:
    """The lowest layer above `layer` whose file sets `path` (so a write to `layer` would not show).

    Args:
        path: the field's key path inside the sensor document (or config file).
        layer: the layer being written.
        stored: each layer's file data (absent or None when the layer has no file).
    """
    for higher in layers_above(layer):
        data = stored.get(higher)
        if isinstance(data, Mapping) and path and sets_path(data, path):
            return higher
    return None


def delete_refusal(name: str, layer: str, file_layers: tuple[str, ...]) -> str | None:
    """Why `sensors delete NAME` may not delete `name`'s file in `layer`, or None when it may.

    Args:
        name: the sensor.
        layer: the layer whose file would be deleted.
        file_layers: the layers that hold a file for the sensor, lowest first.
    """
    if layer not in file_layers:
        if file_layers == ("shipped",):
            return (
                f"{name} is a shipped sensor: it can be turned off "
                f"(attend settings set attend.sensors.{name}.enabled false) or copied, not deleted"
            )
        where = ", ".join(file_layers) or "no layer"
        return f"{name} has no {layer} file to delete (it is defined in: {where})"
    return None


def rename_refusal(name: str, new: str, layer: str, file_layers: tuple[str, ...], new_exists: bool) -> str | None:
    """Why `sensors rename OLD NEW` may not rename `name`'s file in `layer`, or None when it may."""
    if new_exists:
        return f"a sensor named {new} already exists: choose another name, or delete that one first"
    if layer not in file_layers:
        if "shipped" in file_layers and not set(file_layers) & set(WRITABLE_LAYERS):
            return f"{name} is a shipped sensor: it can be copied (attend sensors copy {name} {new}), not renamed"
        where = ", ".join(file_layers) or "no layer"
        return f"{name} has no {layer} file to rename (it is defined in: {where})"
    return None
