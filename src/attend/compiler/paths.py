"""JSONPath IR → a selecting closure (DESIGN.md, Trigger semantics: the path subset).

A path selects a node list in document order: members in mapping order, elements in list order, and
for a descendant segment each node before its descendants (RFC 9535). Paths are specialised at
compile time, because they run on every item of every poll: a path of plain names and indices walks
straight down (no intermediate lists), a path ending in one wildcard copies the container once, and
only the general case steps a node list segment by segment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend import ir
from attend.compiler import ops

__all__ = ["PathStep", "compile_path_ir", "is_singular"]

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


def _singular(steps: list[tuple[bool, Any]]) -> Callable[[Any], Any]:
    """A walker returning the one node at a singular path, or MISSING."""
    missing = ops.MISSING
    if all(is_name for is_name, _ in steps):
        names = tuple(name for _, name in steps)
        if len(names) == 1:
            (only,) = names

            def walk_one(doc: Any) -> Any:
                return doc.get(only, missing) if isinstance(doc, dict) else missing

            return walk_one

        def walk_names(doc: Any) -> Any:
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

    def walk_mixed(doc: Any) -> Any:
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


def compile_path_ir(path: ir.Path) -> Selector:
    """The closure selecting `path`'s node list from a document.

    Args:
        path: a parsed path.

    Returns:
        A callable mapping a document to a new list of the selected values, in document order.
    """
    segments = list(path.segments)
    if not segments:
        return lambda doc: [doc]
    # the longest prefix of plain names/indices is walked directly
    prefix: list[tuple[bool, Any]] = []
    for segment in segments:
        if isinstance(segment, ir.ChildSegment) and not isinstance(segment.selector, ir.WildcardSelector):
            prefix.append(_walk_step(segment.selector))
        else:
            break
    rest = segments[len(prefix) :]
    missing = ops.MISSING
    walk = _singular(prefix) if prefix else None

    if not rest:
        assert walk is not None

        def select_singular(doc: Any) -> list[Any]:
            node = walk(doc)
            return [] if node is missing else [node]

        return select_singular

    if len(rest) == 1 and isinstance(rest[0], ir.ChildSegment):
        # `$.items[*]`, the commonest trigger path: one container copied once

        def select_all(doc: Any) -> list[Any]:
            node = walk(doc) if walk is not None else doc
            if isinstance(node, list):
                return list(node)
            if isinstance(node, dict):
                return list(node.values())
            return []

        return select_all

    steps = tuple(_segment_step(s) for s in rest)

    def select_general(doc: Any) -> list[Any]:
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
