"""Shared timing for benchmarks: best-of-N wall time, and ratios against a baseline."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """The best mean time per call of `fn` over `repeat` rounds of `number` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def report(label: str, value: float, unit: str = "", *, note: str = "") -> None:
    """Print one figure in the common format."""
    tail = f"  ({note})" if note else ""
    print(f"   {label:<58} {value:>10.3f} {unit}{tail}", flush=True)
