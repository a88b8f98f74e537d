"""What loading produces: sensor files, merged sensors with provenance, and the set of them (ADR-403 §2).

These are the types every consumer of the spec shares (compiler, runtime, settings, the CLI). The code
that fills them lives beside this module (`loading.py`, `layers.py`, `validate/`); `reader.py` reads a merged
document's fields into `ir.Sensor` (`MergedSensor.ir`).
"""

from __future__ import annotations

from pathlib import Path

from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, Literal

    from attend import ir

from attend.errors import Diagnostic, Severity, Span, by_position

__all__ = ["LAYERS", "KeyPath", "LayerPaths", "MergedSensor", "Origin", "SensorFile", "SensorSet"]

#: The layers, lowest first. A later layer overrides any field of an earlier one.
LAYERS: tuple[str, ...] = ("shipped", "user", "project")

if TYPE_CHECKING:
    Layer = Literal["shipped", "user", "project"]

#: A field's address inside a sensor document: ("triggers", "high-wind", "where", "wind_*", "above").
KeyPath = tuple[str, ...]


@record(frozen=True)
class Origin:
    """Where a field's value came from: its layer, file and the position of the value and its key.

    `style` is the YAML scalar style of the value (None for plain, `'` or `"` for quoted, `|` or `>`
    for block scalars), so an expression's error can point inside the scalar (`Span.shifted`).
    """

    layer: str
    file: str
    line: int
    col: int
    key_line: int = 0
    key_col: int = 0
    style: str | None = None

    @property
    def span(self) -> Span:
        """The value's position as a Span."""
        return Span(self.file, self.line, self.col)

    @property
    def key_span(self) -> Span:
        """The key's position as a Span (the value's, when the field has no key)."""
        if self.key_line:
            return Span(self.file, self.key_line, self.key_col)
        return self.span

    @property
    def quote(self) -> int:
        """How many characters stand before the scalar's text starts (1 for a quoted scalar)."""
        return 1 if self.style in ("'", '"') else 0


@record
class SensorFile:
    """One YAML file of one layer, as read: its plain data and the origin of every key path in it."""

    name: str
    layer: str
    path: Path
    data: dict[str, Any] | None = None
    origins: dict[KeyPath, Origin] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file parsed into a mapping without errors."""
        return self.data is not None and not any(d.severity == Severity.ERROR for d in self.diagnostics)


@record
class MergedSensor:
    """A sensor merged across its layers.

    `data` is the merged document, validated and normalised: defaults filled in, durations as float
    seconds, `triggers` a mapping keyed by trigger name. `origins` maps every key path present in some
    file to where its effective value came from (defaults have no origin). `status` is `ok`, `invalid`
    (see `diagnostics`) or `refused` (a project file that chooses what runs, from an untrusted project).
    """

    name: str
    data: dict[str, Any]
    origins: dict[KeyPath, Origin] = field(default_factory=dict)
    files: tuple[SensorFile, ...] = ()
    diagnostics: list[Diagnostic] = field(default_factory=list)
    status: Literal["ok", "invalid", "refused"] = "ok"
    #: `ir` once read (the document is never changed after merging).
    read_fields: ir.Sensor | None = field(default=None, compare=False, repr=False)

    @property
    def ir(self) -> ir.Sensor:
        """The sensor's fields as a typed record (`spec.reader.read_sensor`), what the compiler and the runtime
        read; `data` is the document itself, for what shows or edits it."""
        if self.read_fields is None:
            from attend.spec.reader import read_sensor

            self.read_fields = read_sensor(self.data)
        return self.read_fields

    @property
    def layer(self) -> str:
        """The highest layer that contributes a file."""
        return self.files[-1].layer if self.files else "shipped"

    @property
    def file(self) -> Path | None:
        """The highest-layer file that contributes to this sensor."""
        return self.files[-1].path if self.files else None

    @property
    def kind(self) -> str | None:
        """The sensor's kind (`crate`, `command` or `mcp`), when it has one."""
        return self.ir.kind

    @property
    def enabled(self) -> bool:
        """Whether the merged sensor is enabled."""
        return self.ir.enabled

    def origin(self, *path: str) -> Origin | None:
        """The origin of the value at key path `path`, or None for a default."""
        return self.origins.get(tuple(path))


@record(frozen=True)
class LayerPaths:
    """The folders and files each layer reads, resolved from the XDG variables and the project."""

    shipped: Path
    shipped_projection: Path
    user: Path
    project: Path
    project_dir: Path
    config_file: Path
    project_config_file: Path
    state_dir: Path

    def folder(self, layer: str) -> Path:
        """The sensor folder of `layer`."""
        return {"shipped": self.shipped, "user": self.user, "project": self.project}[layer]


@record
class SensorSet:
    """Every sensor of every layer, plus the problems that belong to no single sensor."""

    sensors: dict[str, MergedSensor]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: LayerPaths | None = None

    def all_diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic, the set's own and each sensor's, sorted by file, line and column."""
        out = list(self.diagnostics)
        for sensor in self.sensors.values():
            out.extend(sensor.diagnostics)
        unique = list(dict.fromkeys(out))  # the first of equal diagnostics, in order
        return sorted(unique, key=by_position)
