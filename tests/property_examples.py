"""How many examples a property test draws: its own count in `make test`, a quarter in `make test-fast`.

A property test states its count for the whole suite (`@settings(max_examples=examples(300))`): `make test`
and CI (profiles "dev" and "ci", Hypothesis' 100 examples by default) draw exactly that many. `make
test-fast` loads the "fast" profile (25 by default, tests/conftest.py), and every count is scaled by the
same quarter: the inner loop tries each property on fewer examples, the full suite on all of them.
"""

from __future__ import annotations

from hypothesis import settings

#: Hypothesis' own default count, the one the "dev" and "ci" profiles keep.
FULL = 100


def examples(count: int) -> int:
    """`count` examples in a full run; under a profile with a smaller default, as many in proportion (≥ 1)."""
    return max(1, count * settings.default.max_examples // FULL)
