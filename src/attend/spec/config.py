"""config.yaml: the trust list, engagement and governor parameters, and the old `sensors:` keys (ADR-403 §2, §7).

Two files: the user's `$XDG_CONFIG_HOME/attend/config.yaml` and the project's `.claude/attend.yaml`.
Their keys may stand at the top level or under one `attend:` mapping (the settings key prefix).
`project_sensors` is read from the user file only: a project file cannot grant trust to itself, so
the key there is ignored and reported. The old `sensors:` section (and its inline `script:` form) has
no reader any more: `legacy_keys` reports each key with the sensor file to write and the field to set.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from attend.records import field, record

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.bounds import MAX_COUNT, MAX_MAGNITUDE
from attend.errors import Diagnostic, Severity
from attend.spec.durations import ACCEPTED_FORMS, is_duration, parse_duration
from attend.spec.loading import ParsedYaml, read_yaml_file
from attend.spec.model import LayerPaths, Origin
from attend.spec.yamltext import yaml_text

__all__ = [
    "CONDUITS", "CONFIG_KEYS", "DELIVERY_CHOICES", "ENGAGEMENT_FIELDS", "GOVERNOR_FIELDS", "GOVERNOR_LANES", "Config", "config_value_problem",
    "legacy_keys", "load_config", "project_trusted",
]

#: The keys config.yaml understands (besides the old `sensors:` section, reported by `legacy_keys`).
CONFIG_KEYS = ("project_sensors", "engagement", "governor", "delivery")
#: The fields of `engagement:`: (kind, lowest value, whether that value itself is allowed). Below it the
#: model breaks: `relative_half_life` and `live_window` divide or bound time (0 divides by zero or makes
#: no fire live), `relative_after: 0` would turn the refractory on with no fire to measure from, and a
#: `relative_peak` under 1 would lower the threshold after a burst instead of raising it. Durations take
#: the sensor files' forms (`90`, `90s`, `1m`). The defaults are the runtime's (runtime/engagement.py).
ENGAGEMENT_FIELDS: dict[str, tuple[str, float, bool]] = {
    "absolute_refractory": ("duration", 0.0, True),
    "relative_peak": ("number", 1.0, True),
    "relative_half_life": ("duration", 0.0, False),
    "relative_after": ("integer", 1, True),
    "live_window": ("duration", 0.0, False),
}
#: The lanes of `governor:`, and the fields of each (as ENGAGEMENT_FIELDS; runtime/governor.py).
GOVERNOR_LANES = ("event", "message")
GOVERNOR_FIELDS: dict[str, tuple[str, float, bool]] = {
    "cooldown": ("duration", 0.0, True),
    "limit": ("integer", 0, True),
    "window": ("duration", 0.0, False),
}
#: The conduits a session's lines go through (`delivery.conduits`; DESIGN.md, "Delivery"): auto (the hooks
#: step in while the session's Monitor is not live), monitor (the Monitor stream only), hooks (the hooks only).
CONDUITS = ("auto", "monitor", "hooks")
#: The fields of `delivery:` that take one of a few words, and those words (the first is the default).
DELIVERY_CHOICES: dict[str, tuple[str, ...]] = {"conduits": CONDUITS}
#: Old per-sensor fields that keep their name in a sensor file.
_SAME_FIELD = ("interval", "min_interval", "threshold", "decay_threshold", "requires", "enabled", "description",
               "lane")


@record
class Config:
    """What config.yaml and .claude/attend.yaml say, merged (project over user, except trust)."""

    project_sensors: tuple[Path, ...] = ()
    engagement: dict[str, Any] = field(default_factory=dict)
    governor: dict[str, Any] = field(default_factory=dict)
    delivery: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def trusts(self, project_dir: Path | str) -> bool:
        """Whether `project_dir` is listed in `project_sensors`."""
        return project_trusted(self.project_sensors, project_dir)


def project_trusted(listed: tuple[Path, ...], project_dir: Path | str) -> bool:
    """True when the resolved `project_dir` equals one resolved entry of `listed`."""
    wanted = Path(project_dir).expanduser().resolve()
    return any(entry == wanted for entry in listed)


def config_entries(parsed: ParsedYaml) -> list[tuple[str, Any, tuple[str, ...]]]:
    """Each (key, value, key-path prefix) of attend's keys: top-level ones, then those under `attend:`.

    Both forms may stand in one file; for a section in both, the `attend:` one's keys win (they come
    later). `attend settings` reads config files through this too, so both see the same keys.
    """
    data = parsed.data if isinstance(parsed.data, dict) else {}
    out = [(key, value, ()) for key, value in data.items() if key != "attend"]
    nested = data.get("attend")
    if isinstance(nested, dict):
        out.extend((key, value, ("attend",)) for key, value in nested.items())
    return out


def _read(path: Path, layer: str) -> ParsedYaml | None:
    if not path.is_file():
        return None
    return read_yaml_file(path, layer)


def _at(parsed: ParsedYaml, path: tuple[str, ...], file: str) -> tuple[str, int, int]:
    origin: Origin | None = parsed.origins.get(path)
    if origin is None:
        return file, 1, 1
    return origin.file, origin.key_line or origin.line, origin.key_col or origin.col


def load_config(paths: LayerPaths) -> Config:
    """Read the user's config.yaml and the project's .claude/attend.yaml.

    Args:
        paths: the layer paths (`config_file`, `project_config_file`).

    Returns:
        A `Config`; unreadable files, wrong types, a `project_sensors` in the project file and the old
        `sensors:` keys are in `diagnostics` (never raised).
    """
    config = Config()
    for layer, path in (("user", paths.config_file), ("project", paths.project_config_file)):
        parsed = _read(path, layer)
        if parsed is None:
            continue
        config.diagnostics.extend(parsed.diagnostics)
        if parsed.data is None:
            continue
        file = str(path)
        if not isinstance(parsed.data, dict):
            config.diagnostics.append(Diagnostic(file, 1, 1, "not-a-mapping", "a config file is a mapping of keys"))
            continue
        for key, value, prefix in config_entries(parsed):
            where = _at(parsed, (*prefix, key), file)
            if key == "project_sensors":
                if layer == "project":
                    config.diagnostics.append(Diagnostic(
                        *where, "untrusted-key",
                        "project_sensors in a project file is ignored: a project cannot grant trust to itself; "
                        f"list the project in {paths.config_file} instead", Severity.WARNING))
                    continue
                config.project_sensors, problems = _trust_list(value, parsed, (*prefix, key), file)
                config.diagnostics.extend(problems)
            elif key in ("engagement", "governor"):
                if not isinstance(value, dict):
                    config.diagnostics.append(Diagnostic(*where, "wrong-type", f"`{key}` must be a mapping"))
                    continue
                checker = _Section(parsed, (*prefix, key), file, config.diagnostics)
                if key == "engagement":
                    config.engagement.update(checker.fields(value, ENGAGEMENT_FIELDS, "engagement"))
                else:
                    for lane, fields in checker.lanes(value).items():
                        config.governor.setdefault(lane, {}).update(fields)
            elif key == "delivery":
                if not isinstance(value, dict):
                    config.diagnostics.append(Diagnostic(*where, "wrong-type", "`delivery` must be a mapping"))
                    continue
                config.delivery.update(_Section(parsed, (*prefix, key), file, config.diagnostics).choices(value))
            elif key != "sensors":
                from difflib import (
                    get_close_matches,  # only on a typo: difflib is slow to import
                )
                close = get_close_matches(key, [*CONFIG_KEYS, "sensors"], n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else f" (known: {', '.join(CONFIG_KEYS)})"
                config.diagnostics.append(Diagnostic(*where, "unknown-field", f"unknown config key `{key}`{hint}",
                                                     Severity.WARNING))
        config.diagnostics.extend(_legacy_from(parsed, layer, file, paths))
    return config


def config_value_problem(kind: str, minimum: float, inclusive: bool, value: Any) -> tuple[str, str] | None:
    """Why `value` cannot stand in a config field of `kind` and bound: (code, message), or None.

    Checked before any conversion (a 400-digit number is refused, never handed to `float()`).
    """
    if kind == "duration":
        if not is_duration(value):
            return "bad-duration", f"{_short(value)} is not a duration: use {ACCEPTED_FORMS}"
        number: float = parse_duration(value)
    elif isinstance(value, bool) or not isinstance(value, int if kind == "integer" else int | float):
        wanted = "a whole number" if kind == "integer" else "a number"
        return "wrong-type", f"must be {wanted}, not {_short(value)}"
    elif isinstance(value, float) and not math.isfinite(value):
        return "bad-number", f"must be a finite number, not {_short(value)}"
    elif value > (MAX_COUNT if kind == "integer" else MAX_MAGNITUDE):
        return "bad-value", f"must be at most {MAX_COUNT if kind == 'integer' else int(MAX_MAGNITUDE):,}"
    else:
        number = value
    if number < minimum or not inclusive and number == minimum:
        return "bad-value", f"must be {'at least' if inclusive else 'more than'} {minimum:g}, not {_short(value)}"
    return None


def _short(value: Any) -> str:
    return yaml_text(value, 40)


class _Section:
    """Checks an `engagement:` or `governor:` mapping: each problem positioned, unknown keys with a
    did-you-mean; returns only the fields that passed (the daemon keeps its default for the others)."""

    def __init__(self, parsed: ParsedYaml, path: tuple[str, ...], file: str, out: list[Diagnostic]) -> None:
        self.parsed, self.path, self.file, self.out = parsed, path, file, out

    def _value_at(self, path: tuple[str, ...]) -> tuple[str, int, int]:
        origin = self.parsed.origins.get(path)
        return (origin.file, origin.line, origin.col) if origin else (self.file, 1, 1)

    def _unknown(self, path: tuple[str, ...], known: tuple[str, ...], what: str) -> None:
        from difflib import (
            get_close_matches,  # only on a typo: difflib is slow to import
        )

        close = get_close_matches(path[-1], known, n=1, cutoff=0.6)
        hint = f" (did you mean `{close[0]}`?)" if close else f" (known: {', '.join(known)})"
        self.out.append(Diagnostic(*_at(self.parsed, path, self.file), "unknown-field",
                                   f"unknown {what} key `{'.'.join(path)}`{hint}", Severity.WARNING))

    def fields(self, value: dict[str, Any], known: dict[str, tuple[str, float, bool]], name: str,
               path: tuple[str, ...] | None = None) -> dict[str, Any]:
        path = path or self.path
        good = {}
        for key, item in value.items():
            if key not in known:
                self._unknown((*path, key), tuple(known), name)
                continue
            problem = config_value_problem(*known[key], item)
            if problem is None:
                good[key] = item
                continue
            code, message = problem
            self.out.append(Diagnostic(*self._value_at((*path, key)), code,
                                       f"`{'.'.join((*path, key))}` {message}; the default is used"))
        return good

    def choices(self, value: dict[str, Any]) -> dict[str, Any]:
        """The `delivery:` fields whose value is one of their words (DELIVERY_CHOICES)."""
        good = {}
        for key, item in value.items():
            path = (*self.path, key)
            if key not in DELIVERY_CHOICES:
                self._unknown(path, tuple(DELIVERY_CHOICES), "delivery")
            elif item not in DELIVERY_CHOICES[key]:
                self.out.append(Diagnostic(*self._value_at(path), "bad-value",
                                           f"`{'.'.join(path)}` must be one of {', '.join(DELIVERY_CHOICES[key])}, "
                                           f"not {_short(item)}; the default is used"))
            else:
                good[key] = item
        return good

    def lanes(self, value: dict[str, Any]) -> dict[str, dict[str, Any]]:
        good = {}
        for lane, fields in value.items():
            path = (*self.path, lane)
            if lane not in GOVERNOR_LANES:
                self._unknown(path, GOVERNOR_LANES, "governor lane")
            elif not isinstance(fields, dict):
                self.out.append(Diagnostic(*self._value_at(path), "wrong-type",
                                           f"`{'.'.join(path)}` must be a mapping of cooldown, limit and window"))
            else:
                good[lane] = self.fields(fields, GOVERNOR_FIELDS, "governor", path)
        return good


def _trust_list(value: Any, parsed: ParsedYaml, path: tuple[str, ...], file: str
                ) -> tuple[tuple[Path, ...], list[Diagnostic]]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return (), [Diagnostic(*_at(parsed, path, file), "wrong-type",
                               "`project_sensors` must be a list of project directories")]
    listed, problems = [], []
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not entry:
            problems.append(Diagnostic(*_at(parsed, (*path, str(index)), file), "wrong-type",
                                       "each `project_sensors` entry is a directory path"))
            continue
        expanded = Path(os.path.expanduser(entry))
        if not expanded.is_absolute():
            problems.append(Diagnostic(*_at(parsed, (*path, str(index)), file), "bad-value",
                                       f"project_sensors entry {entry!r} is not an absolute path; it is ignored",
                                       Severity.WARNING))
            continue
        listed.append(expanded.resolve())
    return tuple(listed), problems


def legacy_keys(paths: LayerPaths) -> list[Diagnostic]:
    """Each old `sensors:` key of config.yaml and .claude/attend.yaml, with the file and field replacing it.

    Used by `attend compile --check` (through `load_config`) and `attend settings lint`.
    """
    out: list[Diagnostic] = []
    for layer, path in (("user", paths.config_file), ("project", paths.project_config_file)):
        parsed = _read(path, layer)
        if parsed is not None and isinstance(parsed.data, dict):
            out.extend(_legacy_from(parsed, layer, str(path), paths))
    return out


def _display(path: Path) -> str:
    home = Path(os.path.expanduser("~"))
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def _legacy_from(parsed: ParsedYaml, layer: str, file: str, paths: LayerPaths) -> list[Diagnostic]:
    folder = paths.user if layer == "user" else paths.project
    out = []
    for key, sensors, prefix in config_entries(parsed):
        if key == "sensors":
            out.extend(_legacy_section(parsed, sensors, prefix, layer, file, folder))
    return out


def _legacy_section(parsed: ParsedYaml, sensors: Any, prefix: tuple[str, ...], layer: str, file: str,
                    folder: Path) -> list[Diagnostic]:
    if not isinstance(sensors, dict):
        return [Diagnostic(*_at(parsed, (*prefix, "sensors"), file), "legacy-key",
                           f"the old `sensors:` section is not read any more: write one file per sensor in "
                           f"{_display(folder)}/", Severity.WARNING)]
    out = []
    for raw_name, fields in sensors.items():
        name = raw_name.lstrip("+")
        target = f"{_display(folder / f'{name}.yaml')}"
        key_path = (*prefix, "sensors", raw_name)
        if not isinstance(fields, dict):
            out.append(Diagnostic(*_at(parsed, key_path, file), "legacy-key",
                                  f"old key attend.sensors.{name} is not read any more: write {target}",
                                  Severity.WARNING))
            continue
        for key, value in fields.items():
            out.append(Diagnostic(*_at(parsed, (*key_path, key), file), "legacy-key",
                                  _legacy_message(name, key, value, target, layer), Severity.WARNING))
    return out


def _legacy_message(name: str, key: str, value: Any, target: str, layer: str) -> str:
    """The advice for one old key: which sensor file to write and which field to set there."""
    old = f"old key attend.sensors.{name}.{key} is not read any more"
    if key == "script":
        trust = " (a project command sensor also needs the project listed in project_sensors)" \
            if layer == "project" else ""
        return (f"{old}: the inline script form becomes a command sensor; write {target} with `kind: command` "
                f"and `command: {{argv: [bash, {value}], output: lines}}`{trust}")
    if key == "timeout":
        return f"{old}: move it to {target} as `command: {{timeout: {_yaml_value(value)}}}`"
    if key in _SAME_FIELD:
        return f"{old}: move it to {target} as `{key}: {_yaml_value(value)}`"
    return f"{old}: spec v1 has no `{key}` field; see docs/spec.md for the fields of {target}"


def _yaml_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str) and any(c in value for c in ":{}[],#&*!|>'\"%@`"):
        return '"' + value.replace('"', '\\"') + '"'
    return str(value)
