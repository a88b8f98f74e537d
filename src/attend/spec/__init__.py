"""The sensor spec: YAML → validated, layered sensors with provenance (ADR-403 §1, §2, §7).

`load_set` reads every layer of a project; `load_paths` only the named files; `read_sensor_file`
one file; `merge_sensor` one sensor's files; `load_config` config.yaml. The types are in `model`.
"""

from __future__ import annotations

from attend.spec.config import Config, legacy_keys, load_config
from attend.spec.durations import parse_duration
from attend.spec.layers import (
    build_sensor,
    layer_paths,
    load_paths,
    load_set,
    merge_sensor,
)
from attend.spec.loading import read_sensor_file
from attend.spec.model import (
    LAYERS,
    KeyPath,
    LayerPaths,
    Origin,
    Sensor,
    SensorFile,
    SensorSet,
)

__all__ = [
    "LAYERS",
    "Config",
    "KeyPath",
    "LayerPaths",
    "Origin",
    "Sensor",
    "SensorFile",
    "SensorSet",
    "build_sensor",
    "layer_paths",
    "legacy_keys",
    "load_config",
    "load_paths",
    "load_set",
    "merge_sensor",
    "parse_duration",
    "read_sensor_file",
]
