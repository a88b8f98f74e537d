"""attend's benchmarks: each `bench_*.py` module has `main() -> list[Result]`; `make bench` runs them all.

Figures are ratios against a baseline measured in the same process and run, never absolute timings
checked by the test suite.
"""
