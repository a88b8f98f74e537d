"""The shape of a merged sensor, checked by cerberus against `spec/schema.py`, in the spec's words.

Cerberus checks the shape; its errors become diagnostics at the file, line and column of the layer that
supplied the key or value. Non-finite numbers are refused here too (cerberus cannot say it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

    from cerberus import Validator
    from cerberus.errors import ValidationError
    from cerberus.schema import UnvalidatedSchema

from attend.bounds import MAX_ERRORS_PER_FILE, MAX_TRIGGERS
from attend.errors import Diagnostic
from attend.spec.conform import conforms
from attend.spec.durations import ACCEPTED_FORMS, is_duration
from attend.spec.loaded import KeyPath
from attend.spec.schema import SENSOR_SCHEMA, field_rules, known_fields, type_name
from attend.spec.validate.locate import Locator
from attend.spec.validate.wording import _a, _describe, _listed, _number, _short, _shown

#: The rules of a whole sensor document.
_SENSOR_RULES: dict[str, Any] = {"type": "dict", "schema": SENSOR_SCHEMA}


_validator: Validator | None = None
#: The custom cerberus error a malformed duration string raises (mapped to `bad-duration`).
_BAD_DURATION = "bad-duration"
#: cerberus.errors.UNKNOWN_FIELD.code and CUSTOM.code, without importing cerberus at module load.
_UNKNOWN_FIELD, _CUSTOM = 0x03, 0x00


def _cerberus() -> Validator:  # the Validator class is built lazily (cerberus costs ~50 ms to import)
    global _validator
    if _validator is None:
        import cerberus

        class SpecValidator(cerberus.Validator):
            """Cerberus with the spec's `duration` type (a number or a string) and rule (its form)."""

            types_mapping = {  # noqa: RUF012 - cerberus reads this class attribute
                **cerberus.Validator.types_mapping,
                "duration": cerberus.TypeDefinition("duration", (int, float, str), (bool,)),
            }

            def _validate_duration(self, constraint: bool, field: str, value: object) -> None:
                """{'type': 'boolean'}"""
                if constraint and not is_duration(value):
                    self._error(field, _BAD_DURATION)

            def _validate_regex(self, pattern: str, field: str, value: object) -> None:
                """{'type': 'string'}"""
                # Cerberus matches `pattern + "$"` from the start, and `$` also matches before a final
                # newline: "t\n" passed `^[A-Za-z0-9_-]*$`. The whole value must match (conform.py alike).
                if isinstance(value, str) and re.fullmatch(pattern, value) is None:
                    self._error(field, cerberus.errors.REGEX_MISMATCH)

        _validator = SpecValidator(checked_schema())
    return _validator


def checked_schema() -> UnvalidatedSchema:
    """SENSOR_SCHEMA as cerberus's expanded definition, without cerberus re-checking it in every process.

    `Validator(schema)` validates the schema itself against cerberus's rules (~27 ms, most of a
    one-file `compile --check` after imports). SENSOR_SCHEMA is a constant of this package, so that
    check belongs in the test suite (tests/spec/test_schema.py runs it on exactly this expansion);
    here the schema is only expanded, as `DefinitionSchema` would, and handed over as checked.
    """
    from cerberus.schema import DefinitionSchema, UnvalidatedSchema

    return UnvalidatedSchema(DefinitionSchema.expand(SENSOR_SCHEMA))


_RULE_CODES = {"allowed": "bad-value", "min": "bad-value", "max": "bad-value", "minlength": "bad-value",
               "empty": "bad-value", "regex": "bad-value", "required": "required"}


def _schema_errors(data: dict[str, Any], loc: Locator) -> list[Diagnostic]:
    """Cerberus's findings, each mapped to a stable code, a readable message and a position.

    Cerberus re-sorts its whole error list on every error, so thousands of errors in one call take
    minutes. So the floods are found here first, linearly (`_prune`: unknown fields, list items and map
    values of the wrong type), and left out of what cerberus sees; cerberus then checks the top level and
    each trigger in calls of their own, and the whole stops once MAX_ERRORS_PER_FILE errors are found.
    """
    out: list[Diagnostic] = []
    pruned = _prune(data, (), _SENSOR_RULES, loc, out)
    if len(out) >= MAX_ERRORS_PER_FILE:
        return [*out, _stopped(loc)]
    if not isinstance(pruned, dict):
        return out
    if not out and conforms(pruned, _SENSOR_RULES):
        return out  # cerberus would find nothing: it is neither imported nor run (spec/conform.py)
    triggers = pruned.pop("triggers", None)
    parts: list[dict[str, Any]] = [pruned]
    if isinstance(triggers, dict) and len(triggers) <= MAX_TRIGGERS:
        parts.extend({"triggers": {name: trigger}} for name, trigger in triggers.items())
    elif triggers is not None and not isinstance(triggers, dict):
        parts.append({"triggers": triggers})
    validator = _cerberus()
    for part in parts:
        if validator.validate(part, normalize=False):
            continue
        for error in _leaves(validator._errors):
            if _non_finite(error.value):
                continue  # `_finite_numbers` says what is wrong with .inf and .nan, once
            path = tuple(str(p) for p in error.document_path)
            out.append(_from_cerberus(error, path, loc))
        if len(out) >= MAX_ERRORS_PER_FILE:
            return [*out, _stopped(loc)]
    return out


def _stopped(loc: Locator) -> Diagnostic:
    return Diagnostic(loc.fallback_file, 1, 1, "too-many-errors",
                      f"validation of this file stopped after {MAX_ERRORS_PER_FILE} errors: fix these and check again")


def _prune(value: Any, path: KeyPath, rules: dict[str, Any], loc: Locator, out: list[Diagnostic]) -> Any:
    """`value` without its unknown fields and wrongly typed list items and map values, each reported.

    Only the mappings with a fixed set of fields, the lists of strings and the string → string maps are
    pruned (the shapes a hostile file can repeat thousands of times); the rest is left to cerberus.
    """
    if len(out) >= MAX_ERRORS_PER_FILE:
        return value
    schema = rules.get("schema")
    if isinstance(value, dict) and isinstance(schema, dict) and rules.get("type") != "list" \
            and not rules.get("allow_unknown"):
        kept = {}
        for key, item in value.items():
            if key in schema:
                kept[key] = _prune(item, (*path, key), schema[key], loc, out)
            elif len(out) < MAX_ERRORS_PER_FILE:
                out.append(_unknown_field((*path, key), loc))
        return kept
    if isinstance(value, dict) and "valuesrules" in rules:
        inner = rules["valuesrules"]
        if inner.get("type") == "string":  # a reported value is replaced by a string: reported once
            return {k: v if _string_or_report(v, (*path, k), loc, out) else "" for k, v in value.items()}
        return {k: _prune(v, (*path, k), inner, loc, out) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema, dict) and schema.get("type") == "string":
        return [v if _string_or_report(v, (*path, str(i)), loc, out) else "" for i, v in enumerate(value)]
    return value


def _string_or_report(value: Any, path: KeyPath, loc: Locator, out: list[Diagnostic]) -> bool:
    if isinstance(value, str):
        return True
    if len(out) < MAX_ERRORS_PER_FILE:
        out.append(loc.at_value(path, "wrong-type", f"`{_shown('.'.join(path))}` must be a string, not "
                                f"{_describe(value)}"))
    return False


def _unknown_field(path: KeyPath, loc: Locator) -> Diagnostic:
    from difflib import get_close_matches  # only on a typo: difflib is slow to import

    options = known_fields(path[:-1])
    close = get_close_matches(path[-1], options, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else (
        f" (known here: {', '.join(options)})" if options else "")
    return loc.at_key(path, "unknown-field", f"unknown field `{_shown('.'.join(path))}`{hint}")


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _finite_numbers(data: Any, loc: Locator) -> list[Diagnostic]:
    """Every number in a sensor is finite: `.inf`, `.nan` and literals past float's range (`1e400`) are
    refused wherever they stand (a field, a where operand, a crate or mcp argument)."""
    out = []
    stack: list[tuple[KeyPath, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, str(i)), v) for i, v in enumerate(value))
        elif _non_finite(value):
            out.append(loc.at_value(path, "bad-number", f"`{_shown('.'.join(path))}` is {_short(value)}: numbers in a "
                                    "sensor file must be finite (.inf, .nan and literals past 1.8e308 are not)"))
    return out


def _leaves(errors: Iterable[ValidationError]) -> Iterable[ValidationError]:
    for error in errors:
        if error.is_group_error and error.child_errors:
            yield from _leaves(error.child_errors)
        else:
            yield error


def _from_cerberus(error: ValidationError, path: KeyPath, loc: Locator) -> Diagnostic:
    rule, value, constraint = error.rule, error.value, error.constraint
    field = _shown(".".join(path))
    bad_form = error.code == _CUSTOM and error.info and error.info[0] == _BAD_DURATION
    if bad_form or (rule == "type" and "duration" in _listed(constraint)):  # a malformed string, or not even one
        return loc.at_value(path, "bad-duration", f"`{field}`: {_short(value)} is not a duration: "
                            f"use {ACCEPTED_FORMS}")
    if error.code == _UNKNOWN_FIELD:
        return _unknown_field(path, loc)
    rules = field_rules(path) or {}
    if rule == "type":
        return loc.at_value(path, "wrong-type",
                            f"`{field}` must be {_a(type_name(rules) if rules else str(constraint))}, not {_describe(value)}")
    if rule == "nullable":
        return loc.at_value(path, "wrong-type",
                            f"`{field}` is empty: it must be {_a(type_name(rules) if rules else 'value')}")
    if rule == "required":
        return loc.at_key(path[:-1], "required", f"missing required field `{field}`"
                          + (f": {rules['meta']['description']}" if rules.get("meta") else ""))
    if rule == "allowed":
        return loc.at_value(path, "bad-value", f"`{field}`: {_short(value)} is not one of: "
                            + ", ".join(str(c) for c in _listed(constraint)))
    if rule == "min":
        return loc.at_value(path, "bad-value", f"`{field}` must be at least {constraint}, not {_short(value)}")
    if rule == "max" and isinstance(constraint, (int, float)):  # the schema's bounds are numbers
        return loc.at_value(path, "bad-value", f"`{field}` must be at most {_number(constraint)}, not {_short(value)}")
    if rule == "minlength":
        return loc.at_value(path, "bad-value", f"`{field}` must not be empty")
    if rule == "regex":
        return loc.at_key(path, "bad-value",
                          f"trigger name {path[-1]!r} breaks the rule {constraint} (letters, digits, _ and -)")
    return loc.at_value(path, _RULE_CODES.get(rule or "", "bad-value"), f"`{field}`: {_short(value)} breaks rule {rule}")
