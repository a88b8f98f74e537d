"""One trigger given on its own (`attend.compile_trigger`): checked by a sensor file's rules, in their words."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.vocab import JSONObject

from attend.errors import Diagnostic, Severity
from attend.spec.loaded import KeyPath, Origin
from attend.spec.validate.locate import Locator
from attend.spec.validate.normalise import normalise
from attend.spec.validate.rules import _trigger_checks
from attend.spec.validate.wording import _a, _shown


class _Faults(Locator):
    """A Locator that also keeps, for each diagnostic it makes, the key path of the field at fault."""

    def __init__(self, origins: Mapping[KeyPath, Origin], fallback_file: str) -> None:
        super().__init__(origins, fallback_file)
        self.faults: dict[int, KeyPath] = {}

    def at_value(self, path: Iterable[Any], code: str, message: str,
                 severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        path = tuple(str(p) for p in path)
        found = super().at_value(path, code, message, severity)
        self.faults[id(found)] = fault or path
        return found

    def at_key(self, path: Iterable[Any], code: str, message: str,
               severity: Severity = Severity.ERROR, *, fault: KeyPath | None = None) -> Diagnostic:
        path = tuple(str(p) for p in path)
        found = super().at_key(path, code, message, severity)
        self.faults[id(found)] = fault or path
        return found


#: The file name a trigger given on its own is reported under (`attend.compile_trigger`).
API_FILE = "<trigger>"
#: The value types a YAML document holds (`spec.loading` builds nothing else).
_PLAIN = (str, int, float, bool, type(None))


def trigger_problems(definition: Any, name: str = "trigger",
                     origins: Mapping[KeyPath, Origin] | None = None) -> list[tuple[str, Diagnostic]]:
    """The spec's problems of one trigger given on its own (`attend.compile_trigger`), each with the
    trigger field at fault ("" for the trigger as a whole).

    The trigger is checked as a sensor file's trigger is: inside a document `{triggers: {name: ...}}`,
    by the same rules (`validate_sensor`'s), so a problem reads the same words and bounds as in a file.
    What a YAML file cannot hold is refused first, in the loader's words: a key that is not a string, a
    value that is not null, a boolean, a number, a string, a list or a mapping, nesting deeper than
    MAX_DEPTH, an integer of more than MAX_INTEGER_DIGITS digits. The trigger's name is the caller's
    label here, so the file's trigger-name rule is not applied to it.

    Args:
        definition: the trigger's fields as a sensor file writes them (durations as `5m` or seconds).
        name: the trigger's name.
        origins: optional positions keyed by key path inside the trigger.
    """
    try:
        definition = plain_trigger(definition, name)
    except _NotPlain as refused:
        return [(refused.field, refused.diagnostic)]
    prefix: KeyPath = ("triggers", name)
    moved = {(*prefix, *path): origin for path, origin in (origins or {}).items()}
    loc = _Faults(moved, API_FILE)
    found = _trigger_checks({"triggers": {name: definition}}, loc)
    out = []
    for diagnostic in found:
        fault = loc.faults.get(id(diagnostic), ())
        if fault == prefix and diagnostic.message.startswith("trigger name"):
            continue  # the file's name rule; a name given to the API is only a label
        out.append((fault[2] if len(fault) > 2 and fault[:2] == prefix else "", diagnostic))
    return out


class _NotPlain(Exception):
    """A value no YAML document holds, at `field`, said as `diagnostic`."""

    def __init__(self, field: str, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.field, self.diagnostic = field, diagnostic


def plain_trigger(definition: Any, name: str = "trigger") -> dict[str, Any]:
    """A copy of `definition` made of dicts, lists and YAML's scalars (see `trigger_problems`).

    Raises:
        _NotPlain: the first thing a YAML file cannot hold, with the field it stands in.
    """
    return _plain((), definition, 1, f"triggers.{_shown(name)}")


def _plain(path: KeyPath, value: Any, depth: int, prefix: str) -> Any:
    from attend.bounds import MAX_DEPTH, MAX_INTEGER_DIGITS

    field = path[0] if path else ""
    where = f"`{prefix}.{_shown('.'.join(path))}`" if path else f"`{prefix}`"

    def refuse(code: str, message: str) -> _NotPlain:
        return _NotPlain(field, Diagnostic(API_FILE, 1, 1, code, message))

    if depth > MAX_DEPTH:
        raise refuse("too-deep", f"the document nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise refuse("wrong-type", f"{where} has the key {_short_key(key)}: a mapping key must be a string")
            out[key] = _plain((*path, key), item, depth + 1, prefix)
        return out
    if isinstance(value, list):
        return [_plain((*path, str(i)), item, depth + 1, prefix) for i, item in enumerate(value)]
    if not isinstance(value, _PLAIN):
        raise refuse("wrong-type", f"{where} is {_a(type(value).__name__)}: a trigger holds only what YAML and JSON "
                     "hold (null, booleans, numbers, strings, lists and mappings)")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** MAX_INTEGER_DIGITS:
        raise refuse("bad-number", f"{where} is an integer of more than {MAX_INTEGER_DIGITS:,} digits: attend reads "
                     f"integers of at most {MAX_INTEGER_DIGITS:,} digits")
    return value


def _short_key(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:39] + "…"


def normalise_trigger(definition: Mapping[str, Any], name: str = "trigger") -> JSONObject:
    """One trigger that `trigger_problems` passed, normalised as `normalise` does a file's: defaults
    filled in, durations as float seconds, `magnitude` a float."""
    triggers = normalise({"triggers": {name: plain_trigger(definition, name)}})["triggers"]
    trigger = triggers[name] if isinstance(triggers, dict) else None
    assert isinstance(trigger, dict)  # normalise keeps the mapping it was given
    return trigger
