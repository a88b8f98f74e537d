"""Fixtures for the sensors tab: a home with two user sensors and live state at a fixed time.

Textual runs on asyncio while the suite runs async tests on trio (`trio_mode`), so the pilot tests are
plain functions that run their scenario with `asyncio.run` (`drive`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tab_rig import NOW

#: The data files beside these tests.
DATA = Path(__file__).parent / "data"

@pytest.fixture
def tab_home(home):
    """`home` with the user sensors `weather` and `build`, and a stored status for each at `NOW`."""
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    for name in ("weather", "build"):
        home.write_user_sensor(name, (DATA / f"{name}.yaml").read_text())
    with open_project_store(layer_paths(home.project), clock=lambda: NOW - 60) as store:
        store.update_status("weather", state="ok", message="", last_poll=NOW - 12, next_poll=NOW + 18, interval=30.0)
        store.update_status("build", state="timeout", message="the command ran longer than 10s and was killed",
                            last_poll=NOW - 40, next_poll=NOW + 20, failures=2, interval=60.0)
    return home
