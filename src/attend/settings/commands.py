"""`attend settings get|set|unset|add|remove|list|help|lint`: every sensor field as a key (ADR-403 §5, §7; DESIGN.md CLI).

Each handler takes the argparse namespace and returns the exit code: 0 done, 1 old keys found (lint),
2 usage or unknown key, 3 rejected, 4 overridden by a higher layer, 5 write failed. A refusal prints
one message on stderr and writes nothing. Writes go to the user layer, or with `--project` to the
project layer; the decisions behind them are in `policy.py` and `edits.py`, and docs/settings.md.
"""

from __future__ import annotations

import builtins
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from attend.settings.config_keys import CONFIG_FIELDS, USER_ONLY, config_field, section_names, value_problem
from attend.settings.document import EditableDocument, PathIntoScalar, WouldNotReadBack, same_value, yaml_kind
from attend.settings.edits import SensorFiles, apply_edit, editable_document, editable_text
from attend.settings.keys import Key, KeySyntaxError, format_key, parse_key, split_segments, suggest
from attend.settings.policy import (
    EXIT_OK,
    EXIT_OVERRIDDEN,
    EXIT_REJECTED,
    EXIT_USAGE,
    EXIT_WRITE_FAILED,
    SettingsRefusal,
    overriding_layer,
    target_layer,
)
from attend.settings.resolve import (
    DEFAULT_LAYER,
    Resolution,
    check_not_through_scalar,
    check_sensor_key,
    flatten,
    lookup,
    is_missing,
    merge_raw,
    require_sensor,
    resolve,
    shown_document,
)
from attend.settings.storage import WriteFailed, write_atomically
from attend.spec.config import config_entries, legacy_keys
from attend.spec.layers import layer_paths, load_set
from attend.spec.loading import parse_yaml, read_sensor_file, read_yaml_file
from attend.spec.model import LayerPaths, Sensor
from attend.spec.schema import describe, known_fields

__all__ = [
    "NothingToUnset", "SensorEdit", "add", "check_field_key", "get", "help", "lint", "list", "plan_sensor_set",
    "plan_sensor_unset", "remove", "render", "run_refusable", "set", "unset",
]

#: Exit code of `lint` when it found old keys (the "problems found" code of `compile --check`).
EXIT_FOUND = 1

#: Characters that start a YAML alias, anchor, tag, directive or block scalar, not a plain string
#: (a glob such as `*berlin*` is the common case).
YAML_INDICATORS = frozenset("*&!%@`|>")

#: Fields that stay in an override file that no longer overrides anything; such a file is deleted.
IDENTITY_FIELDS = frozenset({"spec", "name"})


def run_refusable(action: Callable[[], int]) -> int:
    """Run a command body; a refusal becomes its message on stderr and its exit code."""
    try:
        return action()
    except SettingsRefusal as refusal:
        print(f"attend: {refusal.message}", file=sys.stderr)
        return refusal.code
    except WouldNotReadBack as exc:
        print(f"attend: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    except WriteFailed as exc:
        print(f"attend: {exc}; the file is as it was", file=sys.stderr)
        return EXIT_WRITE_FAILED


def _key(text: str) -> Key:
    try:
        return parse_key(text)
    except KeySyntaxError as exc:
        raise SettingsRefusal(f"bad key: {exc}", EXIT_USAGE) from None


def _value(text: str) -> tuple[Any, bool]:
    """VALUE parsed as YAML (safe, the loader's own reading) and whether it was written inline."""
    parsed = parse_yaml(text, "VALUE")
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    if errors:
        hint = ""
        if text[:1] in YAML_INDICATORS:
            import shlex

            quoted = shlex.quote(json.dumps(text, ensure_ascii=False))  # YAML's double quotes, then the shell's
            hint = (f"; a string starting with {text[0]!r} must be quoted inside the value, "
                    f"e.g. attend settings set KEY {quoted}")
        raise SettingsRefusal(f"VALUE is not valid YAML: {errors[0].message}{hint}", EXIT_REJECTED)
    return parsed.data, text.lstrip().startswith(("{", "["))


def render(value: Any) -> str:
    """A value as one line of YAML (flow style), as `get` and `list` print it."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 16, sort_keys=False, allow_unicode=True)
    if text.endswith("\n...\n"):  # pyyaml closes a lone scalar document with an end marker
        text = text[: -len("...\n")]
    return text.strip()


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _done(args: Any, text: str, key: Key, layer: str, file: Path, change: str, value: Any = None) -> int:
    """Report a write: `text` for people; with --json `{key, change, value, layer, file}`."""
    if getattr(args, "json", False):
        _print_json({"key": str(key), "change": change, "value": value, "layer": layer, "file": str(file)})
    else:
        print(text)
    return EXIT_OK


def _nothing_to_do(args: Any, text: str, key: Key, layer: str, file: Path) -> int:
    print(text, file=sys.stderr)
    if getattr(args, "json", False):
        _print_json({"key": str(key), "change": "none", "value": None, "layer": layer, "file": str(file)})
    return EXIT_OK


def _paths(args: Any) -> LayerPaths:
    return layer_paths(args.project_dir)


# --- config.yaml keys -------------------------------------------------------------------------------


@dataclass(slots=True)
class ConfigLayer:
    """One config file: its attend keys (top-level and under `attend:`, read as spec reads them), the
    whole document, and its origins."""

    layer: str
    path: Path
    section: dict[str, Any]
    document: dict[str, Any]
    origins: dict[tuple[str, ...], Any]

    @classmethod
    def read(cls, layer: str, path: Path) -> ConfigLayer:
        """Read one config file (a missing or unreadable file reads as empty)."""
        parsed = read_yaml_file(path, layer) if path.is_file() else None
        if parsed is None or not isinstance(parsed.data, dict):
            return cls(layer, path, {}, {}, parsed.origins if parsed else {})
        section: dict[str, Any] = {}
        for key, value, _ in config_entries(parsed):
            earlier = section.get(key)
            # As `load_config` reads it: a section given both ways merges, the `attend:` keys winning.
            section[key] = {**earlier, **value} if isinstance(earlier, dict) and isinstance(value, dict) else value
        return cls(layer, path, section, parsed.data, parsed.origins)

    def prefix_for(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """Where `path` stands in the file: under `attend:` or at the top level.

        The form that already holds the key (`attend:` first: it wins), else the one that holds its
        section, else `attend:` when the file uses it, else the top level.
        """
        candidates = [("attend",), ()] if isinstance(self.document.get("attend"), dict) else [()]
        for depth in (len(path), 1):
            for prefix in candidates:
                if not is_missing(lookup(self.document, (*prefix, *path[:depth]))):
                    return prefix
        return candidates[0]


def _config_layers(paths: LayerPaths) -> dict[str, ConfigLayer]:
    return {"user": ConfigLayer.read("user", paths.config_file),
            "project": ConfigLayer.read("project", paths.project_config_file)}


def _check_config_key(key: Key) -> None:
    path = key.path
    if config_field(path) is not None or section_names(path):
        return
    for depth in range(1, len(path) + 1):
        if not section_names(path[:depth]) and config_field(path[:depth]) is None:
            names = section_names(path[: depth - 1])
            close = suggest(path[depth - 1], names)
            hint = f"; did you mean {', '.join(close)}?" if close else (f" (it has: {', '.join(names)})" if names else "")
            raise SettingsRefusal(f"unknown key {key}: no {path[depth - 1]!r} here{hint}", EXIT_USAGE)
    raise SettingsRefusal(f"unknown key {key}", EXIT_USAGE)  # pragma: no cover - the loop always finds it


def _config_default(path: tuple[str, ...]) -> Any:
    known = config_field(path)
    if known is not None:
        return known.default
    n = len(path)
    out: dict[str, Any] = {}
    for p, f in CONFIG_FIELDS.items():
        if p[:n] == path and len(p) > n:
            node = out
            for segment in p[n:-1]:
                node = node.setdefault(segment, {})
            node[p[-1]] = f.default
    return out


def _resolve_config(key: Key, layers: dict[str, ConfigLayer]) -> Resolution:
    order = ("user",) if key.path in USER_ONLY else ("user", "project")
    default = _config_default(key.path)
    setting = [layers[x] for x in order if not is_missing(lookup(layers[x].section, key.path))]
    if not setting:
        return Resolution(str(key), default, default, DEFAULT_LAYER, None)
    # A section merges its layers over the defaults, as the runtime reads it; a value comes from the top.
    value = merge_raw([default, *(lookup(found.section, key.path) for found in setting)])
    top = setting[-1]
    origin = top.origins.get((*top.prefix_for(key.path), *key.path))
    return Resolution(str(key), value, default, top.layer, str(top.path), origin.line if origin else None)


def _edit_config(
    layer: ConfigLayer, path: tuple[str, ...], edit: Callable[[EditableDocument, tuple[str, ...]], bool]
) -> bool:
    doc = editable_document(layer.path, editable_text(layer.path) if layer.path.is_file() else None)
    try:
        changed = edit(doc, (*layer.prefix_for(path), *path))
    except PathIntoScalar as exc:
        raise SettingsRefusal(f"{layer.path}: {exc}", EXIT_USAGE) from None
    if changed:
        write_atomically(layer.path, doc.text())
    return changed


def _set_config(args: Any, key: Key, given: tuple[Any, bool] | None = None) -> int:
    layer_name = target_layer(args.project_layer)
    if key.path in USER_ONLY and layer_name == "project":
        raise SettingsRefusal(
            f"{key} can be set only in the user layer ({_paths(args).config_file}): a project cannot grant "
            "trust to itself; run the command without --project", EXIT_REJECTED)
    value, flow = given or _value(args.value)
    problem = value_problem(key.path, value)
    if problem:
        raise SettingsRefusal(f"{key} {problem}; nothing was written", EXIT_REJECTED)
    layers = _config_layers(_paths(args))
    # The project file overrides every config key but trust, which only the user file holds.
    stored = {} if key.path in USER_ONLY else {name: layer.section for name, layer in layers.items()}
    if overriding_layer(key.path, layer_name, stored) is not None:
        raise SettingsRefusal(
            f"{key} is overridden by the project layer ({layers['project'].path}); nothing was written. "
            "Set it there with --project, or unset it there first", EXIT_OVERRIDDEN)
    target = layers[layer_name]
    _edit_config(target, key.path, lambda doc, where: (doc.set(where, value, flow=flow), True)[1])
    return _done(args, f"{key} = {render(value)}  ({layer_name}: {target.path})", key, layer_name, target.path,
                 "set", value)


def _unset_config(args: Any, key: Key) -> int:
    layer_name = target_layer(args.project_layer)
    target = _config_layers(_paths(args))[layer_name]
    if _edit_config(target, key.path, lambda doc, where: doc.delete(where)):
        return _done(args, f"{key} removed from the {layer_name} layer ({target.path})", key, layer_name,
                     target.path, "unset")
    return _nothing_to_do(args, f"{key} is not set in the {layer_name} layer; nothing to do", key, layer_name,
                          target.path)


# --- sensor keys ------------------------------------------------------------------------------------


def check_field_key(key: Key, sensor: Sensor) -> None:
    """Refuse a key that names no field of `sensor` (what `get` and `set` refuse first).

    Raises:
        SettingsRefusal: exit 2, with a did-you-mean.
    """
    check_sensor_key(key, sensor)
    check_not_through_scalar(key, shown_document(sensor))


def _checked_sensor(args: Any, key: Key) -> Sensor:
    """The key's sensor, once the key is known to name a field of it."""
    sensor = require_sensor(load_set(args.project_dir), key.sensor or "")
    check_field_key(key, sensor)
    return sensor


def _refuse_whole_sensor(key: Key, verb: str) -> None:
    if key.path:
        return
    what = ("set one of its fields, or use attend sensors copy" if verb == "set"
            else f"to remove a file use attend sensors delete {key.sensor}")
    raise SettingsRefusal(f"{key} is a whole sensor: {what}", EXIT_USAGE)


@dataclass(frozen=True, slots=True)
class SensorEdit:
    """One planned `settings set|unset` of a sensor key: the file it writes and the text it leaves there.

    `text` is the file's whole new text (None: the file is removed); `change` is `set`, `unset` or
    `file-deleted`; `value` the value set. Nothing is written until `apply_edit(files, layer, text)`.
    """

    key: Key
    layer: str
    path: Path
    text: str | None
    change: str
    value: Any = None


def plan_sensor_set(
    files: SensorFiles, sensor: Sensor, key: Key, value_text: str, layer: str,
    given: tuple[Any, bool] | None = None,
) -> SensorEdit:
    """What `settings set KEY VALUE` would write to `layer`'s file of `sensor` (nothing is written).

    The checks `set` makes after the key's own: VALUE is YAML, no higher layer overrides the key, and
    the key does not go through a scalar of the file. The whole-sensor validation is `apply_edit`'s
    (or `check_edit`'s, which writes nothing). `given` is the value already parsed (value, flow style), as
    `settings add|remove` computes it; `value_text` is then not read.

    Raises:
        SettingsRefusal: with the reason and the exit code `set` would give.
    """
    _refuse_whole_sensor(key, "set")
    value, flow = given or _value(value_text)
    # Only files that take effect override: the loaded sensor's files, where a project file refused for
    # trust is not among them (build_sensor already applied the gate; no need to build it again).
    stored = {f.layer: f.data for f in sensor.files}
    higher = overriding_layer(key.path, layer, stored)
    if higher is not None:
        raise SettingsRefusal(
            f"{key} is overridden by the {higher} layer ({files.path(higher)}), so setting it in the {layer} "
            f"layer would change nothing; nothing was written. "
            + ("Set it there with --project, or unset it there first" if higher == "project"
               else "Unset it there first"), EXIT_OVERRIDDEN)
    doc = files.document(layer)
    try:
        doc.set(key.path, value, flow=flow)
    except PathIntoScalar as exc:
        raise SettingsRefusal(f"{key} goes inside a value that is not a mapping in {files.path(layer)}: {exc}",
                              EXIT_USAGE) from None
    return SensorEdit(key, layer, files.path(layer), doc.text(), "set", value)


class NothingToUnset(SettingsRefusal):
    """`unset` of a key the layer's file does not set: nothing to do (exit 0), said on stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_OK)


def plan_sensor_unset(files: SensorFiles, sensor: Sensor, key: Key, layer: str) -> SensorEdit:
    """What `settings unset KEY` would leave in `layer`'s file of `sensor` (nothing is written).

    Raises:
        NothingToUnset: the layer's file does not set the key.
        SettingsRefusal: with the reason and the exit code `unset` would give.
    """
    _refuse_whole_sensor(key, "unset")
    doc = files.document(layer)
    if not doc.has(key.path):
        # An unknown key that no file sets is a typo; a known one is simply not set in this layer.
        check_sensor_key(key, sensor, deep_trigger_must_exist=False)
        where = [lay for lay, f in files.files.items() if not is_missing(lookup(f.data, key.path))]
        also = f" (it is set in: {', '.join(where)})" if where else ""
        raise NothingToUnset(f"{key} is not set in the {layer} layer; nothing to do{also}")
    doc.delete(key.path)
    others = [lay for lay in files.layers() if lay != layer]
    if frozenset(doc.keys()) <= IDENTITY_FIELDS:
        if not others:
            raise SettingsRefusal(
                f"removing {key} would leave {files.path(layer)} empty and remove sensor {sensor.name}; "
                f"to do that, use attend sensors delete {sensor.name}", EXIT_REJECTED)
        return SensorEdit(key, layer, files.path(layer), None, "file-deleted")
    return SensorEdit(key, layer, files.path(layer), doc.text(), "unset")


def _set_sensor(args: Any, key: Key, given: tuple[Any, bool] | None = None) -> int:
    _refuse_whole_sensor(key, "set")
    sensor = _checked_sensor(args, key)
    layer = target_layer(args.project_layer)
    files = SensorFiles.read(_paths(args), sensor.name)
    edit = plan_sensor_set(files, sensor, key, args.value, layer, given)
    apply_edit(files, layer, edit.text)
    return _done(args, f"{key} = {render(edit.value)}  ({layer}: {edit.path})", key, layer, edit.path,
                 "set", edit.value)


_UNSET_DONE = {
    "unset": "{key} removed from the {layer} layer ({path})",
    "file-deleted": "{key} removed; {path} held nothing else, so it was deleted",
}


def _unset_sensor(args: Any, key: Key) -> int:
    _refuse_whole_sensor(key, "unset")
    sensor = require_sensor(load_set(args.project_dir), key.sensor or "")
    layer = target_layer(args.project_layer)
    files = SensorFiles.read(_paths(args), sensor.name)
    try:
        edit = plan_sensor_unset(files, sensor, key, layer)
    except NothingToUnset as nothing:
        return _nothing_to_do(args, nothing.message, key, layer, files.path(layer))
    apply_edit(files, layer, edit.text)
    return _done(args, _UNSET_DONE[edit.change].format(key=key, layer=layer, path=edit.path), key, layer,
                 edit.path, edit.change)


# --- the handlers -----------------------------------------------------------------------------------


def _get(args: Any) -> int:
    key = _key(args.key)
    if key.scope == "config":
        _check_config_key(key)
        res = _resolve_config(key, _config_layers(_paths(args)))
    else:
        res = resolve(key, _checked_sensor(args, key))
    if args.json:
        _print_json(res.to_json())
        return EXIT_OK
    print(render(res.value))
    where = f"{res.file}:{res.line}" if res.file and res.line else (res.file or "no file sets it")
    print(f"# layer: {res.layer}, file: {where}, default: {render(res.default)}")
    return EXIT_OK


def _by_scope(args: Any, on_config: Callable[[Any, Key], int], on_sensor: Callable[[Any, Key], int]) -> int:
    """Parse the key and hand it to the config-key or the sensor-key form of a command."""
    key = _key(args.key)
    if key.scope == "config":
        _check_config_key(key)
        return on_config(args, key)
    return on_sensor(args, key)


def _list_edit(args: Any, adding: bool) -> int:
    """`add`/`remove`: the key's effective list with VALUE added or removed, then written as `set` writes it.

    The effective list (not only the target layer's) is the starting point, so adding to a list a lower
    layer sets extends what runs instead of replacing it; the result is written to the target layer.
    """
    key = _key(args.key)
    if key.scope == "config":
        _check_config_key(key)
        current = _resolve_config(key, _config_layers(_paths(args))).value
    else:
        if not key.path:
            raise SettingsRefusal(f"{key} is a whole sensor, not a list", EXIT_USAGE)
        current = resolve(key, _checked_sensor(args, key)).value
    if current is None:
        current = []
    if not isinstance(current, builtins.list):
        raise SettingsRefusal(f"{key} holds {yaml_kind(current)}, not a list; use attend settings set", EXIT_USAGE)
    item, _ = _value(args.value)
    present = any(same_value(item, x) for x in current)
    if present == adding:
        layer = target_layer(args.project_layer)
        file = _paths(args).config_file if key.scope == "config" else None
        state = "already in" if adding else "not in"
        return _nothing_to_do(args, f"{render(item)} is {state} {key}; nothing to do", key, layer,
                              file or Path(resolve_file(args, key)))
    new = [*current, item] if adding else [x for x in current if not same_value(item, x)]
    set_form = _set_config if key.scope == "config" else _set_sensor
    return set_form(args, key, (new, False))


def resolve_file(args: Any, key: Key) -> str:
    """The file a sensor key's write goes to (for a report that changes nothing)."""
    return str(SensorFiles.read(_paths(args), key.sensor or "").path(target_layer(args.project_layer)))


def _matches(prefix: tuple[str, ...] | None, segments: tuple[str, ...]) -> bool:
    return prefix is None or segments[: len(prefix)] == prefix


def _list(args: Any) -> int:
    prefix: tuple[str, ...] | None = None
    if args.key:
        try:
            prefix = tuple(split_segments(args.key))
        except KeySyntaxError as exc:
            raise SettingsRefusal(f"bad prefix: {exc}", EXIT_USAGE) from None
    paths = _paths(args)
    sset = load_set(args.project_dir)
    stored: list[dict[str, Any]] = []
    effective: list[dict[str, Any]] = []
    for name, sensor in sset.sensors.items():
        base = ("attend", "sensors", name)
        if prefix is not None and not (_matches(prefix, base) or _matches(base, prefix)):
            continue
        # A project file left out for trust is still stored: it is listed, marked refused.
        left_out = paths.project / f"{name}.yaml"
        extra = [read_sensor_file(left_out, "project")] if left_out.is_file() and \
            "project" not in {f.layer for f in sensor.files} else []
        for sensor_file in (*sensor.files, *extra):
            # Refused too: the project file of a sensor that only the (untrusted) project defines.
            refused = sensor_file in extra or (sensor.status == "refused" and sensor_file.layer == "project")
            for path, value in flatten(sensor_file.data or {}):
                origin = sensor_file.origins.get(path)
                stored.append({"key": format_key((*base, *path)), "segments": (*base, *path), "value": value,
                               "layer": sensor_file.layer, "file": str(sensor_file.path),
                               "line": origin.line if origin else None, "refused": refused})
        for path, _ in flatten(shown_document(sensor)):
            res = resolve(Key("sensor", path, name), sensor)
            effective.append({**res.to_json(), "segments": (*base, *path)})
    layers = _config_layers(paths)
    for layer in layers.values():
        for path, value in flatten(layer.section):
            if path[:1] == ("sensors",):
                continue  # old keys: `attend settings lint` reports them
            origin = layer.origins.get((*layer.prefix_for(path), *path))
            stored.append({"key": format_key(("attend", *path)), "segments": ("attend", *path), "value": value,
                           "layer": layer.layer, "file": str(layer.path), "line": origin.line if origin else None,
                           "refused": layer.layer == "project" and path[:1] == ("project_sensors",)})
    for path in CONFIG_FIELDS:
        res = _resolve_config(Key("config", path), layers)
        effective.append({**res.to_json(), "segments": ("attend", *path)})
    stored = [e for e in stored if _matches(prefix, e.pop("segments"))]
    effective = [e for e in effective if _matches(prefix, e.pop("segments"))]
    if prefix is not None and not stored and not effective:
        names = [*sset.sensors] if prefix[:2] == ("attend", "sensors") and len(prefix) > 2 else []
        close = suggest(prefix[2], names) if names else []
        hint = f"; did you mean attend.sensors.{close[0]}?" if close else ""
        raise SettingsRefusal(f"no key starts with {args.key}{hint}", EXIT_USAGE)
    if args.json:
        _print_json({"stored": stored, "effective": effective})
        return EXIT_OK
    print("stored (what each file sets):")
    for e in stored:
        where = f"{e['file']}:{e['line']}" if e["line"] else e["file"]
        refused = "  (refused: not read)" if e["refused"] else ""
        print(f"  {e['key']} = {render(e['value'])}    [{e['layer']}] {where}{refused}")
    print("effective (what runs):")
    for e in effective:
        print(f"  {e['key']} = {render(e['value'])}    [{e['layer']}]")
    return EXIT_OK


def _help(args: Any) -> int:
    key = _key(args.key)
    if key.scope == "config":
        _check_config_key(key)
        known = config_field(key.path)
        doc = {"key": str(key), "description": known.description if known else f"the {key.path[-1]} section",
               "type": known.type if known else "mapping", "allowed": None,
               "default": _config_default(key.path), "fields": section_names(key.path)}
    else:
        check_sensor_key(key, None)
        field = describe(key.path) if key.path else None
        doc = {"key": str(key),
               "description": field.description if field else "a sensor: one YAML file per layer, merged by key",
               "type": field.type if field else "mapping",
               "allowed": [*field.allowed] if field and field.allowed else None,
               "default": field.default if field else None,
               "fields": [*known_fields(key.path)]}
    if args.json:
        _print_json(doc)
        return EXIT_OK
    print(doc["key"])
    print(f"  {doc['description']}")
    print(f"  type: {doc['type']}")
    if doc["allowed"]:
        print(f"  allowed: {', '.join(str(a) for a in doc['allowed'])}")
    if doc["default"] is not None:
        print(f"  default: {render(doc['default'])}")
    if doc["fields"]:
        print(f"  fields: {', '.join(doc['fields'])}")
    return EXIT_OK


def _lint(args: Any) -> int:
    found = legacy_keys(_paths(args))
    if args.json:
        _print_json([d.to_json() for d in found])
    elif found:
        for diagnostic in found:
            print(diagnostic)
    else:
        print("no old sensors: keys in config.yaml or .claude/attend.yaml")
    return EXIT_FOUND if found else EXIT_OK


def get(args: Any) -> int:
    """`attend settings get KEY [--json]`: the effective value, its default, layer and file."""
    return run_refusable(lambda: _get(args))


def set(args: Any) -> int:  # noqa: A001 - the command's name
    """`attend settings set KEY VALUE [--project]`: validate the resulting sensor, then write one file."""
    return run_refusable(lambda: _by_scope(args, _set_config, _set_sensor))


def add(args: Any) -> int:
    """`attend settings add KEY VALUE [--project]`: add VALUE to a list key (nothing when it is there)."""
    return run_refusable(lambda: _list_edit(args, adding=True))


def remove(args: Any) -> int:
    """`attend settings remove KEY VALUE [--project]`: remove VALUE from a list key (nothing when absent)."""
    return run_refusable(lambda: _list_edit(args, adding=False))


def unset(args: Any) -> int:
    """`attend settings unset KEY [--project]`: remove the key from that layer's file."""
    return run_refusable(lambda: _by_scope(args, _unset_config, _unset_sensor))


def list(args: Any) -> int:  # noqa: A001 - the command's name
    """`attend settings list [PREFIX] [--json]`: what each file sets, and what runs."""
    return run_refusable(lambda: _list(args))


def help(args: Any) -> int:  # noqa: A001 - the command's name
    """`attend settings help KEY [--json]`: the field's description, type, allowed values and default."""
    return run_refusable(lambda: _help(args))


def lint(args: Any) -> int:
    """`attend settings lint [--json]`: each old `sensors:` key, with the sensor file and field replacing it."""
    return run_refusable(lambda: _lint(args))
