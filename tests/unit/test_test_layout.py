"""The suite's own layout: pytest imports test modules by their basename (rootdir-relative, no packages), so two
test files with one name in different folders make one of them a collection error on a clean checkout."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_basename():
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if "__pycache__" not in path.parts:
            by_name[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: sorted(paths) for name, paths in by_name.items() if len(paths) > 1 and name != "conftest.py"}
    assert shared == {}
