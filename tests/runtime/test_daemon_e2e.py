"""The real daemon as a subprocess in a temporary XDG home, with real command sensors."""

from __future__ import annotations

import json
import signal
import sys

import pytest
from daemon_rig import (
    NEW_ITEM,
    alive,
    caught_up,
    journal_rows,
    last_poll,
    query,
    recorded_state,
    sensor_yaml,
    sensors_json,
    wait_until,
)

pytestmark = pytest.mark.slow


def _has(line: str):
    return lambda lines: line in lines


def test_the_daemon_prints_one_line_per_new_item(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    items.set([{"id": 1}, {"id": 2}])
    lines = d.wait_for(lambda ls: len(ls) >= 2)
    assert lines == ["[attend sensor=items priority=medium] new item 1", "[attend sensor=items priority=medium] new item 2"]
    rows = journal_rows(quiet_home)
    assert [(r["description"], r["priority"], r["printed"], r["test"]) for r in rows] == [
        ("new item 1", "medium", 1, 0),
        ("new item 2", "medium", 1, 0),
    ]
    assert d.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_children_and_exits_0(quiet_home, daemon, sig) -> None:
    pidfile = quiet_home.root / "child.pid"
    script = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)"
    quiet_home.write_user_sensor("hang", sensor_yaml("hang", [sys.executable, "-c", script], command={"timeout": "60s"}))
    d = daemon()
    # The file exists from the child's open() and holds its pid from its write: wait for the pid.
    wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the command to start")
    child = int(pidfile.read_text())
    assert d.stop(sig) == 0
    wait_until(lambda: not alive(child), timeout=5, what="the child to die")


def test_each_command_fault_ends_in_its_state_and_the_others_keep_working(items_sensor, daemon, quiet_home) -> None:
    py = sys.executable
    faults = {
        "hangs": ([py, "-c", "import time; time.sleep(60)"], {"timeout": "1s"}),
        "floods": ([py, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"], {"max_output": 200000}),
        "badjson": ([py, "-c", "print('{not json')"], {}),
        "badutf8": ([py, "-c", "import sys; sys.stdout.buffer.write(b'{\"a\": \"\\xff\\xfe\"}')"], {}),
        "exits": ([py, "-c", "import sys; print('no token', file=sys.stderr); sys.exit(3)"], {}),
        "missing": (["/nonexistent/attend-sensor"], {}),
    }
    for name, (argv, command) in faults.items():
        quiet_home.write_user_sensor(name, sensor_yaml(name, argv, trigger=NEW_ITEM, command=command))
    items = items_sensor()
    d = daemon()
    expected = {
        "hangs": "timeout",
        "floods": "malformed",
        "badjson": "malformed",
        "badutf8": "malformed",
        "exits": "exit",
        "missing": "exec_failed",
    }

    def settled() -> bool:
        rows = sensors_json(quiet_home)
        return all(rows[n]["state"] == s for n, s in expected.items()) and rows["items"]["last_poll"] is not None

    wait_until(settled, what="every fault to be recorded")
    rows = sensors_json(quiet_home)
    assert "exit code 3: no token" in rows["exits"]["message"]
    assert rows["exits"]["failures"] >= 1
    assert "UTF-8" in rows["badutf8"]["message"]
    assert "JSON" in rows["badjson"]["message"]
    assert "200000 bytes" in rows["floods"]["message"]
    assert "1 s" in rows["hangs"]["message"]
    assert rows["missing"]["message"]
    assert all(rows[n]["last_poll"] and rows[n]["next_poll"] and rows[n]["daemon_running"] for n in expected)
    items.set([{"id": "a"}])
    d.wait_for(_has("[attend sensor=items priority=medium] new item a"))
    assert sensors_json(quiet_home)["items"]["state"] == "ok"
    assert d.proc.poll() is None


def test_state_survives_a_restart(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    items.set([{"id": 1}])
    first = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the baseline poll")
    assert first.stop() == 0
    assert first.stdout == []
    items.set([{"id": 1}, {"id": 2}])
    second = daemon()
    second.wait_for(lambda ls: len(ls) >= 1)
    caught_up(quiet_home, second.session)  # a repeat, or item 1 again, would show by now
    assert second.stdout == ["[attend sensor=items priority=medium] new item 2"]
    assert second.stop() == 0


def test_a_test_fire_from_another_process_shows_on_the_daemon_stdout(items_sensor, daemon, quiet_home) -> None:
    items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", input='{"items": [{"id": 42}]}')
    assert out.returncode == 0, out.stderr
    line = "[attend sensor=items priority=medium] [test] new item 42"
    assert out.stdout.splitlines() == [line]
    d.wait_for(_has(line), timeout=10)
    [row] = journal_rows(quiet_home, test=1)
    assert row["printed"] == 1


def test_hot_reload_adds_changes_and_removes_sensors(items_sensor, daemon, quiet_home) -> None:
    fast = {"interval": "0.3s", "min_interval": "0.1s"}  # both sensors: each step waits for a poll
    items = items_sensor(**fast)
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    # Added: a second sensor starts within about a second.
    other = items_sensor("other", **fast)
    wait_until(lambda: sensors_json(quiet_home)["other"]["last_poll"] is not None, what="the added sensor")
    other.set([{"id": "x"}])
    d.wait_for(_has("[attend sensor=other priority=medium] new item x"))
    # Changed: an edited trigger re-baselines (new definition hash) and then uses the new text.
    changed = dict(NEW_ITEM, description="item {id} arrived", where={"id": {"above": 5}})
    path = quiet_home.user_sensors / "items.yaml"
    doc = json.loads(path.read_text())
    doc["triggers"]["new"] = changed
    before = _trigger_hashes(quiet_home)
    path.write_text(json.dumps(doc))
    wait_until(lambda: _trigger_hashes(quiet_home) - before, what="the edited trigger's new baseline")
    items.set([{"id": 7}])
    d.wait_for(_has("[attend sensor=items priority=medium] item 7 arrived"))
    assert not any("new item 7" in line for line in d.stdout)
    # Broken: the last good version keeps running and the error is visible.
    path.write_text(path.read_text().replace('"on": "added"', '"on": "sideways"'))
    wait_until(lambda: sensors_json(quiet_home)["items"]["running_last_good"], what="the file error to show")
    row = sensors_json(quiet_home)["items"]
    assert row["state"] == "invalid" and "sideways" in row["message"]
    items.set([{"id": 7}, {"id": 8}])
    d.wait_for(_has("[attend sensor=items priority=medium] item 8 arrived"))
    # Removed: the sensor stops polling.
    (quiet_home.user_sensors / "other.yaml").unlink()
    wait_until(lambda: not status_rows(quiet_home, "other"), what="the removed sensor to stop")
    mark = last_poll(quiet_home)
    other.set([{"id": "x"}, {"id": "y"}])
    # Caught up: two more polls of items (other's interval is the same, so it would have polled between)
    # and the session printed the journal to its end.
    wait_until(lambda: len(polls_after(quiet_home, "items", mark)) >= 2, what="two more polls of items")
    caught_up(quiet_home, d.session)
    assert polls_after(quiet_home, "other", mark) == [], "the removed sensor still polls"
    assert not any("new item y" in line for line in d.stdout)
    assert "other" not in sensors_json(quiet_home)


def polls_after(home, sensor: str, mark: int) -> list:
    """The poll traces of `sensor` newer than the trace id `mark`."""
    return query(home, "SELECT id FROM poll_history WHERE sensor = ? AND id > ?", sensor, mark)


def _trigger_hashes(home) -> set[str]:
    return {row[0] for row in query(home, "SELECT hash FROM trigger_state WHERE sensor = 'items'")}


def status_rows(home, sensor: str) -> list:
    return query(home, "SELECT * FROM sensor_status WHERE sensor = ?", sensor)


def test_a_message_lane_file_without_author_runs_on_the_event_lane_and_says_why(
    items_sensor, daemon, quiet_home
) -> None:
    items_sensor(lane="message")
    d = daemon()
    wait_until(lambda: any("runs on the event lane" in line for line in d.stderr), what="the lane note")
    row = sensors_json(quiet_home)["items"]
    assert row["lane"] == "event" and "author" in row["lane_note"]
    assert sum("runs on the event lane" in line for line in d.stderr) == 1


def test_the_shipped_message_lane_exception_keeps_its_lane_without_a_line_at_every_start(
    daemon, quiet_home
) -> None:
    (quiet_home.user_sensors / "keepwarm.yaml").unlink()  # the shipped keepwarm runs
    d = daemon()
    wait_until(lambda: any("sensor(s) running" in line for line in d.stderr), what="the start line")
    row = sensors_json(quiet_home)["keepwarm"]
    assert row["lane"] == "message" and "ADR-182" in row["lane_note"]
    assert not any("sensor keepwarm:" in line for line in d.stderr)


def _line(sensor: str, text: str):
    return lambda lines: any(f"sensor={sensor} " in line and line.endswith("] " + text) for line in lines)


def test_a_lone_surrogate_in_one_output_never_stops_the_daemon_and_both_items_are_notified(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor()
    other = items_sensor("other")
    d = daemon()
    wait_until(lambda: all(sensors_json(quiet_home)[n]["last_poll"] is not None for n in ("items", "other")),
               what="the first polls")
    items.set([{"id": "\ud800x"}])  # written as the JSON escape "\ud800x": valid JSON text, a lone surrogate
    d.wait_for(_line("items", "new item \ufffdx"))
    items.set([{"id": "\ud800x"}, {"id": 2}])
    other.set([{"id": "b"}])
    d.wait_for(_line("items", "new item 2"))
    d.wait_for(_line("other", "new item b"))
    assert d.proc.poll() is None
    rows = sensors_json(quiet_home)
    assert rows["items"]["state"] == "ok" and rows["other"]["state"] == "ok"
    assert "new item \ufffdx" in [r["description"] for r in journal_rows(quiet_home)]


def _daemon_with_an_invalid_file(daemon, home):
    """A daemon started on the user sensor `flip` whose `interval: bogus` it has recorded `invalid`."""
    path = home.write_user_sensor("flip", sensor_yaml("flip", [sys.executable, "-c", "print('[]')"], interval="bogus"))
    d = daemon()
    wait_until(lambda: recorded_state(home, "flip") == ("invalid", "load"), what="the daemon to record the invalid file")
    return d, path


def test_a_file_fixed_after_the_daemon_stopped_shows_its_current_state_not_the_recorded_error(
    daemon, quiet_home
) -> None:
    home = quiet_home
    d, path = _daemon_with_an_invalid_file(daemon, home)
    assert d.stop() == 0

    path.write_text(path.read_text().replace('"bogus"', '"1m"'))
    row = sensors_json(home)["flip"]
    assert (row["state"], row["message"], row["next_poll"]) == ("ok", "", None)
    table = home.attend("sensors")
    assert "bogus" not in table.stdout and "invalid" not in table.stdout

    # The reverse: broken since the daemon stopped, it shows `invalid` with the file's current first error.
    path.write_text(path.read_text().replace('"1m"', '"soon"'))
    row = sensors_json(home)["flip"]
    assert row["state"] == "invalid" and "'soon' is not a duration" in row["message"]
    assert "bogus" not in row["message"]


def test_a_file_fixed_while_the_daemon_runs_starts_polling_and_no_longer_shows_the_recorded_error(
    daemon, quiet_home
) -> None:
    home = quiet_home
    d, path = _daemon_with_an_invalid_file(daemon, home)
    assert sensors_json(home)["flip"]["state"] == "invalid"
    path.write_text(path.read_text().replace('"bogus"', '"1m"'))
    wait_until(lambda: sensors_json(home)["flip"]["last_poll"] is not None, what="the fixed sensor's first poll")
    row = sensors_json(home)["flip"]
    assert (row["state"], row["daemon_running"]) == ("ok", True) and "bogus" not in row["message"]
    assert recorded_state(home, "flip") == ("ok", "poll")
    # the log said when it broke, and says when it is fixed (once)
    assert sum(line.endswith("sensor flip is valid again") for line in d.stderr) == 1, d.stderr
    assert d.stop() == 0
