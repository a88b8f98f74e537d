"""Where conditions → predicate closures (DESIGN.md, Trigger semantics: `where`, ADR-403 §8).

Each test (`equals`, `not`, `in`, `contains`, `like`, `matches`, `above`, `below`) becomes a closure
specialised on its operand's type; each condition pairs a property getter (direct for a plain dotted
property, a walk over matching members for a glob property) with its tests; a where combines its
conditions with `all` or `any`. Predicates take `(item, warn)`: `warn(message)` records a warning
(a type mismatch in `above`/`below`, a regex that timed out) without touching the decision.

Decisions: a missing field satisfies only `not`; a glob property holds when any matching field
satisfies every test; `like` and `matches` apply to strings (and to numbers, through their JSON text).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend import ir
from attend.compiler import ops

__all__ = ["Predicate", "compile_condition", "compile_test", "compile_where", "property_getter"]

Warn = Callable[[str], None]
#: A compiled condition or where: (item, warn) → holds?
Predicate = Callable[[object, Warn], bool]
#: A compiled test on one property value (never MISSING): (value, warn) → passes?
ValueTest = Callable[[object, Warn], bool]


def _pattern_subject(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ops.render_value(value)
    return None


def compile_test(test: ir.Test, prop: str) -> ValueTest:
    """The closure for one operator on one property's (present) value."""
    op, operand = test.op, test.operand
    same = ops.same
    if op in ("equals", "not"):
        if isinstance(operand, str):

            def eq(v: object, warn: Warn) -> bool:
                return v == operand

        elif isinstance(operand, bool) or operand is None:

            def eq(v: object, warn: Warn) -> bool:
                return v is operand

        elif isinstance(operand, (int, float)):

            def eq(v: object, warn: Warn) -> bool:
                return v == operand and not isinstance(v, bool)

        else:
            expected = list(operand) if isinstance(operand, tuple) else operand

            def eq(v: object, warn: Warn) -> bool:
                return same(v, expected)

        if op == "equals":
            return eq

        def ne(v: object, warn: Warn) -> bool:
            return not eq(v, warn)

        return ne
    if op == "in":
        if all(isinstance(o, str) for o in operand):
            members = frozenset(operand)

            def in_strings(v: object, warn: Warn) -> bool:
                return isinstance(v, str) and v in members

            return in_strings
        options = tuple(operand)

        def in_any(v: object, warn: Warn) -> bool:
            return any(same(v, o) for o in options)

        return in_any
    if op == "contains":
        contains = ops.contains

        def has(v: object, warn: Warn) -> bool:
            return contains(v, operand)

        return has
    if op == "like":
        glob: ir.ValuePattern = operand  # `like` and `matches` take a pattern (the grammar's reader makes it)
        match = ops.compile_glob(glob.text)

        def like(v: object, warn: Warn) -> bool:
            if v.__class__ is str:
                return match(v) is not None
            subject = _pattern_subject(v)
            return subject is not None and match(subject) is not None

        return like
    if op == "matches":
        pattern: ir.ValuePattern = operand
        search = ops.compile_regex(pattern.text)

        def matches(v: object, warn: Warn) -> bool:
            subject = v if v.__class__ is str else _pattern_subject(v)
            if subject is None:
                return False
            try:
                return search(subject)
            except TimeoutError:
                warn(f"{prop}: the regex {pattern.text!r} timed out after {ops.REGEX_TIMEOUT} s; counted as no match")
                return False

        return matches
    bound: float = operand  # `above` and `below` take a number (the spec checks it)
    as_number = ops.as_number
    if op == "above":

        def above(v: object, warn: Warn) -> bool:
            if v.__class__ is int or v.__class__ is float:
                return v > bound
            n = as_number(v)
            if n is None:
                warn(f"{prop}: {ops.render_value(v)!r} is not a number (above: {bound})")
                return False
            return n > bound

        return above

    def below(v: object, warn: Warn) -> bool:
        if v.__class__ is int or v.__class__ is float:
            return v < bound
        n = as_number(v)
        if n is None:
            warn(f"{prop}: {ops.render_value(v)!r} is not a number (below: {bound})")
            return False
        return n < bound

    return below


def property_getter(prop: ir.PropertyPattern) -> Callable[[Any], list[Any]]:
    """For a glob property: the closure listing every value whose path matches, in document order."""
    steps: list[tuple[str, Any]] = []
    for part, globbed in zip(prop.parts, prop.globbed, strict=True):
        if not globbed:
            steps.append(("name", part))
        elif part == "*":
            steps.append(("all", None))  # every member: no pattern to match
        else:
            steps.append(("glob", ops.compile_glob(part)))
    frozen = tuple(steps)
    if len(frozen) == 2 and frozen[0][0] == "name" and frozen[1][0] == "all":
        # `labels.*`: the members of one sub-mapping
        outer = frozen[0][1]

        def members(item: object) -> list[Any]:
            inner = item.get(outer) if isinstance(item, dict) else None
            return list(inner.values()) if isinstance(inner, dict) else []

        return members

    def values(item: object) -> list[Any]:
        nodes = [item]
        for how, sel in frozen:
            nxt: list[Any] = []
            for node in nodes:
                if not isinstance(node, dict):
                    continue
                if how == "all":
                    nxt.extend(node.values())
                elif how == "glob":
                    nxt.extend(v for k, v in node.items() if isinstance(k, str) and sel(k) is not None)
                elif sel in node:
                    nxt.append(node[sel])
            nodes = nxt
        return nodes

    return values


def _fused(field: str, test: ir.Test, slow: ValueTest, missing_holds: bool) -> Predicate | None:
    """A single-field, single-test condition as one closure, for the operators that dominate polls."""
    missing = ops.MISSING
    op, operand = test.op, test.operand
    if op == "equals" and isinstance(operand, str):

        def equals_str(item: object, warn: Warn) -> bool:
            return isinstance(item, dict) and item.get(field) == operand

        return equals_str
    if op == "in" and all(isinstance(o, str) for o in operand):
        members = frozenset(operand)

        def in_strs(item: object, warn: Warn) -> bool:
            if not isinstance(item, dict):
                return False
            v = item.get(field)
            return v.__class__ is str and v in members

        return in_strs
    if op == "like":
        glob: ir.ValuePattern = operand
        match = ops.compile_glob(glob.text)

        def like_str(item: object, warn: Warn) -> bool:
            v = item.get(field) if isinstance(item, dict) else None
            if v.__class__ is str:
                return match(v) is not None
            return v is not None and slow(v, warn)

        return like_str
    bound: float = operand if op in ("above", "below") else 0.0
    if op == "above":

        def above(item: object, warn: Warn) -> bool:
            v = item.get(field, missing) if isinstance(item, dict) else missing
            if v.__class__ is int or v.__class__ is float:
                held: bool = v > bound  # two numbers compared
                return held
            if v is missing:
                return missing_holds
            return slow(v, warn)

        return above
    if op == "below":

        def below(item: object, warn: Warn) -> bool:
            v = item.get(field, missing) if isinstance(item, dict) else missing
            if v.__class__ is int or v.__class__ is float:
                held: bool = v < bound  # two numbers compared
                return held
            if v is missing:
                return missing_holds
            return slow(v, warn)

        return below
    if op == "matches" and not ops.regex_needs_timeout(operand.text):
        # the unguarded short-string case of ops.compile_regex, inlined; the rest goes through `slow`
        import regex

        search = regex.compile(operand.text).search
        limit = ops.SAFE_SUBJECT_CHARS

        def matches_str(item: object, warn: Warn) -> bool:
            v = item.get(field, missing) if isinstance(item, dict) else missing
            if v.__class__ is str and len(v) <= limit:
                return search(v) is not None
            if v is missing:
                return missing_holds
            return slow(v, warn)

        return matches_str
    return None


def compile_condition(condition: ir.Condition) -> Predicate:
    """One property and its tests as a predicate on an item."""
    prop = condition.prop
    name = str(prop)
    tests = tuple(compile_test(t, name) for t in condition.tests)
    missing_holds = all(t.op == "not" for t in condition.tests)
    missing = ops.MISSING

    check: ValueTest
    if len(tests) == 1:
        check = tests[0]
    else:

        def check(v: object, warn: Warn) -> bool:
            for t in tests:
                if not t(v, warn):
                    return False
            return True

    if prop.is_glob:
        values = property_getter(prop)
        first = condition.tests[0]
        if len(tests) == 1 and first.op == "equals" and isinstance(first.operand, str):
            wanted = first.operand
            if len(prop.parts) == 2 and not prop.globbed[0] and prop.parts[1] == "*":
                # `labels.*: bug`: one sub-mapping's members, without copying them into a list
                outer = prop.parts[0]

                def member_equals(item: object, warn: Warn) -> bool:
                    inner = item.get(outer) if isinstance(item, dict) else None
                    if not isinstance(inner, dict) or not inner:
                        return missing_holds
                    return wanted in inner.values()

                return member_equals

            def glob_equals(item: object, warn: Warn) -> bool:
                found = values(item)
                return wanted in found if found else missing_holds

            return glob_equals

        def glob_condition(item: object, warn: Warn) -> bool:
            found = values(item)
            if not found:
                return missing_holds
            for v in found:
                if check(v, warn):
                    return True
            return False

        return glob_condition

    if len(prop.parts) == 1:
        (field,) = prop.parts
        fused = _fused(field, condition.tests[0], tests[0], missing_holds) if len(tests) == 1 else None
        if fused is not None:
            return fused
        def plain(item: object, warn: Warn) -> bool:
            v = item.get(field, missing) if isinstance(item, dict) else missing
            if v is missing:
                return missing_holds
            return check(v, warn)

        return plain

    fields = prop.parts
    get_dotted = ops.get_dotted

    def dotted(item: object, warn: Warn) -> bool:
        v = get_dotted(item, fields)
        if v is missing:
            return missing_holds
        return check(v, warn)

    return dotted


def compile_where(where: ir.Where | None) -> Predicate | None:
    """A where as one predicate (None when the trigger has no where: every item holds)."""
    if where is None or not where.conditions:
        return None
    preds = tuple(compile_condition(c) for c in where.conditions)
    if len(preds) == 1:
        return preds[0]
    if where.match == "any":
        if len(preds) == 2:
            first, second = preds

            def either(item: object, warn: Warn) -> bool:
                return first(item, warn) or second(item, warn)

            return either

        def any_of(item: object, warn: Warn) -> bool:
            for p in preds:
                if p(item, warn):
                    return True
            return False

        return any_of
    if len(preds) == 2:
        first, second = preds

        def both(item: object, warn: Warn) -> bool:
            return first(item, warn) and second(item, warn)

        return both

    def all_of(item: object, warn: Warn) -> bool:
        for p in preds:
            if not p(item, warn):
                return False
        return True

    return all_of
