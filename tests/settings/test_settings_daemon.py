"""End to end: a running daemon picks up what `attend settings set` writes (through its file watching)."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading

import pytest

#: How long to wait for a line the daemon should print (it watches files every half second).
LINE_TIMEOUT = 30.0

SENSOR = """\
spec: 1
name: {name}
kind: command
enabled: {enabled}
interval: 1s
min_interval: 1s
command:
  argv: [echo, '{{"v": 1}}']
triggers:
  seen:
    path: $.v
    on: changed
    initial: fire
    magnitude: 5.0
    description: "{name} polled"
"""


def _lines(stream, out: queue.Queue) -> None:
    for line in stream:
        out.put(line.rstrip("\n"))


def _wait_for(lines: queue.Queue, wanted: str) -> list[str]:
    seen = []
    while True:
        try:
            line = lines.get(timeout=LINE_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"the daemon never printed {wanted!r}; it printed {seen}")
        seen.append(line)
        if wanted in line:
            return seen


@pytest.mark.slow
def test_a_sensor_enabled_through_settings_starts_in_the_running_daemon(home):
    home.write_user_sensor("up", SENSOR.format(name="up", enabled="true"))
    late = home.write_user_sensor("late", SENSOR.format(name="late", enabled="false"))
    home.config_file.write_text("governor:\n  event: {cooldown: 0, limit: 100, window: 1}\n")
    daemon = subprocess.Popen([sys.executable, "-m", "attend", "run"], cwd=home.project, env=home.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_lines, args=(daemon.stdout, lines), daemon=True)
    reader.start()
    try:
        _wait_for(lines, "[attend sensor=up priority=high] up polled")
        result = home.attend("settings", "set", "attend.sensors.late.enabled", "true")
        assert result.returncode == 0, result.stderr
        assert "enabled: true\n" in late.read_text()
        seen = _wait_for(lines, "[attend sensor=late priority=high] late polled")
        assert not any("late" in line for line in seen[:-1])
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        daemon.stdout.close()
        reader.join(timeout=5)
