"""Times as a caller or a damaged store could give them, for the property tests over the trigger API
(issue 28, item 19): floats of every kind, integers past a float's range, and values that are not
numbers at all; and the rule the API holds them to."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

TIME = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**6), 10**6),
                 st.sampled_from([10**400, -(10**400), 10**308, 2**1024]), st.booleans(), st.text(max_size=2))


def finite_seconds(value: Any) -> bool:
    """Whether `value` is a time the API takes: a number (not a bool), finite, within a float's range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
