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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    EXIT_WRITE_FAILED,
    Refusal,
)
from attend.files import WriteFailed
from attend.settings.config_keys import (
    CONFIG_FIELDS,
    config_field,
    section_names,
)
from attend.settings.document import (
    WouldNotReadBack,
    same_value,
    yaml_kind,
)
from attend.settings.edits import (
    SensorFiles,
    apply_edit,
)
from attend.settings.keys import (
    Key,
    KeySyntaxError,
    format_key,
    parse_key,
    split_segments,
    suggest,
)
from attend.settings.plans import (
    NothingToUnset,
    check_config_key,
    check_field_key,
    config_default,
    config_layers,
    edit_config,
    key_type,
    parse_value,
    plan_sensor_set,
    plan_sensor_unset,
    refuse_whole_sensor,
    render,
    resolve_config,
    set_config,
    takes_literal,
)
from attend.settings.policy import SettingsRefusal, target_layer
from attend.settings.resolve import (
    check_sensor_key,
    flatten,
    is_missing,
    lookup,
    require_readable,
    require_sensor,
    resolve,
    shown_document,
)
from attend.spec.config import legacy_keys, shown_config_value
from attend.spec.headers import shown_value
from attend.spec.layers import layer_paths, load_set
from attend.spec.loaded import LAYERS, LayerPaths, MergedSensor
from attend.spec.loading import read_sensor_file
from attend.spec.schema import describe, known_fields

if TYPE_CHECKING:
    from typing import Protocol

    from attend.commands import JsonArgs, ProjectArgs

    class SettingsArgs(JsonArgs, Protocol):
        """`settings get|set|unset|add|remove|help KEY` (set, add, remove: VALUE and --yaml too)."""

        key: str
        value: str

    class ListArgs(JsonArgs, Protocol):
        """`settings list [PREFIX]`."""

        key: str | None

__all__ = ["add", "get", "help", "lint", "list", "remove", "run_refusable", "set", "unset"]





def run_refusable(action: Callable[[], int]) -> int:
    """Run a command body; a refusal becomes its message on stderr and its exit code."""
    try:
        return action()
    except Refusal as refusal:
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






def _literal(args: SettingsArgs, key: Key, item: bool = False) -> bool:
    """Whether VALUE is the literal string: a string key (a list-of-strings key's item), unless --yaml."""
    return not getattr(args, "yaml", False) and takes_literal(key_type(key), item)


def _print_json(data: object) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _done(args: SettingsArgs, text: str, key: Key, layer: str, file: Path, change: str, value: object = None) -> int:
    """Report a write: `text` for people; with --json `{key, change, value, layer, file}`."""
    if getattr(args, "json", False):
        _print_json({"key": str(key), "change": change, "value": value, "layer": layer, "file": str(file)})
    else:
        print(text)
    return EXIT_OK


def _nothing_to_do(args: SettingsArgs, text: str, key: Key, layer: str, file: Path) -> int:
    print(text, file=sys.stderr)
    if getattr(args, "json", False):
        _print_json({"key": str(key), "change": "none", "value": None, "layer": layer, "file": str(file)})
    return EXIT_OK


def _paths(args: ProjectArgs) -> LayerPaths:
    return layer_paths(args.project_dir)


# --- config.yaml keys -------------------------------------------------------------------------------














def _set_config(args: SettingsArgs, key: Key, given: tuple[object, bool] | None = None) -> int:
    layer_name = target_layer(args.project_layer)
    value, flow = given or parse_value(args.value, _literal(args, key))
    target = set_config(_paths(args), key, value, layer_name, flow=flow)
    shown = shown_config_value(key.path, value)  # a secret setting is never repeated
    return _done(args, f"{key} = {render(shown)}  ({layer_name}: {target.path})", key, layer_name, target.path,
                 "set", shown)


def _unset_config(args: SettingsArgs, key: Key) -> int:
    layer_name = target_layer(args.project_layer)
    target = config_layers(_paths(args))[layer_name]
    if edit_config(target, key.path, lambda doc, where: doc.delete(where)):
        return _done(args, f"{key} removed from the {layer_name} layer ({target.path})", key, layer_name,
                     target.path, "unset")
    return _nothing_to_do(args, f"{key} is not set in the {layer_name} layer; nothing to do", key, layer_name,
                          target.path)


# --- sensor keys ------------------------------------------------------------------------------------




def _checked_sensor(args: SettingsArgs, key: Key) -> MergedSensor:
    """The key's sensor, once the key is known to name a field of it."""
    sensor = require_readable(require_sensor(load_set(args.project_dir), key.sensor or ""))
    check_field_key(key, sensor)
    return sensor












def _set_sensor(args: SettingsArgs, key: Key, given: tuple[object, bool] | None = None) -> int:
    refuse_whole_sensor(key, "set")
    sensor = _checked_sensor(args, key)
    layer = target_layer(args.project_layer)
    files = SensorFiles.read(_paths(args), sensor.name)
    edit = plan_sensor_set(files, sensor, key, args.value, layer, given, as_yaml=getattr(args, "yaml", False))
    _note_refused(layer, apply_edit(files, layer, edit.text))
    shown = shown_value(key.path, edit.value)  # the report repeats no header's literal credential
    return _done(args, f"{key} = {render(shown)}  ({layer}: {edit.path})", key, layer, edit.path, "set", shown)


def _note_refused(layer: str, after: MergedSensor | None) -> None:
    """Say on stderr when the project file just written is still left out for trust: a tuning edit of a file
    that already chooses what runs is written, but runs only once the project is trusted."""
    for diagnostic in after.diagnostics if after is not None and layer == "project" else []:
        if diagnostic.code == "project-refused":
            print(f"note: {diagnostic.message}", file=sys.stderr)


_UNSET_DONE = {
    "unset": "{key} removed from the {layer} layer ({path})",
    "file-deleted": "{key} removed from the {layer} layer; {path} held nothing else, so it was deleted",
}


def _unset_sensor(args: SettingsArgs, key: Key) -> int:
    refuse_whole_sensor(key, "unset")
    sensor = require_readable(require_sensor(load_set(args.project_dir), key.sensor or ""))
    layer = target_layer(args.project_layer)
    files = SensorFiles.read(_paths(args), sensor.name)
    try:
        edit = plan_sensor_unset(files, sensor, key, layer)
    except NothingToUnset as nothing:
        return _nothing_to_do(args, nothing.message, key, layer, files.path(layer))
    _note_refused(layer, apply_edit(files, layer, edit.text))
    return _done(args, _UNSET_DONE[edit.change].format(key=key, layer=layer, path=edit.path), key, layer,
                 edit.path, edit.change)


# --- the handlers -----------------------------------------------------------------------------------


def _get(args: SettingsArgs) -> int:
    key = _key(args.key)
    if key.scope == "config":
        check_config_key(key)
        res = resolve_config(key, config_layers(_paths(args)))
        res = replace(res, value=shown_config_value(key.path, res.value))  # a secret setting is hidden
    else:
        res = resolve(key, _checked_sensor(args, key))
        res = replace(res, value=shown_value(key.path, res.value))  # a header's literal credential is hidden
    if args.json:
        _print_json(res.to_json())
        return EXIT_OK
    print(render(res.value))
    where = f"{res.file}:{res.line}" if res.file and res.line else (res.file or "no file sets it")
    print(f"# layer: {res.layer}, file: {where}, default: {render(res.default)}")
    return EXIT_OK


def _by_scope(args: SettingsArgs, on_config: Callable[[SettingsArgs, Key], int], on_sensor: Callable[[SettingsArgs, Key], int]) -> int:
    """Parse the key and hand it to the config-key or the sensor-key form of a command."""
    key = _key(args.key)
    if key.scope == "config":
        check_config_key(key)
        return on_config(args, key)
    return on_sensor(args, key)


def _list_edit(args: SettingsArgs, adding: bool) -> int:
    """`add`/`remove`: the key's effective list with VALUE added or removed, then written as `set` writes it.

    The effective list (not only the target layer's) is the starting point, so adding to a list a lower
    layer sets extends what runs instead of replacing it; the result is written to the target layer.
    """
    key = _key(args.key)
    if key.scope == "config":
        check_config_key(key)
        current = resolve_config(key, config_layers(_paths(args))).value
    else:
        if not key.path:
            raise SettingsRefusal(f"{key} is a whole sensor, not a list", EXIT_USAGE)
        current = resolve(key, _checked_sensor(args, key)).value
    if current is None:
        current = []
    if not isinstance(current, builtins.list):
        raise SettingsRefusal(f"{key} holds {yaml_kind(current)}, not a list; use attend settings set", EXIT_USAGE)
    item, _ = parse_value(args.value, _literal(args, key, item=True))
    present = any(same_value(item, x) for x in current)
    if present == adding:
        layer = target_layer(args.project_layer)
        file = _paths(args).config_file if key.scope == "config" else None
        state = "already in" if adding else "not in"
        return _nothing_to_do(args, f"{render(item)} is {state} {key}; nothing to do", key, layer,
                              file or Path(resolve_file(args, key)))
    new = [*current, item] if adding else [x for x in current if not same_value(item, x)]
    below = _below(args, key)
    if same_value(new, [] if below is None else below):
        # The list the layers under the target give (or the default) overrides nothing: unset it, as
        # `unset` would (an override file left with nothing else is deleted).
        return (_unset_config if key.scope == "config" else _unset_sensor)(args, key)
    set_form = _set_config if key.scope == "config" else _set_sensor
    return set_form(args, key, (new, False))


def _below(args: SettingsArgs, key: Key) -> Any:
    """The key's value without the target layer: what the layers under it (or the default) give."""
    layer = target_layer(args.project_layer)
    if key.scope == "config":
        lower: builtins.list[dict[str, Any] | None] = [config_layers(_paths(args))["user"].section] if layer == "project" else []
        default = config_default(key.path)
    else:
        files = SensorFiles.read(_paths(args), key.sensor or "")
        lower = [f.data for name, f in files.files.items() if LAYERS.index(name) < LAYERS.index(layer)]
        field = describe(key.path)
        default = field.default if field else None
    found = [v for v in (lookup(d or {}, key.path) for d in lower) if not is_missing(v)]
    return found[-1] if found else default


def resolve_file(args: SettingsArgs, key: Key) -> str:
    """The file a sensor key's write goes to (for a report that changes nothing)."""
    return str(SensorFiles.read(_paths(args), key.sensor or "").path(target_layer(args.project_layer)))


def _matches(prefix: tuple[str, ...] | None, segments: tuple[str, ...]) -> bool:
    return prefix is None or segments[: len(prefix)] == prefix


def _list(args: ListArgs) -> int:
    prefix: tuple[str, ...] | None = None
    if args.key:
        try:
            prefix = tuple(split_segments(args.key))
        except KeySyntaxError as exc:
            raise SettingsRefusal(f"bad prefix: {exc}", EXIT_USAGE) from None
    paths = _paths(args)
    sset = load_set(args.project_dir)
    stored: builtins.list[dict[str, Any]] = []  # `list` is this module's command
    effective: builtins.list[dict[str, Any]] = []
    unreadable: builtins.list[str] = []  # a sensor with a file that could not be read: its error, not defaults
    for name, sensor in sset.sensors.items():
        base = ("attend", "sensors", name)
        if prefix is not None and not (_matches(prefix, base) or _matches(base, prefix)):
            continue
        try:
            require_readable(sensor)
        except SettingsRefusal as refusal:
            if prefix is not None and _matches(base, prefix):
                raise  # the prefix is inside this sensor: there is nothing else to list
            unreadable.append(refusal.message)
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
                stored.append({"key": format_key((*base, *path)), "segments": (*base, *path),
                               "value": shown_value(path, value),
                               "layer": sensor_file.layer, "file": str(sensor_file.path),
                               "line": origin.line if origin else None, "refused": refused})
        for path, _ in flatten(shown_document(sensor)):
            res = resolve(Key("sensor", path, name), sensor)
            effective.append({**res.to_json(), "value": shown_value(path, res.value), "segments": (*base, *path)})
    layers = config_layers(paths)
    for layer in layers.values():
        for path, value in flatten(layer.section):
            if path[:1] == ("sensors",):
                continue  # old keys: `attend settings lint` reports them
            origin = layer.origins.get((*layer.prefix_for(path), *path))
            stored.append({"key": format_key(("attend", *path)), "segments": ("attend", *path),
                           "value": shown_config_value(path, value),
                           "layer": layer.layer, "file": str(layer.path), "line": origin.line if origin else None,
                           "refused": layer.layer == "project" and path[:1] == ("project_sensors",)})
    for path in CONFIG_FIELDS:
        res = resolve_config(Key("config", path), layers)
        effective.append({**res.to_json(), "value": shown_config_value(path, res.value), "segments": ("attend", *path)})
    stored = [e for e in stored if _matches(prefix, e.pop("segments"))]
    effective = [e for e in effective if _matches(prefix, e.pop("segments"))]
    if prefix is not None and not stored and not effective:
        names = [*sset.sensors] if prefix[:2] == ("attend", "sensors") and len(prefix) > 2 else []
        close = suggest(prefix[2], names) if names else []
        hint = f"; did you mean attend.sensors.{close[0]}?" if close else ""
        raise SettingsRefusal(f"no key starts with {args.key}{hint}", EXIT_USAGE)
    if args.json:
        _print_json({"stored": stored, "effective": effective})
    else:
        print("stored (what each file sets):")
        for e in stored:
            where = f"{e['file']}:{e['line']}" if e["line"] else e["file"]
            note = "  (refused: not read)" if e["refused"] else ""
            print(f"  {e['key']} = {render(e['value'])}    [{e['layer']}] {where}{note}")
        print("effective (what runs):")
        for e in effective:
            print(f"  {e['key']} = {render(e['value'])}    [{e['layer']}]")
    for message in unreadable:
        print(f"attend: {message}", file=sys.stderr)
    return EXIT_REJECTED if unreadable else EXIT_OK


def _help(args: SettingsArgs) -> int:
    key = _key(args.key)
    if key.scope == "config":
        check_config_key(key)
        known = config_field(key.path)
        doc = {"key": str(key), "description": known.description if known else f"the {key.path[-1]} section",
               "type": known.type if known else "mapping", "allowed": None,
               "default": config_default(key.path), "fields": section_names(key.path)}
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


def _lint(args: JsonArgs) -> int:
    found = legacy_keys(_paths(args))
    if args.json:
        _print_json([d.to_json() for d in found])
    elif found:
        for diagnostic in found:
            print(diagnostic)
    else:
        print("no old sensors: keys in config.yaml or .claude/attend.yaml")
    return EXIT_FAILED if found else EXIT_OK


def get(args: SettingsArgs) -> int:
    """`attend settings get KEY [--json]`: the effective value, its default, layer and file."""
    return run_refusable(lambda: _get(args))


def set(args: SettingsArgs) -> int:  # noqa: A001 - the command's name
    """`attend settings set KEY VALUE [--project]`: validate the resulting sensor, then write one file."""
    return run_refusable(lambda: _by_scope(args, _set_config, _set_sensor))


def add(args: SettingsArgs) -> int:
    """`attend settings add KEY VALUE [--project]`: add VALUE to a list key (nothing when it is there)."""
    return run_refusable(lambda: _list_edit(args, adding=True))


def remove(args: SettingsArgs) -> int:
    """`attend settings remove KEY VALUE [--project]`: remove VALUE from a list key (nothing when absent)."""
    return run_refusable(lambda: _list_edit(args, adding=False))


def unset(args: SettingsArgs) -> int:
    """`attend settings unset KEY [--project]`: remove the key from that layer's file."""
    return run_refusable(lambda: _by_scope(args, _unset_config, _unset_sensor))


def list(args: ListArgs) -> int:  # noqa: A001 - the command's name
    """`attend settings list [PREFIX] [--json]`: what each file sets, and what runs."""
    return run_refusable(lambda: _list(args))


def help(args: SettingsArgs) -> int:  # noqa: A001 - the command's name
    """`attend settings help KEY [--json]`: the field's description, type, allowed values and default."""
    return run_refusable(lambda: _help(args))


def lint(args: JsonArgs) -> int:
    """`attend settings lint [--json]`: each old `sensors:` key, with the sensor file and field replacing it."""
    return run_refusable(lambda: _lint(args))
