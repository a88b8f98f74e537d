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

    from attend.spec.loading import ParsedYaml

from attend.bounds import MAX_COUNT, MAX_MAGNITUDE
from attend.errors import Diagnostic, Severity
from attend.spec.durations import ACCEPTED_FORMS, is_duration, parse_duration
from attend.spec.loaded import LayerPaths, Origin
from attend.spec.yamltext import yaml_text
from attend.vocab import CONDUIT_CHOICES

__all__ = [
    "CONDUITS", "CONFIG_KEYS", "CONFIG_SCHEMA", "Config", "ConfigField", "config_default", "config_value_problem", "legacy_keys",
    "load_config", "project_trusted", "section_fields", "section_names", "shown_config_value",
]


@record(frozen=True)
class ConfigField:
    """One config.yaml key, declared once: what `load_config` checks, `attend settings` shows and the
    runtime takes as its default.

    `kind` is `duration` (the sensor files' forms: `90`, `90s`, `1m`), `number`, `integer`, `choice` (one
    of the words `choices`), `paths` (a list of absolute project directories), `string` (one line of text,
    or null: not set), `patterns` (a list of regular expressions, `attend.redact.pattern_problem`
    checking each) or `urls` (one server URL or a list of them, `nats://`, `tls://`, `ws://` or
    `wss://`, without a user or password in it). A number's lowest value is `minimum` (allowed itself when
    `inclusive`); the highest is the shared bound (`bounds.MAX_MAGNITUDE`, `MAX_COUNT` for an integer). A
    `user_only` key is read from the user's config.yaml only. A `secret` key's value is shown only as
    `<hidden: N characters>` (`${VAR}` references as written: `shown_config_value`), by `attend settings`
    and everything else that prints a setting.
    """

    kind: str
    default: Any
    description: str
    minimum: float | None = None
    inclusive: bool = True
    user_only: bool = False
    choices: tuple[str, ...] = ()
    secret: bool = False

    @property
    def type(self) -> str:
        """The type as `attend settings help` names it."""
        return {"paths": "list of string", "patterns": "list of string", "choice": "string",
                "urls": "string or list of string"}.get(
            self.kind, self.kind)

    def problem(self, value: object) -> tuple[str, str] | None:
        """Why `value` cannot stand in this field: (code, message), or None. Checked before any conversion."""
        if self.kind == "choice":
            if isinstance(value, str) and value in self.choices:
                return None
            return "bad-value", f"must be one of {', '.join(self.choices)}, not {_short(value)}"
        if self.kind == "paths":
            message = _path_list_problem(value)
            return None if message is None else ("wrong-type", message)
        if self.kind == "string":
            if value is None or (isinstance(value, str) and value and len(value) <= MAX_SETTING_CHARS
                                 and not any(c in value for c in "\0\n\r")):
                return None
            return "wrong-type", f"must be one line of text (at most {MAX_SETTING_CHARS} characters), or null"
        if self.kind == "urls":
            return _url_list_problem(value)
        if self.kind == "patterns":
            return _pattern_list_problem(value)
        return config_value_problem(self.kind, self.minimum or 0, self.inclusive, value)

    def check(self, value: object) -> str | None:
        """Why `value` cannot stand in this field (the message, as `attend settings set` prints it), or None."""
        problem = self.problem(value)
        return None if problem is None else problem[1]


#: The longest `string` setting (a path, a user name, a token).
MAX_SETTING_CHARS = 4096
#: The URL schemes a NATS server is reached by (`peers.nats.url`).
NATS_SCHEMES = ("nats://", "tls://", "ws://", "wss://")
#: How peers reach each other (`peers.transport`; docs/peers.md): files (this machine) or nats (across machines).
TRANSPORTS = ("files", "nats")


def _url_list_problem(value: object) -> tuple[str, str] | None:
    """Why `value` is not one NATS server URL or a list of them (a user or password in one is refused: they are
    settings of their own, hidden when shown)."""
    urls = [value] if isinstance(value, str) else value
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return "wrong-type", "must be a server URL (nats://host:4222) or a list of them"
    for url in urls:
        if "@" in url.split("/", 3)[2 if url.count("/") >= 2 else 0]:
            return "bad-value", ("holds a user or token before @: set attend.peers.nats.user, password or token "
                                 "instead (they are never shown)")
        if not url.startswith(NATS_SCHEMES) or len(url) > MAX_SETTING_CHARS or any(c.isspace() for c in url):
            return "bad-value", f"{_short(url)} is not a server URL: {', '.join(NATS_SCHEMES)} and a host"
    return None


#: The conduits a session's lines go through (`delivery.conduits`; DESIGN.md, "Delivery"): auto (the hooks
#: step in while the session's Monitor is not live), monitor (the Monitor stream only), hooks (the hooks only:
#: `attend run` stays up and polls but prints no line; runtime/serve.py).
CONDUITS = CONDUIT_CHOICES


def _lane(lane: str, cooldown: float, limit: int, window: float) -> dict[tuple[str, ...], ConfigField]:
    """One governor lane's three fields (runtime/governor.py): its defaults, the fields' texts and bounds."""
    return {
        ("governor", lane, "cooldown"): ConfigField(
            "duration", cooldown, f"seconds between two disclosures on the {lane} lane", 0.0),
        ("governor", lane, "limit"): ConfigField(
            "integer", limit, f"the most disclosures on the {lane} lane per window", 0),
        ("governor", lane, "window"): ConfigField(
            "duration", window, f"the rolling window of the {lane} lane's limit, in seconds", 0.0, inclusive=False),
    }


#: Every config.yaml key (its path below `attend:`), declared once. `load_config` checks a file against it,
#: `attend settings get|set|help|list` read their keys, types, texts and defaults from it, and the runtime
#: takes its defaults from it (`runtime.engagement.EngagementParams`, `runtime.governor.DEFAULT_GOVERNORS`).
#: Engagement's bounds are where the model breaks: `relative_half_life` and `live_window` divide or bound
#: time (0 divides by zero or makes no fire live), `relative_after: 0` would turn the refractory on with no
#: fire to measure from, and a `relative_peak` under 1 would lower the threshold after a burst instead of
#: raising it. A governor `window` of 0 would make its limit meaningless.
CONFIG_SCHEMA: dict[tuple[str, ...], ConfigField] = {
    ("project_sensors",): ConfigField(
        "paths", [], "projects whose own command and mcp sensor files may run (absolute paths; user config only)",
        user_only=True),
    ("engagement", "absolute_refractory"): ConfigField(
        "duration", 60.0, "seconds after a fire during which the sensor cannot fire again", 0.0),
    ("engagement", "relative_peak"): ConfigField(
        "number", 2.25, "the threshold multiplier right after a fire, once the relative refractory is on", 1.0),
    ("engagement", "relative_half_life"): ConfigField(
        "duration", 395.0, "seconds for the relative refractory's extra multiplier to halve", 0.0, inclusive=False),
    ("engagement", "relative_after"): ConfigField(
        "integer", 3, "how many live recent fires turn the relative refractory on", 1),
    ("engagement", "live_window"): ConfigField(
        "duration", 4 * 395.0, "seconds a fire counts as recent (toward relative_after)", 0.0, inclusive=False),
    **_lane("event", cooldown=15.0, limit=3, window=120.0),
    **_lane("message", cooldown=3.0, limit=30, window=60.0),
    ("delivery", "conduits"): ConfigField(
        "choice", "auto", "how a session's lines reach it: auto (the hooks step in while its Monitor is not "
        "live), monitor (the Monitor stream only), hooks (the hooks only: attend run stays up and polls but "
        "prints no line)", choices=CONDUITS),
    ("redact",): ConfigField(
        "patterns", [], "regular expressions whose matches are shown as <redacted> in every text attend shows, "
        "besides the built-in credential rules (docs/runtime.md, What a line may contain); the user's and the "
        "project's lists both apply"),
    ("delivery", "stale_after"): ConfigField(
        "duration", 600.0, "how old an event-lane line may be and still be handed to a session whose stream "
        "(re)starts, or by its hooks; older ones are counted in one line (attend sensors history shows them)", 0.0),
    # Peers across machines (docs/peers.md, "Across machines"). User config only: a project's own file must
    # not send its sessions' messages to a server of its choosing.
    ("peers", "transport"): ConfigField(
        "choice", "files", "how peers reach each other: files (the sessions of this machine, no server) or nats "
        "(every machine on one NATS server with JetStream)", choices=TRANSPORTS, user_only=True),
    ("peers", "nats", "url"): ConfigField(
        "urls", "nats://127.0.0.1:4222", "the NATS server (or a list of a cluster's servers) peers use with "
        "transport nats", user_only=True),
    ("peers", "nats", "creds"): ConfigField(
        "string", None, "a NATS credentials file (a user JWT and its NKey seed, as `nsc` writes it)", user_only=True),
    ("peers", "nats", "nkey"): ConfigField(
        "string", None, "a file holding a user NKey seed (SU...)", user_only=True),
    ("peers", "nats", "token"): ConfigField(
        "string", None, "a token the server accepts (a literal, or ${VAR} from the environment; never shown)",
        user_only=True, secret=True),
    ("peers", "nats", "user"): ConfigField("string", None, "the user name, with password", user_only=True),
    ("peers", "nats", "password"): ConfigField(
        "string", None, "the user's password (a literal, or ${VAR} from the environment; never shown)",
        user_only=True, secret=True),
    ("peers", "nats", "tls_ca"): ConfigField(
        "string", None, "a CA certificate file the server's certificate is checked against", user_only=True),
    ("peers", "nats", "tls_cert"): ConfigField(
        "string", None, "a client certificate file (TLS client authentication, with tls_key)", user_only=True),
    ("peers", "nats", "tls_key"): ConfigField(
        "string", None, "the client certificate's key file", user_only=True),
    ("peers", "nats", "replicas"): ConfigField(
        "integer", 1, "how many servers of a cluster keep each of attend's streams and buckets (3 survives one "
        "server's loss; 1 for a single server); fixed when they are made", 1, user_only=True),
    ("peers", "nats", "presence_ttl"): ConfigField(
        "duration", 30.0, "how long a session stays in peers list after its last heartbeat (a crashed "
        "machine's sessions leave within it); the presence bucket is created with it", 10.0),
}

#: The sections read from the user's config.yaml only (every field in them is `user_only`).
USER_ONLY_SECTIONS: tuple[str, ...] = ("peers",)

#: The top-level keys config.yaml understands (besides the old `sensors:` section, reported by `legacy_keys`).
CONFIG_KEYS: tuple[str, ...] = tuple(dict.fromkeys(path[0] for path in CONFIG_SCHEMA))


def shown_config_value(path: tuple[str, ...], value: object) -> object:
    """A config value at `path` (a field, or a section holding fields) as attend shows it: a `secret` field's
    text hidden but for its length (`${VAR}` references as written), anything else as it is."""
    known = CONFIG_SCHEMA.get(path)
    if known is not None:
        if known.secret and isinstance(value, str):
            from attend.spec.headers import VAR_REFERENCE  # late: the lint path shows no secret

            return value if VAR_REFERENCE.sub("", value) == "" else f"<hidden: {len(value)} characters>"
        return value
    if isinstance(value, dict):
        return {k: shown_config_value((*path, str(k)), v) for k, v in value.items()}
    return value


def section_names(prefix: tuple[str, ...]) -> list[str]:
    """The names declared right below `prefix` (a section's fields or lanes), sorted."""
    n = len(prefix)
    return sorted({p[n] for p in CONFIG_SCHEMA if len(p) > n and p[:n] == prefix})


def section_fields(prefix: tuple[str, ...]) -> dict[str, ConfigField]:
    """The fields right below `prefix`, in declaration order (`("engagement",)` → its five fields)."""
    n = len(prefix)
    return {p[n]: f for p, f in CONFIG_SCHEMA.items() if len(p) == n + 1 and p[:n] == prefix}


def config_default(path: tuple[str, ...]) -> Any:
    """The default at `path`: a field's, or a section's as a nested mapping of its fields' defaults."""
    known = CONFIG_SCHEMA.get(path)
    if known is not None:
        return known.default
    n = len(path)
    out: dict[str, Any] = {}
    for p, f in CONFIG_SCHEMA.items():
        if p[:n] == path and len(p) > n:
            node = out
            for segment in p[n:-1]:
                node = node.setdefault(segment, {})
            node[p[-1]] = f.default
    return out


def _pattern_list_problem(value: object) -> tuple[str, str] | None:
    """Why `value` cannot be `redact`'s list of patterns: (code, message) naming the entry, or None."""
    from attend.redact import pattern_problem

    if not isinstance(value, list):
        return "wrong-type", "must be a list of regular expressions, e.g. ['internal-[0-9]{6}']"
    for index, pattern in enumerate(value):
        problem = pattern_problem(pattern)
        if problem is not None:
            return ("wrong-type" if not isinstance(pattern, str) else "regex-syntax"), f"entry {index}: {problem}"
    return None


def _path_list_problem(value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return "must be a list of project directories, e.g. ['/home/me/code/app']"
    relative = [v for v in value if not v.startswith(("/", "~"))]
    if relative:
        return f"entries must be absolute paths (or start with ~): {', '.join(relative)}"
    return None


#: Old per-sensor fields that keep their name in a sensor file.
_SAME_FIELD = ("interval", "min_interval", "threshold", "decay_threshold", "requires", "enabled", "description",
               "lane")


@record
class Config:
    """What config.yaml and .claude/attend.yaml say, merged (project over user, except trust).

    `sections` holds, per top-level key of CONFIG_SCHEMA but `project_sensors`, the values that passed
    their checks (nested as in the file); the runtime applies them over the schema's defaults.
    """

    project_sensors: tuple[Path, ...] = ()
    #: `redact`: the user's and the project's patterns that passed their check, both files' (in that order).
    redact: tuple[str, ...] = ()
    sections: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def section(self, name: str) -> Any:
        """The checked value of top-level key `name` (`engagement`, `governor`, ...): for a section the
        mapping of its fields that passed, empty when no file sets it."""
        return self.sections.get(name, {} if section_names((name,)) else None)

    @property
    def engagement(self) -> dict[str, Any]:
        return self.section("engagement")

    @property
    def governor(self) -> dict[str, Any]:
        return self.section("governor")

    @property
    def delivery(self) -> dict[str, Any]:
        return self.section("delivery")

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
    out: list[tuple[str, Any, tuple[str, ...]]] = [(key, value, ()) for key, value in data.items() if key != "attend"]
    nested = data.get("attend")
    if isinstance(nested, dict):
        out.extend((key, value, ("attend",)) for key, value in nested.items())
    return out


def _read(path: Path, layer: str) -> ParsedYaml | None:
    if not path.is_file():
        return None
    from attend.spec.loading import read_yaml_file  # late: with no config file (a hook's case) no YAML reader

    return read_yaml_file(path, layer)


def _at(parsed: ParsedYaml, path: tuple[str, ...], file: str) -> tuple[str, int, int]:
    origin: Origin | None = parsed.origins.get(path)
    if origin is None:
        return file, 1, 1
    return origin.file, origin.key_line or origin.line, origin.key_col or origin.col


def _excerpted(diagnostic: Diagnostic, path: Path) -> Diagnostic:
    """`diagnostic` with the caret excerpt of its key, even at 1:1, where `compile --check` shows none
    (a position it cannot tell from a problem of the whole file)."""
    from attend.spec.loading import read_source, with_excerpt

    text = read_source(path)[0]
    return diagnostic if text is None else with_excerpt(diagnostic, text)


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
                    config.diagnostics.append(_excerpted(Diagnostic(
                        *where, "untrusted-key",
                        "project_sensors in a project file is ignored: a project cannot grant trust to itself; "
                        f"list the project in {paths.config_file} instead", Severity.WARNING), path))
                    continue
                config.project_sensors, problems = _trust_list(value, parsed, (*prefix, key), file)
                config.diagnostics.extend(problems)
            elif key in USER_ONLY_SECTIONS and layer == "project":
                config.diagnostics.append(_excerpted(Diagnostic(
                    *where, "untrusted-key",
                    f"{key} in a project file is ignored: a project cannot choose where its sessions' messages "
                    f"go; set it in {paths.config_file} instead", Severity.WARNING), path))
            elif key == "redact":
                patterns, problems = _redact_list(value, parsed, (*prefix, key), file)
                config.redact = tuple(dict.fromkeys((*config.redact, *patterns)))
                config.diagnostics.extend(problems)
            elif key in CONFIG_KEYS:
                good: dict[str, Any] = {}
                _Section(parsed, file, config.diagnostics).entry(key, value, prefix, (), good, list(CONFIG_KEYS))
                _merge(config.sections, good)
            elif key != "sensors":
                from difflib import (
                    get_close_matches,  # only on a typo: difflib is slow to import
                )
                close = get_close_matches(key, [*CONFIG_KEYS, "sensors"], n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else f" (known: {', '.join(CONFIG_KEYS)})"
                config.diagnostics.append(Diagnostic(*where, "unknown-field", f"unknown config key `{key}`{hint}",
                                                     Severity.WARNING))
        config.diagnostics.extend(_legacy_from(parsed, layer, file, paths))
    # The config read last is the one in force: every process redacts with its patterns from here on, and a
    # daemon's hot reload (which reads the config again) applies a changed list at once (attend.redact).
    from attend.redact import use

    use(config.redact)
    return config


def config_value_problem(kind: str, minimum: float, inclusive: bool, value: object) -> tuple[str, str] | None:
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
    if number < minimum or (not inclusive and number == minimum):
        return "bad-value", f"must be {'at least' if inclusive else 'more than'} {minimum:g}, not {_short(value)}"
    return None


def _short(value: object) -> str:
    return yaml_text(value, 40)


def _merge(into: dict[str, Any], over: dict[str, Any]) -> None:
    """Lay the checked values `over` on `into`, section by section (the project file over the user's)."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _and_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class _Section:
    """Checks a config.yaml section against CONFIG_SCHEMA: each problem positioned, unknown keys with a
    did-you-mean; returns only the fields that passed (the daemon keeps its default for the others)."""

    def __init__(self, parsed: ParsedYaml, file: str, out: list[Diagnostic]) -> None:
        self.parsed, self.file, self.out = parsed, file, out

    def _value_at(self, path: tuple[str, ...]) -> tuple[str, int, int]:
        origin = self.parsed.origins.get(path)
        return (origin.file, origin.line, origin.col) if origin else (self.file, 1, 1)

    def section(self, value: object, at: tuple[str, ...], path: tuple[str, ...]) -> dict[str, Any] | None:
        """The checked mapping `value` of the section at schema `path` (`at`: its key path in the file)."""
        names = section_names(path)
        if not isinstance(value, dict):
            if len(path) == 1:
                where, message = _at(self.parsed, at, self.file), f"`{path[0]}` must be a mapping"
            else:
                where, message = self._value_at(at), f"`{'.'.join(at)}` must be a mapping of {_and_list(names)}"
            self.out.append(Diagnostic(*where, "wrong-type", message))
            return None
        good: dict[str, Any] = {}
        for key, item in value.items():
            self.entry(key, item, at, path, good, names)
        return good

    def entry(self, key: object, item: object, at: tuple[str, ...], path: tuple[str, ...], good: dict[str, Any],
              names: list[str]) -> None:
        """Check `key: item` of the section at schema `path` (a field or a section); keep it in `good` if it passes."""
        name = key if isinstance(key, str) else yaml_text(key)
        sub, here = (*path, name), (*at, name)
        known = CONFIG_SCHEMA.get(sub)
        if known is not None:
            problem = known.problem(item)
            if problem is None:
                good[name] = item
            else:
                self.out.append(Diagnostic(*self._value_at(here), problem[0],
                                           f"`{'.'.join(here)}` {problem[1]}; the default is used"))
        elif section_names(sub):
            checked = self.section(item, here, sub)
            if checked is not None:
                good[name] = checked
        else:
            self._unknown(here, sub, names)

    def _unknown(self, at: tuple[str, ...], path: tuple[str, ...], known: list[str]) -> None:
        from difflib import (
            get_close_matches,  # only on a typo: difflib is slow to import
        )

        close = get_close_matches(path[-1], known, n=1, cutoff=0.6)
        hint = f" (did you mean `{close[0]}`?)" if close else f" (known: {', '.join(known)})"
        self.out.append(Diagnostic(*_at(self.parsed, at, self.file), "unknown-field",
                                   f"unknown {path[0]} key `{'.'.join(at)}`{hint}", Severity.WARNING))


def _redact_list(value: object, parsed: ParsedYaml, path: tuple[str, ...], file: str
                 ) -> tuple[tuple[str, ...], list[Diagnostic]]:
    """`redact`'s patterns that pass `attend.redact.pattern_problem`, and a positioned error for each other
    (a bad pattern is left out; the others still apply)."""
    from attend.redact import pattern_problem

    if not isinstance(value, list):
        return (), [Diagnostic(*_at(parsed, path, file), "wrong-type",
                               "`redact` must be a list of regular expressions, e.g. ['internal-[0-9]{6}']")]
    good, problems = [], []
    for index, pattern in enumerate(value):
        problem = pattern_problem(pattern)
        if problem is None:
            good.append(pattern)
        else:
            origin = parsed.origins.get((*path, str(index)))
            where = (origin.file, origin.line, origin.col) if origin else _at(parsed, path, file)
            problems.append(Diagnostic(*where, "regex-syntax", f"`redact` entry {index}: {problem}; it is left out"))
    return tuple(good), problems


def _trust_list(value: object, parsed: ParsedYaml, path: tuple[str, ...], file: str
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


def _legacy_message(name: str, key: str, value: object, target: str, layer: str) -> str:
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


def _yaml_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str) and any(c in value for c in ":{}[],#&*!|>'\"%@`"):
        return '"' + value.replace('"', '\\"') + '"'
    return str(value)
