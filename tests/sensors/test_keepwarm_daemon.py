"""keepwarm end to end: the real daemon reads a transcript going idle and prints one wake line on stdout."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from sensor_material import SHIPPED, Transcripts
from tests.runtime.daemon_rig import caught_up

from waiting import PATIENCE


@pytest.mark.slow
def test_the_daemon_wakes_an_idle_session_once_on_stdout(home):
    for path in SHIPPED.glob("*.yaml"):
        if not path.name.endswith(".test.yaml") and path.stem != "keepwarm":
            home.write_user_sensor(path.stem, "spec: 1\nenabled: false\n")
    # The shipped keepwarm, with its timings shortened by a user override (fields of the file);
    # min_tokens: after the first poll, even on a busy machine.
    home.write_user_sensor("keepwarm", "spec: 1\ninterval: 1s\nmin_interval: 500ms\n"
                                       "crate:\n  idle_floor: 6s\n  cache_life: 1h\n  min_tokens: 1000\n")
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project)
    transcripts.turn("s1", 60_000)

    # keepwarm is session-scoped: it watches the transcript of the session this `attend run` serves.
    daemon = subprocess.Popen([sys.executable, "-m", "attend", "run"], cwd=home.project, env=home.env(ATTEND_SESSION="s1"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    errors: list[str] = []
    readers = [threading.Thread(target=lambda s=s, into=into: into.extend(line.rstrip("\n") for line in s), daemon=True)
               for s, into in ((daemon.stdout, lines), (daemon.stderr, errors))]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + PATIENCE
        while not lines and time.monotonic() < deadline and daemon.poll() is None:
            time.sleep(0.05)
        # Caught up: a poll of the same idle stretch after the line, and the session printed the journal
        # to its end: a second line would be on stdout by now.
        caught_up(home, "s1")
    finally:
        daemon.terminate()
        daemon.wait(timeout=PATIENCE)
        for reader in readers:
            reader.join(timeout=5)
        daemon.stdout.close()
        daemon.stderr.close()
    assert lines == ["[attend sensor=keepwarm priority=medium] keepwarm: idle 0 min with 60000 tokens cached; "
                     "the prompt cache lapses in 59 min"], errors
