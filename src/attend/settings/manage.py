"""`attend sensors copy|rename|delete`: the named-item flow over sensor files (ADR-403 §5).

Decisions (docs/settings.md):

- copy SRC DST writes DST's file in the user layer (the project layer with `--project`). When SRC is
  one file, the copy is that file with `name` changed, comments and all; when SRC is merged from several
  layers, the copy is the effective merged definition as written in the files (durations as written,
  no defaults filled in), the usual way to start a variant of what runs now. Any sensor can be copied,
  shipped ones included.
- rename OLD NEW moves OLD's file of the layer to NEW (`name` changed, the rest kept). When that file
  is an override of a lower layer's sensor, NEW receives the merged definition of the layers up to
  this one and the override is removed, so OLD falls back to the lower layer. A shipped sensor with no
  file in the layer cannot be renamed.
- delete NAME deletes NAME's file of the layer: an override falls back to the lower layers; a shipped
  sensor with no file in the layer cannot be deleted (turn it off with `enabled: false`).
- rename and delete take the sensor's test file (`<name>.test.yaml` beside the layer's file) along:
  rename moves it to `<new>.test.yaml` (its `sensor:` line, if any, changed to the new name), delete
  deletes it. A test file already at the new name refuses the rename (exit 3) before anything moves.
- Names follow `^[a-z0-9][a-z0-9_-]*$` (exit 2 otherwise), so no write leaves the layer folders; no
  action overwrites an existing sensor (exit 3). Every new file is validated before it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from attend.errors import EXIT_REJECTED, EXIT_USAGE, EXIT_WRITE_FAILED, reason
from attend.files import WriteFailed, remove_file, write_atomically
from attend.settings.document import EditableDocument
from attend.settings.edits import SensorFiles, apply_edit
from attend.settings.policy import (
    SettingsRefusal,
    delete_refusal,
    name_problem,
    rename_refusal,
)
from attend.settings.resolve import merge_raw, require_readable, require_sensor
from attend.spec.config import load_config
from attend.spec.layers import layer_paths, load_set
from attend.spec.loaded import LAYERS, MergedSensor, SensorSet

__all__ = ["Managed", "copy_sensor", "delete_sensor", "rename_sensor", "test_file"]

#: The fields a new file starts with, in this order; the rest follow in the source's order.
LEADING_FIELDS = ("spec", "name", "description", "kind")


def _check_name(name: str) -> None:
    problem = name_problem(name)
    if problem:
        raise SettingsRefusal(problem, EXIT_USAGE)


def _refuse_existing(sset: SensorSet, files: SensorFiles) -> None:
    if files.name in sset.sensors or files.layers():
        where = ", ".join(files.layers()) or "a layer"
        raise SettingsRefusal(
            f"a sensor named {files.name} already exists ({where}): choose another name, or delete it first",
            EXIT_REJECTED)


def _renamed_text(source: SensorFiles, layer: str, new_name: str) -> str:
    """`layer`'s file of `source` with its `name` changed: every other byte kept."""
    doc = source.document(layer)
    doc.set(("name",), new_name)
    return doc.text()


def _merged_text(source: SensorFiles, layers: tuple[str, ...], new_name: str) -> str:
    """The merged definition of `source`'s files in `layers`, as a new file named `new_name`."""
    merged = merge_raw(source.files[layer].data for layer in layers if source.files[layer].data is not None)
    if not isinstance(merged, dict):
        raise SettingsRefusal(f"{source.name} has no readable definition to copy", EXIT_REJECTED)
    merged = {**merged, "name": new_name}
    ordered = {k: merged[k] for k in LEADING_FIELDS if k in merged}
    ordered.update((k, v) for k, v in merged.items() if k not in ordered)
    doc = EditableDocument(None)
    for key, value in ordered.items():
        doc.set((key,), value)
    return doc.text()


def _copy_text(source: SensorFiles, layers: tuple[str, ...], new_name: str) -> str:
    if len(layers) == 1:
        return _renamed_text(source, layers[0], new_name)
    return _merged_text(source, layers, new_name)


@dataclass(slots=True)
class Managed:
    """What a copy, rename or delete did: `lines` for standard output, `notes` for standard error."""

    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Move:
    """What copy and rename work on: the source sensor, its files, the destination's, the layer written."""

    sset: SensorSet
    sensor: MergedSensor
    source: SensorFiles
    dest: SensorFiles
    layer: str

    @classmethod
    def prepare(cls, project_dir: str | Path, source: str, dest: str, layer: str) -> _Move:
        _check_name(source)
        _check_name(dest)
        paths = layer_paths(project_dir)
        sset = load_set(project_dir)
        sensor = require_readable(require_sensor(sset, source))
        config = load_config(paths)  # once for both sensors' trust
        return cls(sset, sensor, SensorFiles.read(paths, sensor.name, config),
                   SensorFiles.read(paths, dest, config), layer)


def copy_sensor(project_dir: str | Path, source: str, dest: str, layer: str) -> Managed:
    """Copy sensor `source` to a new sensor `dest` in `layer` (`sensors copy`; the tab's copy).

    Raises:
        SettingsRefusal: with the reason and exit code; nothing was written.
    """
    move = _Move.prepare(project_dir, source, dest, layer)
    sensor, src, dst = move.sensor, move.source, move.dest
    _refuse_existing(move.sset, dst)
    # What runs: the files the loaded sensor is made of (a refused project file is not among them).
    used = tuple(f.layer for f in sensor.files)
    apply_edit(dst, layer, _copy_text(src, used, dest))
    return Managed([f"copied {sensor.name} ({', '.join(used)}) to {dest} in the {layer} layer: {dst.path(layer)}"])


def test_file(files: SensorFiles, layer: str) -> Path:
    """Where the test file beside `layer`'s file of the sensor is (or would be)."""
    return files.path(layer).with_name(f"{files.name}.test.yaml")


def _renamed_test_text(path: Path, old: str, new: str) -> str:
    """The test file at `path` for sensor `new`: a top-level `sensor: old` line changed, every other byte kept.

    A line edit, not a YAML round trip: the round-trip writer re-flows flow collections (`[{id: 1}]`
    would come back as `[id: 1]`), and a test file is the user's own text.
    """
    text = path.read_text(encoding="utf-8")
    line = re.compile(rf"^(sensor:[ \t]*)(['\"]?){re.escape(old)}\2(?=[ \t]*(?:#|$))", re.MULTILINE)
    return line.sub(lambda m: f"{m.group(1)}{m.group(2)}{new}{m.group(2)}", text, count=1)


def rename_sensor(project_dir: str | Path, source: str, dest: str, layer: str) -> Managed:
    """Rename `source`'s file of `layer` to `dest`, and its test file with it (`sensors rename`; the tab's rename).

    Raises:
        SettingsRefusal: with the reason and exit code; nothing was renamed.
    """
    move = _Move.prepare(project_dir, source, dest, layer)
    sensor, src, dst = move.sensor, move.source, move.dest
    refusal = rename_refusal(sensor.name, dest, layer, src.layers(),
                             new_exists=dest in move.sset.sensors or bool(dst.layers()))
    if refusal:
        raise SettingsRefusal(refusal, EXIT_REJECTED)
    old_test, new_test = test_file(src, layer), test_file(dst, layer)
    test_text = None
    if old_test.is_file():
        if new_test.exists():
            raise SettingsRefusal(f"{new_test} already exists: move or delete it first; nothing was renamed",
                                  EXIT_REJECTED)
        try:
            test_text = _renamed_test_text(old_test, sensor.name, dest)
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsRefusal(f"cannot read {old_test} ({reason(exc)}); nothing was renamed", EXIT_REJECTED) from None
    upto = tuple(x for x in src.layers() if LAYERS.index(x) <= LAYERS.index(layer))
    apply_edit(dst, layer, _copy_text(src, upto, dest))
    written = [dst.path(layer)]
    try:
        if test_text is not None:
            write_atomically(new_test, test_text)
            written.append(new_test)
        remove_file(src.path(layer))
    except WriteFailed as exc:
        # Leave no second copy behind: the new files go again, so the rename did not happen at all.
        for path in written:
            try:
                remove_file(path)
            except WriteFailed:
                pass
        raise SettingsRefusal(f"{exc}; nothing was renamed", EXIT_WRITE_FAILED) from None
    done = Managed([f"renamed {sensor.name} to {dest} in the {layer} layer: {dst.path(layer)}"])
    if test_text is not None:
        try:
            remove_file(old_test)
        except WriteFailed as exc:
            done.notes.append(f"note: {exc}; remove {old_test} yourself")
        done.lines.append(f"moved its test file to {new_test}")
    lower = [x for x in upto if x != layer]
    if lower:
        done.lines.append(f"{sensor.name} now runs its {lower[-1]} definition again")
    done.notes.extend(_higher_notes(src, layer))
    return done


def delete_sensor(project_dir: str | Path, name: str, layer: str) -> Managed:
    """Delete `name`'s file of `layer` (`sensors delete`; the tab's delete).

    Raises:
        SettingsRefusal: with the reason and exit code; nothing was deleted.
    """
    _check_name(name)
    paths = layer_paths(project_dir)
    sensor = require_sensor(load_set(project_dir), name)
    files = SensorFiles.read(paths, sensor.name)
    refusal = delete_refusal(sensor.name, layer, files.layers())
    if refusal:
        raise SettingsRefusal(refusal, EXIT_REJECTED)
    remove_file(files.path(layer))
    done = Managed([f"deleted {files.path(layer)} (the {layer} layer)"])
    tests = test_file(files, layer)
    if tests.is_file():
        try:
            remove_file(tests)
            done.lines.append(f"deleted {tests}")
        except WriteFailed as exc:
            done.notes.append(f"note: {exc}; remove {tests} yourself")
    lower = [x for x in files.layers() if LAYERS.index(x) < LAYERS.index(layer)]
    if lower:
        done.lines.append(f"{sensor.name} now runs its {lower[-1]} definition")
    done.notes.extend(_higher_notes(files, layer))
    return done


def _higher_notes(files: SensorFiles, layer: str) -> list[str]:
    """Say when a higher layer still holds a file for the old name (it is left alone)."""
    higher = [x for x in files.layers() if LAYERS.index(x) > LAYERS.index(layer)]
    return [f"note: {files.path(x)} ({x} layer) still names {files.name}; it was left as it is" for x in higher]








