"""What a settings write would change, computed without printing: `plan_sensor_set|unset` (the CLI and
the sensors tab), the config.yaml layers, `render` (a value as one line of YAML)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from attend.errors import (
    EXIT_OK,
    EXIT_OVERRIDDEN,
    EXIT_REJECTED,
    EXIT_USAGE,
)
from attend.files import write_atomically
from attend.settings.config_keys import (
    USER_ONLY,
    config_default,
    config_field,
    section_names,
    value_problem,
)
from attend.settings.document import (
    EditableDocument,
    PathIntoScalar,
)
from attend.settings.edits import (
    SensorFiles,
    editable_document,
    editable_text,
)
from attend.settings.keys import (
    Key,
    suggest,
)
from attend.settings.policy import SettingsRefusal, overriding_layer
from attend.settings.resolve import (
    DEFAULT_LAYER,
    Resolution,
    check_not_through_scalar,
    check_sensor_key,
    is_missing,
    lookup,
    merge_raw,
    shown_document,
)
from attend.spec.config import config_entries
from attend.spec.loaded import LayerPaths, MergedSensor
from attend.spec.loading import parse_yaml, read_yaml_file
from attend.spec.schema import describe

#: Fields that stay in an override file that no longer overrides anything; such a file is deleted.
IDENTITY_FIELDS = frozenset({"spec", "name"})

__all__ = [
    "IDENTITY_FIELDS", "YAML_INDICATORS", "ConfigLayer", "NothingToUnset", "SensorEdit", "check_config_key",
    "check_field_key", "config_default", "config_layers", "edit_config", "key_type", "parse_value",
    "plan_sensor_set", "plan_sensor_unset", "refuse_whole_sensor", "render", "resolve_config", "set_config", "takes_literal",
]


def render(value: object) -> str:
    """A value as one line of YAML (flow style), as `get` and `list` print it."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 16, sort_keys=False, allow_unicode=True)
    if text.endswith("\n...\n"):  # pyyaml closes a lone scalar document with an end marker
        text = text[: -len("...\n")]
    return text.strip()


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


def config_layers(paths: LayerPaths) -> dict[str, ConfigLayer]:
    return {"user": ConfigLayer.read("user", paths.config_file),
            "project": ConfigLayer.read("project", paths.project_config_file)}


def check_config_key(key: Key) -> None:
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


def resolve_config(key: Key, layers: dict[str, ConfigLayer]) -> Resolution:
    order = ("user",) if key.path in USER_ONLY else ("user", "project")
    default = config_default(key.path)
    setting = [layers[x] for x in order if not is_missing(lookup(layers[x].section, key.path))]
    if not setting:
        return Resolution(str(key), default, default, DEFAULT_LAYER, None)
    # A section merges its layers over the defaults, as the runtime reads it; a value comes from the top.
    value = merge_raw([default, *(lookup(found.section, key.path) for found in setting)])
    top = setting[-1]
    origin = top.origins.get((*top.prefix_for(key.path), *key.path))
    return Resolution(str(key), value, default, top.layer, str(top.path), origin.line if origin else None)


def edit_config(
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


def set_config(paths: LayerPaths, key: Key, value: Any, layer_name: str, *, flow: bool = False,
               write: bool = True) -> ConfigLayer:
    """Check `value` for config key `key` and write it into `layer_name`'s config.yaml: what `attend settings
    set` does for a config key (and `attend tune --apply`); the layer written. With `write` False only the
    checks run (a caller writing several keys checks them all first).

    Raises:
        SettingsRefusal: a user-only key in the project layer or a bad value (exit 3), a key the project layer
            overrides (exit 4); nothing is written.
    """
    if key.path in USER_ONLY and layer_name == "project":
        raise SettingsRefusal(
            f"{key} can be set only in the user layer ({paths.config_file}): a project cannot grant "
            "trust to itself; write it with --layer user", EXIT_REJECTED)
    problem = value_problem(key.path, value)
    if problem:
        raise SettingsRefusal(f"{key} {problem}; nothing was written", EXIT_REJECTED)
    layers = config_layers(paths)
    # The project file overrides every config key but trust, which only the user file holds.
    stored = {} if key.path in USER_ONLY else {name: layer.section for name, layer in layers.items()}
    if overriding_layer(key.path, layer_name, stored) is not None:
        raise SettingsRefusal(
            f"{key} is overridden by the project layer ({layers['project'].path}); nothing was written. "
            "Set it there with --layer project, or unset it there first", EXIT_OVERRIDDEN)
    target = layers[layer_name]
    if write:
        def put(doc: Any, where: Any) -> bool:
            doc.set(where, value, flow=flow)
            return True

        edit_config(target, key.path, put)
    return target


def check_field_key(key: Key, sensor: MergedSensor) -> None:
    """Refuse a key that names no field of `sensor` (what `get` and `set` refuse first).

    Raises:
        SettingsRefusal: exit 2, with a did-you-mean.
    """
    check_sensor_key(key, sensor)
    check_not_through_scalar(key, shown_document(sensor))


def refuse_whole_sensor(key: Key, verb: str) -> None:
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
    files: SensorFiles, sensor: MergedSensor, key: Key, value_text: str, layer: str,
    given: tuple[object, bool] | None = None, as_yaml: bool = False,
) -> SensorEdit:
    """What `settings set KEY VALUE` would write to `layer`'s file of `sensor` (nothing is written).

    The checks `set` makes after the key's own: VALUE is YAML, no higher layer overrides the key, and
    the key does not go through a scalar of the file. The whole-sensor validation is `apply_edit`'s
    (or `check_edit`'s, which writes nothing). `given` is the value already parsed (value, flow style), as
    `settings add|remove` computes it; `value_text` is then not read. A string field takes `value_text`
    as typed unless `as_yaml` (`set --yaml`).

    Raises:
        SettingsRefusal: with the reason and the exit code `set` would give.
    """
    refuse_whole_sensor(key, "set")
    value, flow = given or parse_value(value_text, not as_yaml and takes_literal(key_type(key)))
    # Only files that take effect override: the loaded sensor's files, where a project file refused for
    # trust is not among them (build_sensor already applied the gate; no need to build it again).
    stored = {f.layer: f.data for f in sensor.files}
    higher = overriding_layer(key.path, layer, stored)
    if higher is not None:
        raise SettingsRefusal(
            f"{key} is overridden by the {higher} layer ({files.path(higher)}), so setting it in the {layer} "
            f"layer would change nothing; nothing was written. "
            + ("Set it there with --layer project, or unset it there first" if higher == "project"
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


def plan_sensor_unset(files: SensorFiles, sensor: MergedSensor, key: Key, layer: str) -> SensorEdit:
    """What `settings unset KEY` would leave in `layer`'s file of `sensor` (nothing is written).

    Raises:
        NothingToUnset: the layer's file does not set the key.
        SettingsRefusal: with the reason and the exit code `unset` would give.
    """
    refuse_whole_sensor(key, "unset")
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


#: Characters that start a YAML alias, anchor, tag, directive, block scalar or flow collection, not a
#: plain string (a glob such as `*berlin*`, a template such as `{title} is new`).
YAML_INDICATORS = frozenset("*&!%@`|>{[")


def key_type(key: Key) -> str | None:
    """The type of the value a key holds, as `settings help` names it (None: the spec does not say)."""
    if key.scope == "config":
        known = config_field(key.path)
        return known.type if known else None
    field = describe(key.path) if key.path else None
    return field.type if field else None


def takes_literal(type_name: str | None, item: bool = False) -> bool:
    """Whether a key of this type (`describe`'s or `config_field`'s) reads VALUE as the literal string.

    A string key (or, for `add`/`remove`, a list-of-strings key) has only one reading: the text as
    typed, so `PR #{id} needs review` keeps its ` #…` and `{title} is new` needs no quoting.
    """
    if type_name is None:
        return False
    return type_name.startswith("list of string") if item else type_name == "string"


def parse_value(text: str, literal: bool = False) -> tuple[object, bool]:
    """VALUE as the key takes it, and whether it was written inline.

    `literal` (a string key, see `takes_literal`): the text itself. Otherwise VALUE is parsed as YAML
    (safe, the loader's own reading); a VALUE that YAML reads as less than was typed (a ` #…` comment
    dropped) is refused, never written silently.

    Raises:
        SettingsRefusal: exit 3, with the reason and, where quoting helps, a pasteable command.
    """
    if literal:
        return text, False
    import shlex

    quoted = shlex.quote(json.dumps(text, ensure_ascii=False))  # YAML's double quotes, then the shell's
    parsed = parse_yaml(text, "VALUE")
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    if errors:
        hint = ""
        if text[:1] in YAML_INDICATORS:
            hint = (f"; a string starting with {text[0]!r} must be quoted inside the value, "
                    f"e.g. attend settings set KEY {quoted}")
        raise SettingsRefusal(f"VALUE is not valid YAML: {errors[0].message}{hint}", EXIT_REJECTED)
    comment = _comment_at(text)
    if comment is not None:
        raise SettingsRefusal(
            f"VALUE holds a YAML comment ({text[comment:]!r}), which YAML drops: nothing was written; to keep "
            f"it in the value, quote it inside the value, e.g. attend settings set KEY {quoted}", EXIT_REJECTED)
    return parsed.data, text.lstrip().startswith(("{", "["))


def _comment_at(text: str) -> int | None:
    """Where the YAML comment in `text` starts (a `#` outside every token), or None."""
    if "#" not in text:
        return None
    spans = [(t.start_mark.index, t.end_mark.index) for t in yaml.scan(text)
             if not isinstance(t, (yaml.StreamStartToken, yaml.StreamEndToken))]
    for at, char in enumerate(text):
        if char == "#" and not any(start <= at < end for start, end in spans):
            return at
    return None
