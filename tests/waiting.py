"""The one way tests wait: `wait_until(predicate)` with one patience setting for the whole suite.

A test waits for a condition it can observe (a line, a journal position, a store row), never for a fixed
time. `PATIENCE` bounds every such wait: long enough for a loaded two-core machine (a daemon's cold start
there takes seconds), short enough that a real hang fails the test. `ATTEND_TEST_PATIENCE` (seconds)
stretches it on a slower machine without touching the tests.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable

#: Seconds any one wait may take before the test fails.
PATIENCE = float(os.environ.get("ATTEND_TEST_PATIENCE", "30"))

#: How often a condition is looked at again (seconds).
STEP = 0.05


def wait_until(predicate: Callable[[], object], timeout: float = PATIENCE, what: str = "condition") -> None:
    """Return once `predicate()` is true; fail the test after `timeout` seconds, naming `what`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(STEP)


def exits(pid: int, timeout: float = PATIENCE) -> bool:
    """Whether process `pid` (any process, not only a child of this one) exits within `timeout` seconds: its
    pidfd turns readable at its exit. A pid already gone counts as exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)
