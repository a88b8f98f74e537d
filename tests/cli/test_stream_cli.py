"""A streaming command sensor (`output: stream`) through the one-shot commands: `attend sensors poll` collects
its records for `--for` (default 5 s), and `attend test` feeds it records."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil
import pytest

CHILD = str(Path(__file__).parents[1] / "runtime" / "streams" / "stream_child.py")

STREAM = """\
spec: 1
name: feed
kind: command
threshold: 0
command:
  argv: {argv}
  output: stream
  stream_format: {stream_format}
triggers:
  rec:
    path: $.items[*]
    key: seq
    on: added
    initial: fire
    magnitude: 3
    description: "record {{seq}}: {{msg}}"
"""


def _stream_sensor(home, argv: list[str], stream_format: str = "json") -> Path:
    return home.write_user_sensor("feed", STREAM.format(argv=json.dumps(argv), stream_format=stream_format))


def _followers(feed: Path) -> list[psutil.Process]:
    """The `stream_child.py follow FEED` processes still running."""
    out = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if cmdline[1:4] == [CHILD, "follow", str(feed)] and proc.info["status"] != psutil.STATUS_ZOMBIE:
            out.append(proc)
    return out


def _feed(home) -> Path:
    feed = home.root / "feed.jsonl"
    feed.write_text(json.dumps({"seq": 1, "msg": "a"}) + "\n" + json.dumps({"seq": 2, "msg": "b"}) + "\n")
    return feed


def test_sensors_poll_on_a_stream_sensor_collects_its_records_for_the_given_time_then_ends_its_process(home) -> None:
    feed = _feed(home)
    _stream_sensor(home, [sys.executable, CHILD, "follow", str(feed)])
    run = home.attend("sensors", "poll", "feed", "--for", "1s", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["result"] == {"items": [{"seq": 1, "msg": "a"}, {"seq": 2, "msg": "b"}]}
    assert report["collected_for"] == 1.0 and report["seconds"] >= 1.0
    assert [line.split("] ")[1] for line in report["lines"]] == ["record 1: a", "record 2: b"]
    assert _followers(feed) == []  # `follow` never ends by itself: the poll ended it


@pytest.mark.slow
def test_sensors_poll_on_a_stream_sensor_collects_for_5_s_by_default(home) -> None:
    feed = _feed(home)
    _stream_sensor(home, [sys.executable, CHILD, "follow", str(feed)])
    run = home.attend("sensors", "poll", "feed")
    assert run.returncode == 0, run.stdout + run.stderr
    header = run.stdout.splitlines()[0]
    assert header.startswith("sensor feed: ok (") and header.endswith("; a stream, collected for 5 s)"), header
    assert float(header.split("(")[1].split()[0]) >= 5.0
    assert "[attend sensor=feed priority=medium] record 2: b" in run.stdout
    assert _followers(feed) == []


def test_sensors_poll_says_a_stream_that_printed_records_then_exited_ended_early_and_how(home) -> None:
    # it read "ok (0.03 s; a stream, collected for 30 s)" with no word of the exit or its code
    script = "import json, sys; print(json.dumps({'seq': 1, 'msg': 'a'})); print('gone', file=sys.stderr); sys.exit(3)"
    _stream_sensor(home, [sys.executable, "-c", script])
    run = home.attend("sensors", "poll", "feed", "--for", "30s", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["state"] == "ok" and report["result"] == {"items": [{"seq": 1, "msg": "a"}]}
    assert report["message"] == "the process ended before 30 s: exit code 3: gone", report["message"]


def test_a_stream_that_exits_before_printing_a_record_is_a_failed_poll(home) -> None:
    _stream_sensor(home, [sys.executable, "-c", "import sys; print('no journal here', file=sys.stderr); sys.exit(1)"])
    run = home.attend("sensors", "poll", "feed", "--for", "30s")
    assert run.returncode == 1
    assert "sensor feed: exit" in run.stdout and "exit code 1: no journal here" in run.stdout


def _test_file(home, sensor: Path, text: str) -> Path:
    path = sensor.with_name("feed.test.yaml")
    path.write_text(text)
    return path


def test_attend_test_feeds_a_stream_sensor_records_as_a_list_or_as_its_raw_lines(home) -> None:
    sensor = _stream_sensor(home, ["journalctl", "-f"])
    path = _test_file(home, sensor, """\
polls:
  - records:
      - {seq: 1, msg: a}
      - {seq: 2, msg: b}
    expect:
      - {description: "record 1: a"}
      - {description: "record 2: b"}
  - records: |
      {"seq": 2, "msg": "b again"}
      not json
      {"seq": 3, "msg": "c"}
    expect:
      - {trigger: rec, description: "record 3: c", magnitude: 3.0}
""")
    run = home.attend("test", str(path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"PASS  {path} (feed, 2 polls)" in run.stdout


def test_attend_test_on_a_stream_sensor_fails_a_wrong_expectation(home) -> None:
    sensor = _stream_sensor(home, ["journalctl", "-f"])
    path = _test_file(home, sensor, """\
polls:
  - records: [{seq: 1, msg: a}]
    expect:
      - {description: "record 1: z"}
""")
    run = home.attend("test", str(path))
    assert run.returncode == 1
    assert "FAIL" in run.stdout and '- {description: "record 1: z"}' in run.stdout
    assert 'description: "record 1: a"' in run.stdout


def test_attend_test_refuses_records_for_a_polled_command_at_their_position(home) -> None:
    sensor = home.write_user_sensor("feed", STREAM.format(argv='["true"]', stream_format="json")
                                    .replace("  output: stream\n  stream_format: json\n", ""))
    path = _test_file(home, sensor, "polls:\n  - records: [{seq: 1, msg: a}]\n")
    run = home.attend("test", str(path))
    assert run.returncode != 0
    assert f"{path}:2:" in run.stdout + run.stderr
    assert "`records` is for a streaming command (output: stream); use `result` here" in run.stdout + run.stderr


def test_attend_test_refuses_lines_for_a_stream_or_json_sensor_at_their_position(home) -> None:
    # `lines:` was read as `magnitude|description` lines for any sensor: a stream's JSON line became a
    # warning and the expected fire never came, with nothing saying `records` was meant
    sensor = _stream_sensor(home, ["journalctl", "-f"])
    path = _test_file(home, sensor, 'polls:\n  - lines: "{\\"seq\\": 1, \\"msg\\": \\"a\\"}"\n')
    run = home.attend("test", str(path))
    assert run.returncode == 1
    assert (f"{path}:2:12: error: [test-file] `lines` is for an `output: lines` command; use `records` (a list, "
            "or the stream's lines as one string) here") in run.stdout
    polled = home.write_user_sensor("feed", STREAM.format(argv='["true"]', stream_format="json")
                                    .replace("  output: stream\n  stream_format: json\n", ""))
    path = _test_file(home, polled, 'polls:\n  - lines: "1|a"\n')
    run = home.attend("test", str(path))
    assert run.returncode == 1
    assert f"{path}:2:12: error: [test-file] `lines` is for an `output: lines` command; use `result` here" in run.stdout


def test_attend_test_frames_a_records_string_as_the_daemon_does_cutting_a_line_past_max_line(home) -> None:
    # a long line reached the triggers whole in `attend test` while the daemon cuts it to max_line bytes
    sensor = home.write_user_sensor("feed", STREAM.format(argv='["tail", "-F", "x"]', stream_format="lines")
                                    .replace("  output: stream\n", "  output: stream\n  max_line: 10\n")
                                    .replace("key: seq", "key: line").replace("record {seq}: {msg}", "{line}"))
    path = _test_file(home, sensor, """\
polls:
  - records: |
      short

      a very long line indeed
    expect:
      - {description: "short"}
      - {description: "a very lon"}
""")
    run = home.attend("test", str(path))
    assert run.returncode == 0, run.stdout + run.stderr


def test_sensors_fire_on_a_stream_sensor_takes_a_list_of_records_as_its_items(home, tmp_path: Path) -> None:
    # a list of records (a test file's `records:`) produced nothing: the triggers see {items: [...]}
    _stream_sensor(home, ["journalctl", "-f"])
    records = tmp_path / "records.json"
    records.write_text('[{"seq": 7, "msg": "x"}]')
    run = home.attend("sensors", "fire", "feed", "--input", str(records))
    assert run.returncode == 0, run.stderr
    assert "[attend sensor=feed priority=medium] [test] record 7: x" in run.stdout
    records.write_text('{"items": [{"seq": 8, "msg": "y"}]}')  # the triggers' own shape still works
    assert "[test] record 8: y" in home.attend("sensors", "fire", "feed", "--input", str(records)).stdout
