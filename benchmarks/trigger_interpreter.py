"""A tree-walking interpreter of the trigger IR: the baseline that shows what compiling buys.

It decides exactly what `attend.compiler` decides (same selection, conditions, transitions and
descriptions), but walks the IR for every item of every poll: dispatching on node types, looking up
operators by name, and matching globs and regexes through the libraries' own pattern caches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex
from wcmatch import fnmatch

from attend import ir
from attend.compiler.ops import MISSING, as_number, contains, descendants, get_dotted, key_text, key_value, render_value, same

FLAGS = fnmatch.CASE | fnmatch.DOTMATCH


def select(path: ir.Path, doc: Any) -> list[Any]:
    nodes = [doc]
    for segment in path.segments:
        sel = segment.selector
        if isinstance(segment, ir.DescendantSegment):
            visited: list[Any] = []
            for n in nodes:
                if isinstance(n, (dict, list)):
                    descendants(n, visited)
            nodes = visited
        out: list[Any] = []
        for n in nodes:
            if isinstance(sel, ir.NameSelector):
                if isinstance(n, dict) and sel.name in n:
                    out.append(n[sel.name])
            elif isinstance(sel, ir.IndexSelector):
                if isinstance(n, list) and -len(n) <= sel.index < len(n):
                    out.append(n[sel.index])
            elif isinstance(n, dict):
                out.extend(n.values())
            elif isinstance(n, list):
                out.extend(n)
        nodes = out
    return nodes


def run_test(test: ir.Test, value: Any) -> bool:
    op, operand = test.op, test.operand
    if op == "equals":
        return same(value, list(operand) if isinstance(operand, tuple) else operand)
    if op == "not":
        return not same(value, list(operand) if isinstance(operand, tuple) else operand)
    if op == "in":
        return any(same(value, o) for o in operand)
    if op == "contains":
        return contains(value, operand)
    if op == "like":
        return isinstance(value, str) and fnmatch.fnmatch(value, operand.text, flags=FLAGS)
    if op == "matches":
        return isinstance(value, str) and regex.search(operand.text, value) is not None
    n = as_number(value)
    if n is None:
        return False
    return n > operand if op == "above" else n < operand


def property_values(prop: ir.PropertyPattern, item: Any) -> list[Any]:
    nodes = [item]
    for part, globbed in zip(prop.parts, prop.globbed, strict=True):
        nxt: list[Any] = []
        for n in nodes:
            if isinstance(n, dict):
                if globbed:
                    nxt.extend(v for k, v in n.items() if fnmatch.fnmatch(k, part, flags=FLAGS))
                elif part in n:
                    nxt.append(n[part])
        nodes = nxt
    return nodes


def holds(where: ir.Where | None, item: Any) -> bool:
    if where is None:
        return True
    results = []
    for c in where.conditions:
        values = property_values(c.prop, item)
        if not values:
            ok = all(t.op == "not" for t in c.tests)
        else:
            ok = any(all(run_test(t, v) for t in c.tests) for v in values)
        results.append(ok)
    return all(results) if where.match == "all" else any(results)


def render(template: ir.Template, item: Any, key: str | None, previous: Any) -> str:
    out = []
    for p in template.parts:
        if isinstance(p, ir.Literal_):
            out.append(p.text)
        elif p.root == "item":
            out.append(render_value(get_dotted(item, p.fields)))
        elif p.root == "value":
            out.append(render_value(item))
        elif p.root == "key":
            out.append("" if key is None else render_value(key_value(key)))
        else:
            out.append("" if previous is MISSING else render_value(get_dotted(previous, p.fields)))
    return "".join(out)


def step(t: ir.Trigger, state: Mapping[str, Any], result: Any) -> tuple[list[tuple[str | None, str]], dict[str, Any]]:
    """One poll of trigger `t` against a previous state (never a baseline): (key, description) fires."""
    nodes = select(t.path, result)
    fires: list[tuple[str | None, str]] = []
    if t.key is None:
        value = nodes[0] if nodes else None
        now = bool(nodes) and holds(t.where, value)
        if t.on == "changed" and nodes and (not state["present"] or state["value"] != value) and now:
            fires.append((None, render(t.description, value, None, state["value"])))
        return fires, {"v": 1, "present": bool(nodes), "value": value, "holding": now}
    items: dict[str, Any] = {}
    for n in nodes:
        k = get_dotted(n, t.key)
        if k is MISSING:
            continue
        k = key_text(k)
        if k not in items:
            items[k] = n
    prev = state["items"]
    new: dict[str, Any] = {"v": 1, "items": items}
    if t.on in ("enters", "leaves"):
        holding = [k for k, v in items.items() if holds(t.where, v)]
        new["holding"] = holding
        before = set(state.get("holding", ()))
        if t.on == "enters":
            fires = [(k, render(t.description, items[k], k, prev.get(k, MISSING))) for k in holding if k not in before]
        else:
            inside = set(holding)
            for k in state.get("holding", ()):
                if k not in inside:
                    p = prev.get(k, MISSING)
                    fires.append((k, render(t.description, items.get(k, p), k, p)))
    elif t.on == "added":
        fires = [(k, render(t.description, v, k, MISSING)) for k, v in items.items() if k not in prev and holds(t.where, v)]
    elif t.on == "removed":
        fires = [(k, render(t.description, v, k, v)) for k, v in prev.items() if k not in items and holds(t.where, v)]
    else:
        fires = [(k, render(t.description, v, k, prev[k])) for k, v in items.items()
                 if k in prev and prev[k] != v and holds(t.where, v)]
    return fires, new
