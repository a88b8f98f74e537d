"""Path selection as a user calls it (`attend.compile_path(expr)(doc)`, 10,000 items) against hand-written Python and python-jsonpath.

Each path is selected from the same document of 10,000 items; the figure is attend's best time as a
ratio to the comprehension a person would write for that path (goal: at most 2x), and
python-jsonpath's (`jsonpath.compile(expr).findall`) as a ratio to the same baseline. All three must
return the same list. `explain` shows how each path is evaluated (its stages; compiler/jsonpath.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jsonpath

import attend
from benchmarks.timing import best_of, report

#: Items in the document.
ITEMS = 10_000


def _document() -> dict[str, Any]:
    return {"items": [{"id": i, "name": f"item {i}", "meta": {"owner": {"id": i % 97, "name": f"o{i % 97}"}},
                       "tags": ["a", "b"]} for i in range(ITEMS)], "total": ITEMS}


def _descendant_ids(doc: Any) -> list[Any]:
    out: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if "id" in node:
                out.append(node["id"])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(doc)
    return out


#: Each path and the Python a person would write for it.
HAND_WRITTEN: dict[str, Callable[[Any], list[Any]]] = {
    "$.items[*].name": lambda doc: [item["name"] for item in doc["items"]],
    "$.items[*].meta.owner.id": lambda doc: [item["meta"]["owner"]["id"] for item in doc["items"]],
    "$..id": _descendant_ids,
    "$.items[*]": lambda doc: list(doc["items"]),
}


def main() -> None:
    """Print, per path, attend and python-jsonpath as ratios to the hand-written selection."""
    doc = _document()
    for expr, hand in HAND_WRITTEN.items():
        ours, theirs = attend.compile_path(expr), jsonpath.compile(expr).findall
        expected = hand(doc)
        assert ours(doc) == expected, expr
        assert theirs(doc) == expected, expr
        # Interleaved rounds, best of each: the machine's load moves all three the same way.
        rounds = [(best_of(partial(hand, doc), repeat=1), best_of(partial(ours, doc), repeat=1),
                   best_of(partial(theirs, doc), repeat=1)) for _ in range(7)]
        base, mine, other = (min(r[i] for r in rounds) for i in range(3))
        report(f"{expr}: attend vs hand-written (goal <= 2x)", mine / base, "x",
               note=f"hand-written {base * 1000:.2f} ms")
        report(f"{expr}: python-jsonpath vs hand-written", other / base, "x")


if __name__ == "__main__":
    main()
