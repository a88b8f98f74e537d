"""Does a document certainly satisfy the spec's cerberus schema? The fast path of validation.

Cerberus stays the one source of shape errors and their wording (`spec/validate/shape.py`), but importing
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
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any], bool]

from attend.spec.durations import is_duration

__all__ = ["conforms"]

#: The rules this module understands; a field carrying any other rule is left to cerberus.
_RULES = frozenset({"type", "meta", "schema", "keysrules", "valuesrules", "allowed", "min", "max",
                    "minlength", "empty", "regex", "required", "nullable", "allow_unknown", "duration"})


def _number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and (type(value) is int or math.isfinite(value))


#: Each type name, as strictly as any document attend builds needs (yaml gives dict, list, str, int,
#: float, bool and None only).
_TYPES: dict[str, Check] = {
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
    if compiled is None:  # the whole value, as the spec's validator matches it (validate.py, SpecValidator)
        compiled = _patterns[pattern] = re.compile(pattern)
    return compiled.fullmatch(value) is not None


def conforms(value: Any, rules: dict[str, Any]) -> bool:
    """True only when cerberus would find nothing wrong with `value` under `rules`.

    Args:
        value: a document or part of one, as the YAML loader built it.
        rules: one field's cerberus rules (`{"type": "dict", "schema": SENSOR_SCHEMA}` for a sensor).
    """
    return _checker(rules)(value)


#: The checker of each rules mapping seen, by identity (the schema's mappings are module constants);
#: the mapping is kept beside its checker so its id is never reused while the entry lives.
_checkers: dict[int, tuple[dict[str, Any], Check]] = {}


def _checker(rules: dict[str, Any]) -> Check:
    """`rules` turned once into one function: the walk then does no rule lookups of its own."""
    found = _checkers.get(id(rules))
    if found is not None and found[0] is rules:
        return found[1]
    if len(_checkers) > 4096:  # rules built afresh on every call (not the schema's): never grow unbounded
        _checkers.clear()
    check = _compile(rules)
    _checkers[id(rules)] = (rules, check)
    return check


def _never(value: Any) -> bool:
    return False


def _compile(rules: dict[str, Any]) -> Check:
    if not _RULES.issuperset(rules):
        return _never
    nullable = rules.get("nullable") is True
    kinds = rules.get("type")
    names = [] if kinds is None else kinds if isinstance(kinds, list) else [kinds]
    types = [_TYPES.get(name, _never) for name in names]
    duration = bool(rules.get("duration"))
    tests = _constraints(rules)
    structure = _structure(rules)

    def check(value: Any) -> bool:
        if value is None:
            return nullable
        if types and not any(test(value) for test in types):
            return False
        if type(value) is float and not math.isfinite(value):
            return False
        if duration and not is_duration(value):
            return False
        return all(test(value) for test in tests) and structure(value)

    return check


def _sized(value: Any) -> bool:
    return type(value) in (str, list, dict)


def _constraints(rules: dict[str, Any]) -> list[Check]:
    tests: list[Check] = []
    if rules.get("empty") is False:
        tests.append(lambda v: not (_sized(v) and len(v) == 0))
    if "allowed" in rules:
        allowed = rules["allowed"]

        def in_allowed(v: Any) -> bool:
            items = v if type(v) is list else [v]
            return type(v) is not dict and all(type(i) in (str, int, float, bool) and i in allowed for i in items)

        tests.append(in_allowed)
    if "min" in rules:
        low = rules["min"]
        tests.append(lambda v: _number(v) and not v < low)
    if "max" in rules:
        high = rules["max"]
        tests.append(lambda v: _number(v) and not v > high)
    if "minlength" in rules:
        shortest = rules["minlength"]
        tests.append(lambda v: _sized(v) and len(v) >= shortest)
    if "regex" in rules:
        pattern = rules["regex"]
        tests.append(lambda v: type(v) is not str or _full_match(pattern, v))
    return tests


def _structure(rules: dict[str, Any]) -> Check:
    """The check of a mapping's fields or a list's items; each part is compiled when first met."""
    schema = rules.get("schema")
    keys, values = rules.get("keysrules"), rules.get("valuesrules")
    fields: dict[str, Any] | None = None
    required: tuple[str, ...] = ()
    if isinstance(schema, dict) and all(type(field) is dict for field in schema.values()):
        fields = schema  # field name → rules (a mapping's); otherwise the rules of a list's items
        required = tuple(name for name, field in schema.items() if field.get("required"))
    allow_unknown = rules.get("allow_unknown") is True
    mapping_schema_unusable = isinstance(schema, dict) and fields is None

    def structure(value: Any) -> bool:
        if type(value) is dict:
            if mapping_schema_unusable:
                return False
            if fields is not None:
                for name, item in value.items():
                    field = fields.get(name) if type(name) is str else None
                    if field is None:
                        if not allow_unknown:
                            return False
                    elif not _checker(field)(item):
                        return False
                if not all(name in value for name in required):
                    return False
            if keys is not None and not all(map(_checker(keys), value)):
                return False
            return values is None or all(map(_checker(values), value.values()))
        if type(value) is list and isinstance(schema, dict):
            return all(map(_checker(schema), value))
        return True

    return structure
