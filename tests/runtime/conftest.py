"""Fixtures for the runtime tests (the rig itself is in daemon_rig.py)."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from daemon_rig import ITEMS_SCRIPT, NEW_ITEM, DaemonProcess, Items, alive, sensor_yaml
from hook_rig import HIGH_ITEM, INTERVAL, poller


@pytest.fixture
def items_sensor(quiet_home):
    """Write an items command sensor into the user layer; returns the Items file it reports."""

    def make(name: str = "items", *, trigger: dict | None = None, **fields) -> Items:
        script = quiet_home.root / "items_sensor.py"
        script.write_text(ITEMS_SCRIPT)
        items = Items(quiet_home.root / f"{name}.json")
        quiet_home.write_user_sensor(
            name, sensor_yaml(name, [sys.executable, str(script), str(items.path)], trigger=trigger or NEW_ITEM, **fields)
        )
        return items

    return make


#: config.yaml for end-to-end tests that watch many notifications in a few seconds: the governor and
#: the refractory are real but their windows are short (tests that check them use their defaults).
FAST_CONFIG = """\
engagement:
  absolute_refractory: 0
governor:
  event: {cooldown: 0.1, limit: 1000, window: 60}
  message: {cooldown: 0.1, limit: 1000, window: 60}
"""


@pytest.fixture
def daemon(quiet_home):
    """Start daemons in the test's home (with FAST_CONFIG unless a config exists); killed at the end."""
    started: list[DaemonProcess] = []
    if not quiet_home.config_file.exists():
        quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
        quiet_home.config_file.write_text(FAST_CONFIG)

    def start(*args: str, env: dict[str, str] | None = None, command: list[str] | None = None) -> DaemonProcess:
        d = DaemonProcess(quiet_home, *args, env=env, command=command)
        started.append(d)
        return d

    yield start
    for d in started:
        if d.proc.poll() is None:
            d.proc.kill()
        d.proc.wait(timeout=30)
        for reader in d._readers:
            reader.join(timeout=5)


@pytest.fixture
def hooks_home(quiet_home, items_sensor, daemon):
    """A home with a high-magnitude items sensor (and the `daemon` fixture's fast governor); every headless
    poller started in it is killed at the end."""
    quiet_home.idle = "600"
    quiet_home.items = items_sensor(trigger=HIGH_ITEM, interval=f"{INTERVAL}s", min_interval="0.2s")
    seen: set[int] = set()
    quiet_home.track = seen.add
    yield quiet_home
    pid = poller(quiet_home)
    for p in {*seen, *([pid] if pid and pid > 0 else [])}:
        if alive(p):
            os.kill(p, signal.SIGKILL)
