"""Layers: where sensor files live, how a name's files merge, and the project-trust gate (ADR-403 §2).

Three layers, lowest first: shipped (the package's `sensors.d/`), user (`$XDG_CONFIG_HOME/attend/
sensors/`) and project (`<project>/.claude/attend/sensors/`). Files layer by name: a higher file
deep-merges over a lower one by key (triggers by name; lists are replaced whole), every merged key
path keeps the origin of the file that supplied it, and validation runs on the merged sensor.

Trust: a project file that chooses what runs (sets `kind`, or any part of a `command:` or `mcp:`
block) loads only when the project is listed in `project_sensors` of the user's config.yaml. If it
would define the sensor, the sensor is `refused`; if it only tried to change a lower layer's command,
the file is left out, the lower version stays, and the refusal is a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, Literal

from attend.errors import Diagnostic, Severity, unforeseen
from attend.spec.config import Config, load_config
from attend.spec.folders import layer_paths
from attend.spec.loaded import (
    LAYERS,
    KeyPath,
    LayerPaths,
    MergedSensor,
    Origin,
    SensorFile,
    SensorSet,
)
from attend.spec.loading import file_stem, read_sensor_source
from attend.spec.schema import NAME_RE
from attend.spec.validate import normalise, validate_sensor

__all__ = [
    "RUN_CHOOSING",
    "STANDALONE_LAYER",
    "build_sensor",
    "chooses_what_runs",
    "discover",
    "layer_paths",
    "load_paths",
    "load_set",
    "merge_data",
    "merge_sensor",
    "misnamed_files",
    "trust_command",
]

#: The layer name of a file checked outside any layer folder (`compile --check some/file.yaml`).
STANDALONE_LAYER = "file"
#: Top-level fields through which a file chooses what code runs.
RUN_CHOOSING = ("kind", "command", "mcp")


def discover(folder: Path) -> list[Path]:
    """The sensor files of one layer folder: `*.yaml`, not `*.test.yaml`, not hidden, sorted by name."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [p for p in entries if _is_sensor_file(p) and p.is_file()]


def _is_sensor_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".yaml") and not name.endswith(".test.yaml") and not name.startswith(".")


def chooses_what_runs(sensor_file: SensorFile) -> KeyPath | None:
    """The first key path through which a file chooses what code runs (`kind`, `command…`, `mcp…`), or None."""
    data = sensor_file.data or {}
    for field in RUN_CHOOSING:
        if field in data:
            value = data[field]
            if isinstance(value, dict) and value:
                return (field, next(iter(value)))
            return (field,)
    return None


def merge_data(files: Sequence[SensorFile]) -> tuple[dict[str, Any], dict[KeyPath, Origin]]:
    """Deep-merge the parsed files (lowest first): mappings merge by key, anything else is replaced.

    Returns:
        The merged document and, for every key path in it, the origin of the file that supplied it.
        The files' own data is never modified.
    """
    data: dict[str, Any] = {}
    origins: dict[KeyPath, Origin] = {}
    for sensor_file in files:
        if sensor_file.data is None:
            continue
        if not data:
            data = dict(sensor_file.data)
            origins.update(sensor_file.origins)
            continue
        data = _merge(data, sensor_file.data, (), origins, sensor_file.origins)
    return data, origins


def _merge(base: dict[str, Any], over: dict[str, Any], path: KeyPath, origins: dict[KeyPath, Origin],
           over_origins: Mapping[KeyPath, Origin]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        child = (*path, key)
        if key in merged and isinstance(merged[key], dict) and isinstance(value, dict):
            if child in over_origins:
                origins[child] = over_origins[child]
            merged[key] = _merge(merged[key], value, child, origins, over_origins)
            continue
        for stale in [p for p in origins if len(p) > len(child) and p[: len(child)] == child]:
            del origins[stale]
        merged[key] = value
        for p, origin in over_origins.items():
            if p[: len(child)] == child:
                origins[p] = origin
    return merged


def merge_sensor(files: Sequence[SensorFile], name: str | None = None) -> MergedSensor:
    """Merge one sensor's files (lowest layer first), validate the result and normalise it.

    No trust gate here (see `build_sensor`). A file that failed to parse contributes its diagnostics;
    when the lowest file failed, the rest is not validated (its problems would only be noise).
    """
    files = tuple(files)
    name = name or (files[0].name if files else "")
    diagnostics: list[Diagnostic] = [d for f in files for d in f.diagnostics]
    data, origins = merge_data(files)
    good = tuple(f for f in files if f.data is not None)
    if files and files[0].data is not None:
        diagnostics.extend(validate_sensor(name, data, origins, good, fallback_file=str(files[0].path)))
    status: Literal["ok", "invalid"] = "invalid" if any(d.severity == Severity.ERROR for d in diagnostics) or not good else "ok"
    normalised = normalise(data) if good else {}
    normalised["name"] = name
    return MergedSensor(name=name, data=normalised, origins=origins, files=files, diagnostics=diagnostics,
                  status=status)


def trust_command(project_dir: Path | str) -> str:
    """The command that trusts `project_dir`: it adds to `project_sensors`, keeping the projects listed."""
    import shlex

    return f"attend settings add attend.project_sensors {shlex.quote(str(project_dir))}"


def build_sensor(name: str, files: Sequence[SensorFile], *, trusted: bool, config_file: Path | None = None
                 ) -> MergedSensor:
    """One sensor from its layers' files, with the project-trust gate applied.

    Never raises for any input: an unforeseen exception (a bug) makes this one sensor `invalid` with a
    `check-failed` diagnostic, so one file can never stop the others (issue 14).

    Args:
        name: the sensor's name.
        files: its files, lowest layer first.
        trusted: whether the project is listed in `project_sensors`.
        config_file: the user's config.yaml, named in the refusal message.
    """
    files = tuple(files)
    try:
        return _build_sensor(name, files, trusted=trusted, config_file=config_file)
    except Exception as exc:  # noqa: BLE001 - the last-resort guard: this sensor invalid, the rest go on
        file = str(files[-1].path) if files else name
        return MergedSensor(name=name, data={"name": name}, files=files, status="invalid",
                      diagnostics=[*(d for f in files for d in f.diagnostics), unforeseen(file, exc)])


def _build_sensor(name: str, files: tuple[SensorFile, ...], *, trusted: bool, config_file: Path | None) -> MergedSensor:
    """`build_sensor` without its guard."""
    project = [f for f in files if f.layer == "project"]
    chosen = chooses_what_runs(project[0]) if project and project[0].data is not None else None
    if trusted or chosen is None:
        return merge_sensor(files, name)
    project_file = project[0]
    origin = project_file.origins.get(chosen) or project_file.origins.get(chosen[:1])
    line, col = (origin.key_line, origin.key_col) if origin and origin.key_line else (1, 1)
    where = f"the project is not listed in project_sensors of {config_file or 'the user config.yaml'}"
    lower = tuple(f for f in files if f.layer != "project")
    if lower:
        sensor = merge_sensor(lower, name)
        sensor.diagnostics.append(Diagnostic(
            str(project_file.path), line, col, "project-refused",
            f"this project file changes what sensor {name!r} runs (`{'.'.join(chosen)}`) and {where}; "
            f"the file is left out and the {lower[-1].layer} version runs", Severity.WARNING))
        return sensor
    sensor = merge_sensor(files, name)
    sensor.diagnostics.append(Diagnostic(
        str(project_file.path), line, col, "project-refused",
        f"project sensor {name!r} runs code chosen by the repository (`{'.'.join(chosen)}`) and {where}: "
        f"it is refused until you add the project there ({trust_command(project_file.path.parents[3])})",
        Severity.WARNING))
    sensor.status = "refused"
    return sensor


#: A sensor file as read, and the text it was parsed from (None when it could not be read as text).
Source = tuple[SensorFile, "str | None"]


def _grouped(sources: Iterable[Source]) -> dict[str, list[Source]]:
    groups: dict[str, list[Source]] = {}
    for source in sources:
        groups.setdefault(source[0].name, []).append(source)
    order = {layer: i for i, layer in enumerate(LAYERS)}
    for group in groups.values():
        group.sort(key=lambda source: order.get(source[0].layer, -1))
    return groups


def _layer_files(paths: LayerPaths, names: set[str] | None = None) -> list[Source]:
    """The sensor files of every layer (only those named `names`, when given), read and parsed."""
    return [_read_guarded(p, layer) for layer in LAYERS for p in discover(paths.folder(layer))
            if names is None or file_stem(p) in names]


def _read_guarded(path: Path, layer: str) -> Source:
    """`read_sensor_source`, with the last-resort guard: a bug reading one file marks that file alone."""
    try:
        return read_sensor_source(path, layer)
    except Exception as exc:  # noqa: BLE001 - this file unreadable, the rest go on
        return SensorFile(name=file_stem(path), layer=layer, path=path,
                          diagnostics=[unforeseen(str(path), exc)]), None


#: Sensors as built, by what they were built from (name, each file's layer, path and text, and with a project
#: file the trust and config file), least recently used first. Loading the set again (the daemon's reloads,
#: each command of an in-process caller) merges and validates only the sensors whose files changed:
#: validating the ~28 shipped sensors was most of loading a set. Each hit is a new `MergedSensor` whose
#: diagnostics and status the caller may change; its data, origins and files are shared and never modified
#: (merge_data and normalise copy).
_BUILT: dict[tuple[object, ...], MergedSensor] = {}
_BUILT_MAX = 256  # sensors
_BUILT_MAX_TEXT = 1 << 18  # characters of one sensor's files; a bigger sensor is built every time


def _build_cached(name: str, sources: Sequence[Source], *, trusted: bool, config_file: Path | None) -> MergedSensor:
    """`build_sensor`, built once for the same files' texts (see `_BUILT`)."""
    files = [f for f, _ in sources]
    texts = [text for _, text in sources]
    if any(text is None for text in texts) or sum(len(t or "") for t in texts) > _BUILT_MAX_TEXT:
        return build_sensor(name, files, trusted=trusted, config_file=config_file)
    # Trust and the config file's name matter only to a sensor with a project file (the trust gate).
    gate = (trusted, str(config_file)) if any(f.layer == "project" for f in files) else None
    key = (name, gate, *((f.layer, str(f.path), text) for f, text in sources))
    built = _BUILT.pop(key, None)
    if built is None:
        built = build_sensor(name, files, trusted=trusted, config_file=config_file)
        if len(_BUILT) >= _BUILT_MAX:
            del _BUILT[next(iter(_BUILT))]
    if not any(d.code == "check-failed" for d in built.diagnostics):  # a bug's outcome may not repeat: not kept
        _BUILT[key] = built
    return MergedSensor(name=built.name, data=built.data, origins=built.origins, files=built.files,
                        diagnostics=list(built.diagnostics), status=built.status)


def misnamed_files(paths: LayerPaths) -> list[Diagnostic]:
    """A warning for each `*.yml` file in a layer folder: attend reads `*.yaml` only, so it is ignored."""
    out: list[Diagnostic] = []
    for layer in LAYERS:
        try:
            entries = sorted(paths.folder(layer).glob("*.yml"))
        except OSError:
            continue
        out.extend(_ignored(p) for p in entries if not p.name.startswith("."))
    return out


def load_set(project_dir: str | Path, env: Mapping[str, str] | None = None) -> SensorSet:
    """Every sensor of every layer, merged, validated and trust-gated, plus config.yaml's problems.

    A broken file never stops the others: its problems land on its sensor (status `invalid`).
    """
    paths = layer_paths(project_dir, env)
    config = load_config(paths)
    trusted = config.trusts(paths.project_dir)
    sensors = {name: _build_cached(name, sources, trusted=trusted, config_file=paths.config_file)
               for name, sources in sorted(_grouped(_layer_files(paths)).items())}
    return SensorSet(sensors=sensors, diagnostics=[*config.diagnostics, *misnamed_files(paths)], paths=paths)


def _layer_folders(paths: LayerPaths) -> dict[Path, str]:
    """Each layer folder, resolved once per command, → its layer (the first layer wins a shared folder)."""
    folders = {paths.shipped_projection.resolve(): "shipped"}  # a read-only copy of the shipped folder
    for layer in LAYERS:
        try:
            folders.setdefault(paths.folder(layer).resolve(), layer)
        except OSError:
            continue
    return folders


def _layer_of(path: Path, folders: Mapping[Path, str]) -> str | None:
    return folders.get(path.absolute().parent.resolve())


def _expand(targets: Iterable[Path]) -> tuple[list[Path], list[Diagnostic]]:
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for target in targets:
        if target.is_dir():
            files.extend(p for p in sorted(target.rglob("*.yaml")) if _is_sensor_file(p) and p.is_file())
            problems.extend(_ignored(p) for p in sorted(target.rglob("*.yml")) if not p.name.startswith(".")
                            and p.is_file())
        elif target.is_file():
            if target.name.endswith(".test.yaml"):  # sensor test files are `attend test`'s: said, not silently passed
                problems.append(Diagnostic(str(target), 1, 1, "ignored-file", "a sensor test file: `attend test "
                                           f"{target}` runs it (compile --check checks sensor files)", Severity.WARNING))
            else:
                files.append(target)
                if target.suffix == ".yml":
                    problems.append(_ignored(target))
        elif target.exists():  # a FIFO or device would block the read or never end
            problems.append(Diagnostic(str(target), 1, 1, "io", "not a regular file"))
        elif NAME_RE.fullmatch(str(target)):  # a bare word: most likely a sensor's name, not its file
            problems.append(Diagnostic(str(target), 1, 1, "io", "no such file or directory (compile --check takes "
                                       f"files and folders; for the sensor named {target}: attend explain {target})"))
        else:
            problems.append(Diagnostic(str(target), 1, 1, "io", "no such file or directory"))
    return files, problems


def _ignored(path: Path) -> Diagnostic:
    """The warning for a `*.yml` file: checked when named, but never read from a sensor folder."""
    return Diagnostic(str(path), 1, 1, "ignored-file",
                      f"attend reads only *.yaml sensor files: rename this to {path.stem}.yaml to use it", Severity.WARNING)


def load_paths(targets: Iterable[Path | str], project_dir: str | Path, env: Mapping[str, str] | None = None,
               config: Config | None = None) -> SensorSet:
    """The sensors of the named files and folders (folders are searched recursively).

    A file inside a layer folder is checked as that layer's file, merged with the same name's files of
    the other layers (trust gate included). A file anywhere else is checked on its own, as a complete
    sensor definition. Naming config.yaml or .claude/attend.yaml checks that config file.
    Sensors are keyed by name; a standalone file whose name is taken is keyed by its path.
    """
    paths = layer_paths(project_dir, env)
    config = config or load_config(paths)
    files, problems = _expand(Path(t) for t in targets)
    config_files = {paths.config_file.resolve(), paths.project_config_file.resolve()}
    sensors: dict[str, MergedSensor] = {}
    layered: set[str] = set()
    set_diagnostics = list(problems)
    folders = _layer_folders(paths) if files else {}
    for path in files:
        if path.resolve() in config_files:
            set_diagnostics.extend(d for d in config.diagnostics if Path(d.file).resolve() == path.resolve())
            continue
        layer = _layer_of(path, folders)
        if layer is None:
            source = _read_guarded(path, STANDALONE_LAYER)
            name = source[0].name
            sensors[name if name not in sensors else str(path)] = _build_cached(name, [source], trusted=True,
                                                                                config_file=None)
        else:
            layered.add(file_stem(path))
    if layered:
        trusted = config.trusts(paths.project_dir)
        groups = _grouped(_layer_files(paths, layered))
        for name, group in sorted(groups.items()):
            key = name if name not in sensors else f"{name} (layers)"
            sensors[key] = _build_cached(name, group, trusted=trusted, config_file=paths.config_file)
    return SensorSet(sensors=sensors, diagnostics=set_diagnostics, paths=paths)
