"""`python -m attend` runs the CLI (bin/attend, the plugin's hooks and monitor, and `attend run`'s re-exec).

The process starts without the cyclic garbage collector: start-up makes some ten thousand objects that
all live until exit (modules, classes, functions), and the collector's passes over them, which free
nothing, were some 3 ms of a 40 ms hook. `attend.cli.main` turns it back on before any command but a
brief one (`drain`, which every hook runs) does its work: after it imported the command's modules, and
with what start-up made frozen (`gc.freeze`: no later collection, nor the one at exit, looks at those
objects again). `attend run` from its start to its first poll and its exit: 350 -> 292 ms of CPU (best
of 30, benchmarks/bench_run_start.py).
"""

import gc
import sys

gc.disable()

from attend.cli import main  # noqa: E402 - imported with the collector off (above)

sys.exit(main(collector_paused=True))
