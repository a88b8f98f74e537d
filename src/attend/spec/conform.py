"""Does a document certainly satisfy the spec's cerberus schema? The fast path of validation.

Cerberus stays the one source of shape errors and their wording (`spec/validate.py`), but importing
it and walking a valid sensor through it was a quarter of `attend compile --check`'s start-up. Almost
every file a user checks is valid, so `conforms` first walks the document against the same rules
(`spec/schema.py`) with plain isinstance checks; only a document it cannot vouch for goes to cerberus.

Decision implemented here: `conforms` may say False for a valid document (then cerberus runs and
finds nothing: slower, same answer), but never True for one cerberus would reject. So it reads only
the rules listed in `_RULES` (a schema using any other rule is never vouched for), is stricter than
cerberus wherever cerberus is lenient (booleans are never integers, only lists are lists, only dicts
are mappings, NaN and infinities are never vouched for), and mirrors cerberus exactly where it
accepts: `regex` matches the whole string, `allowed` checks every item of a list, a `schema` applies
to the items of a list and to the fields of a mapping. tests/spec/test_conform.py holds it to that
over random documents.
"""

from __future__ import annotations

import math
import re
TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

from attend.spec.durations import is_duration

__all__ = ["conforms"]

#: The rules this module understands; a field carrying any other rule is left to cerberus.
_RULES = frozenset({"type", "meta", "schema", "keysrules", "valuesrules", "allowed", "min", "max",
                    "minlength", "empty", "regex", "required", "nullable", "allow_unknown", "duration"})


def _number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and (type(value) is int or math.isfinite(value))


#: Each type name, as strictly as any document attend builds needs (yaml gives dict, list, str, int,
#: float, bool and None only).
_TYPES = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": _number,
    "boolean": lambda v: type(v) is bool,
    "list": lambda v: type(v) is list,
    "dict": lambda v: type(v) is dict,
    "duration": lambda v: type(v) is str or _number(v),
}

_patterns: dict[str, re.Pattern[str]] = {}


def _full_match(pattern: str, value: str) -> bool:
    compiled = _patterns.get(pattern)
    if compiled is None:  # the way cerberus anchors a pattern: `$` appended, matched from the start
        compiled = _patterns[pattern] = re.compile(pattern if pattern.endswith("$") else pattern + "$")
    return compiled.match(value) is not None


def conforms(value: Any, rules: dict[str, Any]) -> bool:
    """True only when cerberus would find nothing wrong with `value` under `rules`.

    Args:
        value: a document or part of one, as the YAML loader built it.
        rules: one field's cerberus rules (`{"type": "dict", "schema": SENSOR_SCHEMA}` for a sensor).
    """
    if not _RULES.issuperset(rules):
        return False
    if value is None:
        return rules.get("nullable") is True
    kinds = rules.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES[name](value) if name in _TYPES else False for name in names):
            return False
    if type(value) is float and not math.isfinite(value):
        return False
    if rules.get("duration") and not is_duration(value):
        return False
    return _constraints(value, rules) and _structure(value, rules)


def _constraints(value: Any, rules: dict[str, Any]) -> bool:
    sized = type(value) in (str, list, dict)
    if rules.get("empty") is False and sized and len(value) == 0:
        return False
    if "allowed" in rules:
        allowed = rules["allowed"]
        items = value if type(value) is list else [value]
        if type(value) is dict or not all(type(item) in (str, int, float, bool) and item in allowed for item in items):
            return False
    for bound, outside in (("min", lambda v, b: v < b), ("max", lambda v, b: v > b)):
        if bound in rules and (not _number(value) or outside(value, rules[bound])):
            return False
    if "minlength" in rules and (not sized or len(value) < rules["minlength"]):
        return False
    return not ("regex" in rules and type(value) is str and not _full_match(rules["regex"], value))


def _structure(value: Any, rules: dict[str, Any]) -> bool:
    schema = rules.get("schema")
    if type(value) is dict:
        if isinstance(schema, dict) and not (_is_mapping_schema(schema)
                                             and _mapping(value, schema, rules.get("allow_unknown") is True)):
            return False
        keys, values = rules.get("keysrules"), rules.get("valuesrules")
        if keys is not None and not all(conforms(k, keys) for k in value):
            return False
        return values is None or all(conforms(v, values) for v in value.values())
    if type(value) is list and isinstance(schema, dict):
        return all(conforms(item, schema) for item in value)
    return True


def _is_mapping_schema(schema: dict[str, Any]) -> bool:
    """Whether `schema` names fields (each value a rules mapping), not the rules of a list's items."""
    return all(type(rules) is dict for rules in schema.values())


def _mapping(value: dict[str, Any], schema: dict[str, Any], allow_unknown: bool) -> bool:
    for name, item in value.items():
        field = schema.get(name) if type(name) is str else None
        if field is None:
            if not allow_unknown:
                return False
        elif not conforms(item, field):
            return False
    return all(name in value for name, field in schema.items() if field.get("required"))
