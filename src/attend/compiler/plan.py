"""The compiled plan of a trigger, as data: what `attend explain` prints (text or JSON).

Built from the IR and the compiled trigger, never from the closures' internals, so the plan says what
the evaluator does in the spec's own words: the path's steps and how they are walked, the key, the
transition rule, the condition tree (operator, exact/glob/regex, the compiled pattern, any/all over
wildcard properties), the template's parts, the state kept between polls and the definition hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attend import ir
from attend.compiler import ops
from attend.compiler.jsonpath import is_singular, path_stages
from attend.compiler.triggers import STATE_VERSION, CompiledTrigger

if TYPE_CHECKING:  # what `trigger_plan` builds, piece by piece (`attend explain --json` prints it)
    from typing import NotRequired, TypedDict

    class SegmentPlan(TypedDict):
        segment: str
        selects: str

    class StagePlan(TypedDict):
        stage: str
        segments: str
        does: str

    class PathPlan(TypedDict):
        expression: str
        steps: list[SegmentPlan]
        walk: str
        stages: list[StagePlan]

    class TestPlan(TypedDict):
        op: str
        bare: bool
        operand: NotRequired[object]
        mode: NotRequired[str]
        compiled: NotRequired[str]
        flags: NotRequired[str]
        note: NotRequired[str]

    class ConditionPlan(TypedDict):
        property: str
        property_mode: NotRequired[str]
        compiled: NotRequired[list[str]]
        tests: NotRequired[list[TestPlan]]
        when_missing: NotRequired[str]

    class WherePlan(TypedDict):
        match: str
        conditions: list[ConditionPlan]

    class TemplatePartPlan(TypedDict, total=False):
        literal: str
        field: str
        root: str
        fields: list[str]

    class DescriptionPlan(TypedDict):
        template: str
        parts: list[TemplatePartPlan]

    class HoldPlan(TypedDict):
        seconds: float
        rule: str

    FlapPlan = TypedDict("FlapPlan", {"limit": int, "window": float, "rule": str, "from": str})
    NoisePlan = TypedDict("NoisePlan", {"for": HoldPlan | None, "clear_where": WherePlan | None,
                                        "hysteresis": str | None, "flap": FlapPlan})

    class StatePlan(TypedDict):
        shape: dict[str, object]
        keeps: str
        first_poll: str

    class TriggerPlan(TypedDict):
        name: str
        definition_hash: str
        canonical: str
        path: PathPlan
        key: str | None
        items: str
        on: str
        rule: str
        where: WherePlan | None
        magnitude: float
        description: DescriptionPlan
        author: str | None
        initial: str
        noise: NoisePlan
        state: StatePlan
        supersedes: NotRequired[dict[str, list[str]]]  # added by attend explain (commands/explain.py)

__all__ = ["STAGE_WORDS", "TRANSITION_RULES", "trigger_plan"]

#: What each `on` fires on, in the words explain uses (DESIGN.md, Trigger semantics).
TRANSITION_RULES: dict[str, str] = {
    "added": "a key present now and not in the previous poll (where checked on the current value)",
    "removed": "a key present in the previous poll and not now (where checked on the previous value)",
    "changed": "the same key with a different value (where checked on the current value)",
    "enters": "where holds now and did not in the previous poll (a new item that satisfies where enters)",
    "leaves": "where held in the previous poll and does not now (a removed item that satisfied it leaves)",
}
#: The rules that read otherwise for a trigger without `key` (its node is watched as a whole).
KEYLESS_RULES: dict[str, str] = {
    "changed": "the watched value differs from the previous poll's (where checked on the current value)",
}


def _segment(segment: ir.ChildSegment | ir.DescendantSegment) -> SegmentPlan:
    sel = segment.selector
    if isinstance(segment, ir.DescendantSegment):
        what = f"member {sel.name!r} of each node and of all its descendants" if isinstance(sel, ir.NameSelector) \
            else "every member and element of each node and of all its descendants"
    elif isinstance(sel, ir.NameSelector):
        what = f"member {sel.name!r} of each mapping"
    elif isinstance(sel, ir.IndexSelector):
        what = f"element {sel.index} of each list" + (" (counted from the end)" if sel.index < 0 else "")
    else:
        what = "every member of each mapping, every element of each list"
    return {"segment": str(segment), "selects": what}


#: What each evaluation stage of a path does (compiler/jsonpath.py, `path_stages`).
STAGE_WORDS = {
    "walk": "a direct walk down names and indices",
    "copy": "one copy of the container's members",
    "fused": "one generated loop nest, no node list between its segments",
    "descendant": "each node, then all its descendants, in document order",
}


def _stages(path: ir.Path) -> list[StagePlan]:
    return [{"stage": kind, "segments": "".join(str(s) for s in run), "does": STAGE_WORDS[kind]}
            for kind, run in path_stages(path)]


def _strategy(path: ir.Path) -> str:
    kinds = [kind for kind, _ in path_stages(path)]
    if not kinds:
        return "the whole poll result"
    if kinds == ["walk"]:
        return "a direct walk down names and indices (at most one node)"
    if kinds[-1] == "copy":
        return "a direct walk, then one copy of the container's members"
    if set(kinds) == {"fused"}:
        return "one fused loop nest from the document down, the comprehension a person would write"
    return "a node list handed from stage to stage (" + ", then ".join(kinds) + ")"


def _operand(test: ir.Test) -> TestPlan:
    operand = test.operand
    out: TestPlan = {"op": test.op, "bare": test.bare}
    if isinstance(operand, ir.ValuePattern):
        out["operand"] = operand.text
        out["mode"] = operand.mode
        if operand.mode == "glob":
            out["compiled"] = ops.glob_regex(operand.text)
            out["flags"] = "wcmatch fnmatch CASE|DOTMATCH (case-sensitive, * matches a leading dot)"
        else:
            out["compiled"] = operand.text
            out["flags"] = f"regex module, search (unanchored), timeout {ops.REGEX_TIMEOUT} s"
    elif test.op in ("above", "below"):
        out["operand"], out["mode"], out["note"] = operand, "numeric", "numeric strings compare as numbers; other values warn"
    elif test.op == "in":
        out["operand"], out["mode"], out["note"] = list(operand), "exact", "any of the listed values"
    elif test.op == "contains":
        out["operand"], out["mode"], out["note"] = operand, "exact", "substring, list element or mapping key"
    else:
        out["operand"], out["mode"] = list(operand) if isinstance(operand, tuple) else operand, "exact"
    return out


def _conditions(where: ir.Where | None) -> WherePlan | None:
    if where is None:
        return None
    conditions: list[ConditionPlan] = []
    for c in where.conditions:
        prop: ConditionPlan = {"property": str(c.prop)}
        if c.prop.is_glob:
            prop["property_mode"] = "glob: holds when any matching field passes every test"
            prop["compiled"] = [
                ops.glob_regex(p) if g else p for p, g in zip(c.prop.parts, c.prop.globbed, strict=True)
            ]
        else:
            prop["property_mode"] = "exact field" + (" (dotted)" if len(c.prop.parts) > 1 else "")
        prop["tests"] = [_operand(t) for t in c.tests]
        prop["when_missing"] = "holds (only `not`)" if all(t.op == "not" for t in c.tests) else "fails"
        conditions.append(prop)
    return {"match": where.match, "conditions": conditions}


def _template(template: ir.Template) -> list[TemplatePartPlan]:
    parts: list[TemplatePartPlan] = []
    for p in template.parts:
        if isinstance(p, ir.Literal_):
            parts.append({"literal": p.text})
        else:
            parts.append({"field": str(p)[1:-1], "root": p.root, "fields": list(p.fields)})
    return parts


#: What a pending `for:` waits for, per `on` (DESIGN.md, Noise controls).
HOLD_RULES: dict[str, str] = {
    "added": "the added key still present (and where still holding)",
    "removed": "the removed key still absent",
    "changed": "the value still the new one",
    "enters": "the item still inside where",
    "leaves": "the item still outside where",
}


def _noise(trigger: CompiledTrigger) -> NoisePlan:
    t = trigger.ir
    hold: HoldPlan | None = None
    if t.hold is not None:
        hold = {"seconds": t.hold, "rule": f"a transition waits in pending until it has held that long: {HOLD_RULES[t.on]}; "
                "undone sooner, it fires nothing; the wait is kept across restarts"}
    flap = trigger.flap
    flap_rule = "off" if not flap.limit else (
        f"more than {flap.limit} return{'s' if flap.limit != 1 else ''} of one key to a value it had within "
        f"{flap.window:g}s is flapping (a move to a new value is progress): one line says so, further fires "
        "are held until one quiet window, then one line says it settled and states the newest value")
    return {
        "for": hold,
        "clear_where": _conditions(t.clear_where),
        "hysteresis": "an item inside stays inside until clear_where holds; outside, it enters when where holds"
        if t.clear_where is not None else None,
        "flap": {"limit": flap.limit, "window": flap.window, "rule": flap_rule, "from": trigger.flap_from},
    }


def _state(trigger: ir.Trigger, flap_on: bool) -> StatePlan:
    shape: dict[str, object]
    if trigger.key is not None:
        shape = {"v": STATE_VERSION, "items": "{key: the item's value, ...}"}
        if trigger.on in ("enters", "leaves"):
            shape["holding"] = "[keys for which where held]"
        why = "each item's value by key (for changed, removed and {previous})"
    else:
        shape = {"v": STATE_VERSION, "present": "bool", "value": "the watched value", "holding": "bool"}
        why = "the watched value as a whole and whether where held"
    if trigger.hold is not None:
        shape["pending"] = "{key: {since, value, previous}} (transitions waiting for `for`)"
    if flap_on:
        shape["flap"] = "{key: {t: [recent fire times], since, held, last}} (only keys that fired within the window)"
    return {"shape": shape, "keeps": why, "first_poll": "fires (initial: fire)" if trigger.initial == "fire"
            else "baseline: recorded, nothing fires"}


def trigger_plan(trigger: CompiledTrigger) -> TriggerPlan:
    """The plan of one compiled trigger as JSON-ready data."""
    t = trigger.ir
    return {
        "name": t.name,
        "definition_hash": trigger.definition_hash,
        "canonical": str(t),
        "path": {"expression": str(t.path), "steps": [_segment(s) for s in t.path.segments],
                 "walk": _strategy(t.path), "stages": _stages(t.path)},
        "key": ".".join(t.key) if t.key else None,
        "items": "each selected node, identified by its key" if t.key
        else ("the selected node, watched as a whole" if is_singular(t.path) else "the selected node list, watched as a whole"),
        "on": t.on,
        "rule": TRANSITION_RULES[t.on] if t.key else KEYLESS_RULES.get(t.on, TRANSITION_RULES[t.on]),
        "where": _conditions(t.where),
        "magnitude": t.magnitude,
        "description": {"template": str(t.description), "parts": _template(t.description)},
        "author": ".".join(t.author) if t.author else None,
        "initial": t.initial,
        "noise": _noise(trigger),
        "state": _state(t, bool(trigger.flap.limit)),
    }
