"""Resolving a sensor key through the layers: its value, default, layer and file (ADR-403 §5).

A key's *value* is what the files say, deep-merged across the layers as the loader merges them, and
written as in the file (`5m`, not 300.0); a field no file sets shows the effective default that the
sensor runs with. Its *layer* and *file* come from the spec's per-field provenance (`MergedSensor.origins`);
a default has layer `default` and no file. Checking a key (`check_sensor_key`) refuses what the spec
does not define, with a did-you-mean taken from the schema and from the sensor's own trigger names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from attend.errors import EXIT_REJECTED, EXIT_USAGE, Severity
from attend.settings.keys import Key, format_key, suggest
from attend.settings.policy import SettingsRefusal
from attend.spec.layers import merge_data
from attend.spec.loaded import LAYERS, MergedSensor, SensorSet
from attend.spec.schema import describe, field_rules, known_fields

__all__ = [
    "DEFAULT_LAYER",
    "Resolution",
    "check_not_through_scalar",
    "check_sensor_key",
    "flatten",
    "is_missing",
    "lookup",
    "merge_raw",
    "raw_effective",
    "require_readable",
    "require_sensor",
    "resolve",
    "shown_document",
]

#: The layer name `get` and `list` show for a value no file sets.
DEFAULT_LAYER = "default"

_MISSING = object()


@dataclass(frozen=True, slots=True)
class Resolution:
    """A key's effective value and where it comes from (the `get --json` object, plus the line)."""

    key: str
    value: object
    default: object
    layer: str
    file: str | None
    line: int | None = None

    def to_json(self) -> dict[str, object]:
        """The `get --json` object: key, value, default, layer, file (and line)."""
        return {"key": self.key, "value": self.value, "default": self.default, "layer": self.layer,
                "file": self.file, "line": self.line}


def merge_raw(documents: Iterable[object]) -> object:
    """Deep-merge documents, later over earlier: mappings merge by key, anything else replaces."""
    merged: object = _MISSING
    for doc in documents:
        if doc is None:
            continue
        if isinstance(merged, Mapping) and isinstance(doc, Mapping):
            out = dict(merged)
            for key, value in doc.items():
                out[key] = merge_raw([out[key], value]) if key in out else value
            merged = out
        else:
            merged = doc
    return None if merged is _MISSING else merged


def lookup(data: object, path: tuple[str, ...]) -> object:
    """The value at `path` inside `data`, or the module's missing marker (see `is_missing`)."""
    node = data
    for segment in path:
        if not isinstance(node, Mapping) or segment not in node:
            return _MISSING
        node = node[segment]
    return node


def is_missing(value: object) -> bool:
    """Whether `lookup` found nothing."""
    return value is _MISSING


def raw_effective(sensor: MergedSensor) -> dict[str, object]:
    """The sensor's files deep-merged as written (durations as written, no defaults).

    The loader's own merge (`spec.layers.merge_data`), before validation normalises it; empty when no
    file has data.
    """
    merged, _ = merge_data(sorted(sensor.files, key=lambda f: LAYERS.index(f.layer)))
    return merged


def shown_document(sensor: MergedSensor) -> object:
    """The sensor as `get` and `list` show it: its effective data, with what the files set as written.

    Settings shows and edits the document itself, so it reads `MergedSensor.data` (key paths as written); what a
    field does is read from `MergedSensor.ir` elsewhere.
    """
    return merge_raw([sensor.data, raw_effective(sensor)])


def require_sensor(sset: SensorSet, name: str) -> MergedSensor:
    """The sensor `name`, or a usage refusal with the closest names."""
    sensor = sset.sensors.get(name)
    if sensor is not None:
        return sensor
    close = suggest(name, sset.sensors)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    known = "" if close else f" (known: {', '.join(sorted(sset.sensors)) or 'none'})"
    raise SettingsRefusal(f"no sensor named {name!r}{hint}{known}", EXIT_USAGE)


def require_readable(sensor: MergedSensor) -> MergedSensor:
    """`sensor`, or a refusal (exit 3) with the positioned error of the first of its files that could not
    be read (not YAML, not UTF-8, not a mapping): its settings are neither known nor editable until it is fixed."""
    for sensor_file in sensor.files:
        if sensor_file.data is None:
            problem = next((d for d in sensor_file.diagnostics if d.severity == Severity.ERROR), None)
            where = str(problem) if problem else f"{sensor_file.path} cannot be read"
            raise SettingsRefusal(f"{where}; fix it by hand first", EXIT_REJECTED)
    return sensor


def check_sensor_key(key: Key, sensor: MergedSensor | None, *, deep_trigger_must_exist: bool = True) -> None:
    """Refuse a key the spec does not define, or one that goes inside a trigger that does not exist.

    Args:
        key: a sensor key.
        sensor: the sensor (None: check the shape only, as `help` does).
        deep_trigger_must_exist: refuse `triggers.<name>.<field>` when no layer defines trigger `name`
            (a whole new trigger, `triggers.<name>`, is always allowed).

    Raises:
        SettingsRefusal: with exit code 2 and a did-you-mean.
    """
    path = key.path
    for depth in range(len(path)):
        if field_rules(path[: depth + 1]) is None:
            parent = path[:depth]
            candidates = list(known_fields(parent))
            close = suggest(path[depth], candidates)
            at = format_key(("attend", "sensors", key.sensor or "", *parent))
            hint = f"; did you mean {', '.join(close)}?" if close else (
                f" (it has: {', '.join(candidates)})" if candidates else " (it holds a value, not fields)")
            raise SettingsRefusal(f"unknown key {key}: {at} has no field {path[depth]!r}{hint}", EXIT_USAGE)
    if sensor is None or len(path) < 3 or path[0] != "triggers" or not deep_trigger_must_exist:
        return
    triggers = sensor.data.get("triggers")  # settings edits the document: its keys as written, not `sensor.ir`
    names = list(triggers) if isinstance(triggers, Mapping) else []
    if path[1] not in names:
        close = suggest(path[1], names)
        hint = f" (did you mean {', '.join(close)}?)" if close else (
            f" (its triggers: {', '.join(names)})" if names else " (it has no triggers)")
        raise SettingsRefusal(
            f"unknown key {key}: sensor {sensor.name} has no trigger {path[1]!r}{hint}; to add a trigger, "
            f"set {format_key(('attend', 'sensors', sensor.name, 'triggers', path[1]))} to a whole trigger mapping",
            EXIT_USAGE,
        )


def check_not_through_scalar(key: Key, data: object) -> None:
    """Refuse a key whose parent holds a scalar or a list in `data` (a key path into a scalar)."""
    node = data
    for depth, segment in enumerate(key.path[:-1]):
        if not isinstance(node, Mapping) or segment not in node:
            return
        node = node[segment]
        if not isinstance(node, Mapping):
            at = format_key(("attend", "sensors", key.sensor or "", *key.path[: depth + 1]))
            raise SettingsRefusal(
                f"{key} goes inside {at}, which holds {node!r}, not fields: set {at} as a whole instead",
                EXIT_USAGE,
            )


def _default(path: tuple[str, ...]) -> object:
    doc = describe(path) if path else None
    return doc.default if doc else None


def resolve(key: Key, sensor: MergedSensor) -> Resolution:
    """The effective value of a sensor key and its provenance.

    The value is the merged file value when some file sets the key, else the sensor's effective
    (normalised) value, which for an unset field is its default.
    """
    if not key.path:
        return Resolution(str(key), shown_document(sensor), None, sensor.layer, str(sensor.file) if sensor.file else None)
    default = _default(key.path)
    raw = lookup(raw_effective(sensor), key.path)
    if is_missing(raw):
        value = lookup(sensor.data, key.path)
        return Resolution(str(key), None if is_missing(value) else value, default, DEFAULT_LAYER, None)
    origin = sensor.origins.get(key.path)
    if origin is not None:
        return Resolution(str(key), raw, default, origin.layer, origin.file, origin.line)
    # No origin of its own: the highest layer whose file sets the key.
    top = [f for f in sensor.files if not is_missing(lookup(f.data, key.path))][-1]
    return Resolution(str(key), raw, default, top.layer, str(top.path))


def flatten(data: object, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """Every leaf of `data` (a non-mapping value, or an empty mapping) with its key path, in order."""
    if not isinstance(data, Mapping) or (not data and prefix):
        return [(prefix, data)]
    out: list[tuple[tuple[str, ...], object]] = []
    for key, value in data.items():
        out.extend(flatten(value, (*prefix, str(key))))
    return out
