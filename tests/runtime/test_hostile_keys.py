"""Keys are JSON values (DESIGN.md, Trigger semantics): a list or an object keys its item like any other
value, in the daemon, in a one-shot poll and in the poll history (issue 28, item 1)."""

from __future__ import annotations

import pytest
from daemon_rig import sensors_json, wait_until

pytestmark = pytest.mark.slow

LIST_AND_OBJECT_KEYS = [{"id": [1]}, {"id": {"b": [2], "a": 1}}]


def test_the_daemon_fires_on_list_and_object_keys_and_keeps_running(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    items.set(LIST_AND_OBJECT_KEYS)
    lines = d.wait_for(lambda ls: len(ls) >= 2)
    assert lines == [
        "[attend sensor=items priority=medium] new item [1]",
        '[attend sensor=items priority=medium] new item {"b":[2],"a":1}',
    ]
    items.set([*LIST_AND_OBJECT_KEYS, {"id": 3}])  # still polling after the odd keys
    d.wait_for(lambda ls: any(line.endswith("] new item 3") for line in ls))
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_a_one_shot_poll_fires_on_a_list_key_and_the_history_shows_it(items_sensor, quiet_home) -> None:
    items = items_sensor()
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items.set(LIST_AND_OBJECT_KEYS)
    out = quiet_home.attend("sensors", "poll", "items")
    assert out.returncode == 0, out.stderr
    assert "new item [1]" in out.stdout and 'new item {"b":[2],"a":1}' in out.stdout
    history = quiet_home.attend("sensors", "history", "items")
    assert history.returncode == 0, history.stderr
    assert "key [1]: " in history.stdout and 'key {"a":1,"b":[2]}: ' in history.stdout  # the store keeps traces with sorted keys


def test_a_shelved_trigger_holds_a_list_keyed_fire(items_sensor, quiet_home) -> None:
    items = items_sensor()
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0
    assert quiet_home.attend("sensors", "shelve", "items", "--for", "1h").returncode == 0
    items.set(LIST_AND_OBJECT_KEYS)
    out = quiet_home.attend("sensors", "poll", "items")
    assert out.returncode == 0, out.stderr
    history = quiet_home.attend("sensors", "history", "items")
    assert "key [1]: held: shelved" in history.stdout, history.stdout


# -- issue 28, item 18: CLI inputs past what the store takes --------------------------------------------

def test_history_limit_past_sqlite_integers_shows_every_kept_poll(items_sensor, quiet_home) -> None:
    items_sensor()
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0
    out = quiet_home.attend("sensors", "history", "items", "--limit", str(10**30), "--all")
    assert out.returncode == 0, out.stderr
    assert "baseline" in out.stdout


def test_a_shelve_reason_of_undecodable_bytes_is_stored_with_replacement_characters(items_sensor, quiet_home) -> None:
    import os
    import subprocess
    import sys

    items_sensor()
    argv = [os.fsencode(sys.executable), b"-m", b"attend", b"sensors", b"shelve", b"items", b"--for", b"1h",
            b"--reason", b"\xff"]
    out = subprocess.run(argv, cwd=quiet_home.project, env=quiet_home.env(), capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    shelves = quiet_home.attend("sensors", "history", "items", "--json")
    assert shelves.returncode == 0, shelves.stderr
    assert "\ufffd" in shelves.stdout or "\\ufffd" in shelves.stdout
