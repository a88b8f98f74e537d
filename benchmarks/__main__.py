"""Run every benchmark module (`python -m benchmarks [NAME...]`) and print its figures."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    chosen = [n for n in names if not argv or any(a in n for a in argv)]
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name}: {(module.__doc__ or '').strip().splitlines()[0]}", flush=True)
        started = time.perf_counter()
        module.main()
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
