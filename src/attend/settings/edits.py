"""Validate-then-write: one sensor file changed, the whole merged sensor checked first (ADR-403 §5).

Every write of `settings set|unset` and `sensors copy|rename` goes through here. The new text of the
target layer's file is parsed the way the loader parses it, merged with the sensor's other layers
(spec's `build_sensor`, with the project-trust gate) and validated, expressions included (the
compiler's `diagnose`). Only then is the file written, atomically. A refused change writes nothing.

Decision: an edit is refused when it adds an error the sensor did not have before. Errors that were
already there (from another field or another layer) are reported, but do not block an edit, so a
broken sensor can be repaired one key at a time. An edit to the project layer is refused when it adds or
changes what the project file chooses to run (`kind`, `command…`, `mcp…`) and the project is not listed
in `project_sensors`, instead of writing a file the daemon would then ignore; tuning a file that already
chooses what runs is judged like any tuning edit (its trust standing is what it was).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from attend.errors import EXIT_REJECTED, EXIT_WRITE_FAILED, Diagnostic, Severity
from attend.files import WriteFailed, remove_file, write_atomically
from attend.settings.document import DocumentError, EditableDocument, same_value
from attend.settings.policy import SettingsRefusal
from attend.spec.config import Config, load_config
from attend.spec.layers import RUN_CHOOSING, build_sensor, trust_command
from attend.spec.loaded import LAYERS, LayerPaths, MergedSensor, SensorFile
from attend.spec.loading import parse_yaml, read_sensor_file, read_source

__all__ = [
    "SensorFiles", "apply_edit", "check_edit", "editable_document", "editable_text", "expression_errors", "new_errors",
    "sensor_file_from_text",
]


@dataclass(slots=True)
class SensorFiles:
    """One sensor's files as they are on disk, per layer, and whether the project is trusted."""

    name: str
    paths: LayerPaths
    trusted: bool
    files: dict[str, SensorFile] = field(default_factory=dict)
    #: Texts of layers replaced by `with_text` (not on disk); None: that layer's file removed.
    texts: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def read(cls, paths: LayerPaths, name: str, config: Config | None = None) -> SensorFiles:
        """Read `name`'s file in every layer that has one.

        Args:
            paths: the layer paths.
            name: the sensor.
            config: the config files already read for this command (default: read them now).
        """
        config = config if config is not None else load_config(paths)
        found = cls(name, paths, config.trusts(paths.project_dir))
        for layer in LAYERS:
            path = found.path(layer)
            if path.is_file():
                found.files[layer] = read_sensor_file(path, layer)
        return found

    def path(self, layer: str) -> Path:
        """Where `layer`'s file for this sensor is (or would be)."""
        return self.paths.folder(layer) / f"{self.name}.yaml"

    def text(self, layer: str) -> str | None:
        """The current text of `layer`'s file, None when there is none.

        Raises:
            SettingsRefusal: when the file exists but cannot be read as text (exit 3).
        """
        if layer in self.texts:
            return self.texts[layer]
        return editable_text(self.path(layer)) if layer in self.files else None

    def document(self, layer: str) -> EditableDocument:
        """`layer`'s file held for editing (an empty document when there is none).

        Raises:
            SettingsRefusal: when the file cannot be read or is not a YAML mapping (exit 3).
        """
        return editable_document(self.path(layer), self.text(layer))

    def with_text(self, layer: str, text: str | None) -> SensorFiles:
        """These files with `layer`'s replaced by `text` not yet written (None: that file removed).

        What a pending edit would leave, read exactly as the loader would read it once written.
        """
        changed = SensorFiles(self.name, self.paths, self.trusted, dict(self.files), dict(self.texts))
        changed.texts[layer] = text
        if text is None:
            changed.files.pop(layer, None)
        else:
            changed.files[layer] = sensor_file_from_text(self.name, layer, self.path(layer), text)
        return changed

    def layers(self) -> tuple[str, ...]:
        """The layers that hold a file for this sensor, lowest first."""
        return tuple(layer for layer in LAYERS if layer in self.files)

    def build(self, replaced: dict[str, SensorFile | None] | None = None) -> MergedSensor | None:
        """The merged sensor, with some layers' files replaced (None: removed); None when no file is left."""
        chosen = dict(self.files)
        for layer, sensor_file in (replaced or {}).items():
            if sensor_file is None:
                chosen.pop(layer, None)
            else:
                chosen[layer] = sensor_file
        ordered = [chosen[layer] for layer in LAYERS if layer in chosen]
        if not ordered:
            return None
        return build_sensor(self.name, ordered, trusted=self.trusted, config_file=self.paths.config_file)


def editable_text(path: Path) -> str:
    """The text of an existing file about to be edited (settings' sensor and config files alike).

    Raises:
        SettingsRefusal: when the file cannot be read as text (exit 3).
    """
    text, problems = read_source(path)
    if text is None:
        raise SettingsRefusal(f"{path} cannot be edited: {problems[0].message}", EXIT_REJECTED)
    return text


def editable_document(path: Path, text: str | None) -> EditableDocument:
    """`path`'s text (None: no file yet) held for editing.

    Raises:
        SettingsRefusal: when the text is not YAML or not a mapping, so it must be fixed by hand (exit 3).
    """
    try:
        return EditableDocument(text)
    except DocumentError as exc:
        raise SettingsRefusal(f"{_unreadable_reason(path, text or '', exc)}; fix it by hand first", EXIT_REJECTED) from None


def _unreadable_reason(path: Path, text: str, exc: DocumentError) -> str:
    """Why `path`'s `text` cannot be edited: the loader's positioned one-line error (`file:line:col: error:
    [yaml-syntax] ...`, as `compile --check` prints it) when it finds one, else the editor's own reason."""
    problem = next((d for d in parse_yaml(text, str(path)).diagnostics if d.severity == Severity.ERROR), None)
    return str(problem) if problem else f"{path} cannot be edited ({exc})"


def sensor_file_from_text(name: str, layer: str, path: Path, text: str) -> SensorFile:
    """A `SensorFile` for text not yet written, parsed exactly as the loader would parse it at `path`."""
    parsed = parse_yaml(text, str(path), layer)
    sensor_file = SensorFile(name=name, layer=layer, path=path, origins=parsed.origins,
                             diagnostics=list(parsed.diagnostics))
    if isinstance(parsed.data, dict):
        sensor_file.data = parsed.data
    return sensor_file


def expression_errors(sensor: MergedSensor) -> list[Diagnostic]:
    """The compiler's expression errors (paths, templates, patterns, regexes, operators) of `sensor`."""
    from attend.compiler import diagnose

    return [d for d in diagnose(sensor) if d.severity == Severity.ERROR]


def _errors(sensor: MergedSensor | None) -> list[Diagnostic]:
    if sensor is None:
        return []
    errors = [d for d in sensor.diagnostics if d.severity == Severity.ERROR]
    if not errors and sensor.data:  # an edit is checked as a document (settings edits the document itself)
        errors.extend(expression_errors(sensor))
    return errors


def new_errors(before: MergedSensor | None, after: MergedSensor) -> list[Diagnostic]:
    """The errors of `after` that `before` did not have (compared by code and message, not position)."""
    known = {(d.code, d.message) for d in _errors(before)}
    return [d for d in _errors(after) if (d.code, d.message) not in known]


def _changed_run_choice(before: SensorFile | None, after: SensorFile) -> tuple[str, ...] | None:
    """The first key path through which `after` chooses what runs differently from `before` (None: the
    same choice, or none): what an edit would add that needs trust."""
    old = (before.data or {}) if before is not None else {}
    new = after.data or {}
    for top in RUN_CHOOSING:
        if top in new and not (top in old and same_value(old[top], new[top])):
            value, was = new[top], old.get(top)
            if isinstance(value, dict):
                changed = [k for k in value if not (isinstance(was, dict) and k in was and same_value(was[k], value[k]))]
                return (top, changed[0]) if changed else (top,)
            return (top,)
    return None


def _trust_refusal(files: SensorFiles, before: SensorFile | None, after: SensorFile) -> str | None:
    """Why writing `after` as the project file is refused for trust, or None.

    Only what the write changes is judged: tuning a file that already chooses what runs (its `interval`,
    a trigger) adds nothing that needs trust, and is written as any tuning field is (the daemon goes on
    refusing that file until the project is trusted, as it did before). A write that adds or changes
    `kind`, `command…` or `mcp…` of an untrusted project is refused.
    """
    chosen = _changed_run_choice(before, after)
    if files.trusted or chosen is None:
        return None
    return (
        f"the project file would set `{'.'.join(chosen)}`, which chooses what runs, and this project is not "
        f"listed in project_sensors of {files.paths.config_file}, so the daemon would refuse it. "
        f"To trust the project: {trust_command(files.paths.project_dir)}"
    )


def _refusal_text(errors: list[Diagnostic]) -> str:
    lines = [f"  {d.file}:{d.line}:{d.col}: [{d.code}] {d.message}" for d in errors]
    return "the change would make the sensor invalid, so nothing was written:\n" + "\n".join(lines)


def check_edit(files: SensorFiles, layer: str, new_text: str | None, *, before: MergedSensor | None = None) -> MergedSensor | None:
    """Validate `layer`'s file replaced by `new_text` (None: the file removed); write nothing.

    Args:
        files: the sensor's files.
        layer: the layer whose file changes.
        new_text: its new text, None for the file removed.
        before: the sensor the edit is judged against (default: `files` as they are); an error it
            already has does not block the edit.

    Returns:
        The merged sensor after the edit (None when no file of the sensor is left).

    Raises:
        SettingsRefusal: exit 3 when the result is invalid or would be refused for trust.
    """
    path = files.path(layer)
    before = before if before is not None else files.build()
    replacement = None if new_text is None else sensor_file_from_text(files.name, layer, path, new_text)
    after = files.build({layer: replacement})
    if replacement is not None and layer == "project":
        refusal = _trust_refusal(files, files.files.get(layer), replacement)
        if refusal:
            raise SettingsRefusal(refusal, EXIT_REJECTED)
    if after is not None:
        added = new_errors(before, after)
        if added:
            raise SettingsRefusal(_refusal_text(added), EXIT_REJECTED)
    return after


def apply_edit(files: SensorFiles, layer: str, new_text: str | None) -> MergedSensor | None:
    """Validate `layer`'s file replaced by `new_text` (None: the file removed), then write it.

    Returns:
        The merged sensor after the edit (None when no file of the sensor is left).

    Raises:
        SettingsRefusal: exit 3 when the result is invalid or would be refused for trust, exit 5 when
            the write fails; in every case the file is as it was.
    """
    path = files.path(layer)
    after = check_edit(files, layer, new_text)
    try:
        if new_text is None:
            remove_file(path)
        else:
            write_atomically(path, new_text)
    except WriteFailed as exc:
        raise SettingsRefusal(f"{exc}; the file is as it was", EXIT_WRITE_FAILED) from None
    return after
