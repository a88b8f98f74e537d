"""The sensor spec: YAML → validated, layered sensors with provenance (ADR-403 §1, §2, §7).

`load_set` reads every layer of a project; `load_paths` only the named files; `read_sensor_file`
one file; `merge_sensor` one sensor's files; `load_config` config.yaml. The types are in `loaded`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from attend.spec.config import Config, legacy_keys, load_config
    from attend.spec.durations import parse_duration
    from attend.spec.folders import layer_paths
    from attend.spec.layers import build_sensor, load_paths, load_set, merge_sensor
    from attend.spec.loaded import LAYERS, KeyPath, LayerPaths, MergedSensor, Origin, SensorFile, SensorSet
    from attend.spec.loading import read_sensor_file

#: Where each name of the package lives: its module is imported when the name is first used, so a
#: caller that needs only the paths (a hook, the run lock) never loads the YAML reader or the validator.
_MODULE_OF = {
    "Config": "config", "legacy_keys": "config", "load_config": "config",
    "parse_duration": "durations",
    "build_sensor": "layers", "load_paths": "layers", "load_set": "layers", "merge_sensor": "layers",
    "read_sensor_file": "loading",
    "LAYERS": "loaded", "KeyPath": "loaded", "LayerPaths": "loaded", "Origin": "loaded", "MergedSensor": "loaded",
    "SensorFile": "loaded", "SensorSet": "loaded",
    "layer_paths": "folders",
}

__all__ = [
    "LAYERS",
    "Config",
    "KeyPath",
    "LayerPaths",
    "MergedSensor",
    "Origin",
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


def __getattr__(name: str) -> object:  # the names above, typed by their imports for type checkers
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'attend.spec' has no attribute {name!r}")
    value: object = getattr(__import__(f"attend.spec.{module}", fromlist=[name]), name)
    globals()[name] = value
    return value
