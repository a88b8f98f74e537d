"""JSONPath IR → a selecting closure (DESIGN.md, Trigger semantics: the path subset).

A path selects a node list in document order: members in mapping order, elements in list order, and
for a descendant segment each node before its descendants (RFC 9535). Paths are specialised at
compile time, because they run on every item of every poll (`path_stages` names the stages, which
`explain` prints):

- walk: a path of plain names and indices walks straight down (no intermediate lists);
- copy: a walk then one wildcard copies the container once;
- fused: every other run of child segments (names, indices, wildcards) becomes one generated loop
  nest, the comprehension a person would write (`for v1 in items: ... append(v1["meta"]["id"])`),
  with no node list between its segments; a path without descendant segments is a single such loop;
- descendant: `..name` and `..*` step the node list (each node before its descendants).

Generated loops subscript, and call only `isinstance`, `len` and list methods; names and indices
enter the source as `repr` literals, never as code. A document is a JSON value (what `json.loads`
returns, or a crate sensor's dicts and lists): a mapping that invents members it does not hold (a
`defaultdict`) would answer a name a plain dict refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend import ir
from attend.compiler import ops

__all__ = ["FUSED_RUN_LIMIT", "PathStep", "compile_path_ir", "fused_source", "is_singular", "path_stages"]

#: The most child segments one generated loop nest holds (Python allows 20 nested loops and 100
#: indentation levels); a longer run is split into several nests that hand on node lists.
FUSED_RUN_LIMIT = 16

Selector = Callable[[Any], list[Any]]
#: One segment as a function from a node list to the next node list.
PathStep = Callable[[list[Any]], list[Any]]


def is_singular(path: ir.Path) -> bool:
    """True when the path selects at most one node (only child name and index segments)."""
    return all(
        isinstance(s, ir.ChildSegment) and not isinstance(s.selector, ir.WildcardSelector) for s in path.segments
    )


def _walk_step(selector: ir.Selector) -> tuple[bool, Any]:
    if isinstance(selector, ir.NameSelector):
        return True, selector.name
    assert isinstance(selector, ir.IndexSelector)
    return False, selector.index


def _singular(steps: list[tuple[bool, Any]]) -> Callable[[object], object]:
    """A walker returning the one node at a singular path, or MISSING."""
    missing = ops.MISSING
    if all(is_name for is_name, _ in steps):
        names = tuple(name for _, name in steps)
        if len(names) == 1:
            (only,) = names

            def walk_one(doc: object) -> object:
                return doc.get(only, missing) if isinstance(doc, dict) else missing

            return walk_one

        def walk_names(doc: object) -> object:
            node = doc
            for name in names:
                if not isinstance(node, dict):
                    return missing
                node = node.get(name, missing)
                if node is missing:
                    return missing
            return node

        return walk_names

    frozen = tuple(steps)

    def walk_mixed(doc: object) -> object:
        node = doc
        for is_name, sel in frozen:
            if is_name:
                if not isinstance(node, dict):
                    return missing
                node = node.get(sel, missing)
                if node is missing:
                    return missing
            else:
                if not isinstance(node, list) or not -len(node) <= sel < len(node):
                    return missing
                node = node[sel]
        return node

    return walk_mixed


def _segment_step(segment: ir.ChildSegment | ir.DescendantSegment) -> PathStep:
    selector = segment.selector
    if isinstance(segment, ir.DescendantSegment):
        # a descendant segment is its selector applied as a child segment to every container below
        # (and including) each node, in document order
        descendants = ops.descendants
        child = _segment_step(ir.ChildSegment(selector=selector))

        def descendant(nodes: list[Any]) -> list[Any]:
            visited: list[Any] = []
            for node in nodes:
                if isinstance(node, (dict, list)):
                    descendants(node, visited)
            return child(visited)

        return descendant
    if isinstance(selector, ir.NameSelector):
        name = selector.name

        def child_name(nodes: list[Any]) -> list[Any]:
            return [v[name] for v in nodes if isinstance(v, dict) and name in v]

        return child_name
    if isinstance(selector, ir.IndexSelector):
        index = selector.index

        def child_index(nodes: list[Any]) -> list[Any]:
            return [v[index] for v in nodes if isinstance(v, list) and -len(v) <= index < len(v)]

        return child_index

    def child_wild(nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for v in nodes:
            if isinstance(v, dict):
                out.extend(v.values())
            elif isinstance(v, list):
                out.extend(v)
        return out

    return child_wild


Segment = ir.ChildSegment | ir.DescendantSegment


def _is_walk(segment: Segment) -> bool:
    return isinstance(segment, ir.ChildSegment) and not isinstance(segment.selector, ir.WildcardSelector)


def path_stages(path: ir.Path) -> list[tuple[str, tuple[Segment, ...]]]:
    """How `compile_path_ir` evaluates `path`: (stage, its segments) in order.

    Stages: `walk` (the leading names and indices), `copy` (one wildcard right after the walk, at the
    end), `fused` (a run of child segments, one generated loop nest; at most `FUSED_RUN_LIMIT` each)
    and `descendant`. A path without descendant segments and with a wildcard is one `fused` stage
    from the document down, its leading names included.
    """
    segments = tuple(path.segments)
    prefix = 0
    while prefix < len(segments) and _is_walk(segments[prefix]):
        prefix += 1
    rest = segments[prefix:]
    if not rest:
        return [("walk", segments)] if segments else []
    if len(rest) == 1 and isinstance(rest[0], ir.ChildSegment):
        return ([("walk", segments[:prefix])] if prefix else []) + [("copy", rest)]
    if not any(isinstance(s, ir.DescendantSegment) for s in segments):
        return [("fused", segments[i:i + FUSED_RUN_LIMIT]) for i in range(0, len(segments), FUSED_RUN_LIMIT)]
    stages: list[tuple[str, tuple[Segment, ...]]] = [("walk", segments[:prefix])] if prefix else []
    run: list[Segment] = []
    for segment in rest:
        if isinstance(segment, ir.DescendantSegment):
            if run:
                stages += [("fused", tuple(run[i:i + FUSED_RUN_LIMIT])) for i in range(0, len(run), FUSED_RUN_LIMIT)]
                run = []
            stages.append(("descendant", (segment,)))
        else:
            run.append(segment)
    if run:
        stages += [("fused", tuple(run[i:i + FUSED_RUN_LIMIT])) for i in range(0, len(run), FUSED_RUN_LIMIT)]
    return stages


def fused_source(segments: tuple[ir.ChildSegment, ...], *, from_nodes: bool) -> str:
    """The Python source of one fused run: `fused(src)` returns the list of nodes it selects.

    With `from_nodes`, `src` is a node list and each node is walked in turn; otherwise `src` is the
    document itself. The loop nest is the comprehension a person would write, with what RFC 9535
    needs to skip what is not there:

    - a run of names is one subscript chain, `v1['meta']['owner']['id']`, in a `try`: on a JSON value
      a member that is missing raises KeyError and a node that is not a mapping (list, string,
      number, null) raises TypeError, so the node is skipped exactly when the RFC skips it, at the
      speed of the hand-written chain;
    - an index tests the node is a list long enough (a string would index too);
    - a wildcard is a `for` over a mapping's values or a list's elements (nothing for a scalar), and a
      trailing one extends the output by the whole container.

    Names and indices enter the source as `repr` literals, never as code.
    """
    lines = ["def fused(src, isinstance=isinstance, dict=dict, list=list, len=len):",
             "    out = []", "    append = out.append"]
    if from_nodes:
        lines.append("    for v0 in src:")
        depth = 2
    else:
        lines.append("    v0 = src")
        depth = 1
    k = 0  # the current node is v{k}
    i = 0
    while i < len(segments):
        pad = "    " * depth
        sel = segments[i].selector
        here = f"v{k}"
        if isinstance(sel, ir.NameSelector):
            names = []
            while i < len(segments) and isinstance(named := segments[i].selector, ir.NameSelector):
                names.append(named.name)
                i += 1
            k += 1
            chain = "".join(f"[{name!r}]" for name in names)
            lines += [f"{pad}try:", f"{pad}    v{k} = {here}{chain}", f"{pad}except (KeyError, TypeError):",
                      f"{pad}    pass", f"{pad}else:"]
            depth += 1
            continue
        i += 1
        if isinstance(sel, ir.IndexSelector):
            need = -sel.index if sel.index < 0 else sel.index + 1
            k += 1
            lines += [f"{pad}if isinstance({here}, list) and {need} <= len({here}):", f"{pad}    v{k} = {here}[{sel.index}]"]
            depth += 1
        elif i == len(segments):  # a trailing wildcard: the container's members in one call
            lines += [f"{pad}if isinstance({here}, dict):", f"{pad}    out.extend({here}.values())",
                      f"{pad}elif isinstance({here}, list):", f"{pad}    out.extend({here})", "    return out"]
            return "\n".join(lines) + "\n"
        else:
            k += 1
            lines.append(f"{pad}for v{k} in ({here}.values() if isinstance({here}, dict) "
                         f"else {here} if isinstance({here}, list) else ()):")
            depth += 1
    lines += [f"{'    ' * depth}append(v{k})", "    return out"]
    return "\n".join(lines) + "\n"


def _fused(segments: tuple[ir.ChildSegment, ...], *, from_nodes: bool) -> Callable[[Any], list[Any]]:
    namespace: dict[str, Any] = {}
    source = fused_source(segments, from_nodes=from_nodes)
    exec(compile(source, "<attend fused path>", "exec"), namespace)  # noqa: S102 - literals only, see fused_source
    fused: Callable[[Any], list[Any]] = namespace["fused"]
    return fused


def compile_path_ir(path: ir.Path) -> Selector:
    """The closure selecting `path`'s node list from a document.

    Args:
        path: a parsed path.

    Returns:
        A callable mapping a document to a new list of the selected values, in document order.
    """
    stages = path_stages(path)
    if not stages:
        return lambda doc: [doc]
    missing = ops.MISSING
    kinds = [kind for kind, _ in stages]
    if kinds == ["fused"]:
        # a fused stage holds child segments only (path_stages), which its tuple's type does not say
        return _fused(stages[0][1], from_nodes=False)  # type: ignore[arg-type]
    walk = _singular([_walk_step(s.selector) for s in stages[0][1]]) if kinds[0] == "walk" else None

    if kinds == ["walk"]:
        assert walk is not None

        def select_singular(doc: object) -> list[Any]:
            node = walk(doc)
            return [] if node is missing else [node]

        return select_singular

    if kinds[-1] == "copy":
        # `$.items[*]`, the commonest trigger path: one container copied once

        def select_all(doc: object) -> list[Any]:
            node = walk(doc) if walk is not None else doc
            if isinstance(node, list):
                return list(node)
            if isinstance(node, dict):
                return list(node.values())
            return []

        return select_all

    steps = tuple(
        # a fused stage holds child segments only (path_stages), which its tuple's type does not say
        _fused(run, from_nodes=True) if kind == "fused" else _segment_step(run[0])  # type: ignore[arg-type]
        for kind, run in stages if kind != "walk"
    )

    def select_general(doc: object) -> list[Any]:
        if walk is not None:
            node = walk(doc)
            if node is missing:
                return []
            nodes = [node]
        else:
            nodes = [doc]
        for step in steps:
            if not nodes:
                return nodes
            nodes = step(nodes)
        return nodes

    return select_general
