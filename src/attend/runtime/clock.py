"""The runtime's one wall clock (issue 38: one clock).

Every wall-clock time the runtime reads (a poll's time, a shelf's end, a journal row's, a session's beat,
what "stale" and "recent" are measured from) comes from a clock it was given: the daemon's, the printer's,
a one-shot command's, and below them the store's (`Store.now()`, the clock the store was opened with).
`WALL_CLOCK` is the one default: an entry point that is given no clock takes it, so a test hands a fake
clock to the entry point and every time read beneath it follows. Monotonic clocks (how long a poll or a
stream ran, the doorbell's waits) are not wall-clock times and are injected on their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["WALL_CLOCK", "Clock"]

#: What a clock is: a call giving the time in seconds since the epoch.
Clock = Callable[[], float]

#: The clock of an entry point given none: the system's wall clock.
WALL_CLOCK: Clock = time.time
