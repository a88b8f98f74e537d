"""What a user sees from `attend sensors` and `sensors poll|fire` when something is off (review findings).

Each test runs the real CLI in a temporary home (the `quiet_home` fixture) and checks one message or
state a user acts on: a failure message without noise, a disabled or refused sensor shown as what it is,
and a `--input` that is not a poll result refused instead of read as one.
"""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest

SCRIPT = "import pathlib, sys; print(pathlib.Path(sys.argv[1]).read_text())"

#: The `items` sensor: an `added` and a `removed` trigger on `$.items[*]` keyed by `id`.
ITEMS_TRIGGERS = {
    "new": {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3, "description": "new item {id}"},
    "gone": {"path": "$.items[*]", "key": "id", "on": "removed", "magnitude": 1, "description": "gone {key}"},
}


@pytest.fixture
def items(quiet_home):
    """A command sensor `items` reporting the text of items.json; returns a writer for that text."""
    data = quiet_home.root / "items.json"
    sensor = {"spec": 1, "name": "items", "kind": "command", "threshold": 0,
              "command": {"argv": [sys.executable, "-c", SCRIPT, str(data)]}, "triggers": ITEMS_TRIGGERS}
    quiet_home.write_user_sensor("items", json.dumps(sensor))  # JSON is YAML
    data.write_text(json.dumps({"items": [{"id": 1}, {"id": 2}]}))
    return data.write_text


def _rows(home) -> dict[str, dict]:
    out = home.attend("sensors", "--json")
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout)}


def _journal_count(home) -> int:
    conn = sqlite3.connect(home.state / "attend" / "attend.db")
    try:
        return conn.execute("SELECT count(*) FROM journal").fetchone()[0]
    finally:
        conn.close()


def test_a_malformed_json_output_states_the_reason_without_a_pseudo_source_position(items, quiet_home) -> None:
    items("this is not json\n")
    out = quiet_home.attend("sensors", "poll", "items", "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["state"] == "malformed"
    assert report["message"].startswith("the output is not valid JSON at line 1 column 1"), report["message"]
    assert "<expr>" not in report["message"]
    listed = _rows(quiet_home)["items"]
    assert listed["state"] == "malformed"
    assert "<expr>" not in listed["message"]


def test_fire_refuses_a_plain_text_input_instead_of_reading_it_as_an_empty_poll(items, quiet_home) -> None:
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # baseline: items 1 and 2
    text_file = quiet_home.root / "notes.txt"
    text_file.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n")
    before = _journal_count(quiet_home)
    out = quiet_home.attend("sensors", "fire", "items", "--input", str(text_file))
    assert out.returncode == 2
    assert "gone" not in out.stdout + out.stderr
    assert "not a poll result" in out.stderr
    assert "Traceback" not in out.stderr
    assert _journal_count(quiet_home) == before


def test_fire_still_takes_a_yaml_mapping_and_a_json_scalar(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items/new", "--input", "-", input="items:\n  - {id: 7}\n")
    assert out.returncode == 0, out.stderr
    assert "[attend sensor=items priority=medium] [test] new item 7" in out.stdout
    out = quiet_home.attend("sensors", "fire", "items/new", "--input", "-", input='"just a string"\n')
    assert out.returncode == 0, out.stderr


def test_a_disabled_sensor_shows_the_state_disabled_not_ok(items, quiet_home) -> None:
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # a stored `ok` status
    assert quiet_home.attend("settings", "set", "attend.sensors.items.enabled", "false").returncode == 0
    rows = _rows(quiet_home)
    assert (rows["items"]["enabled"], rows["items"]["state"]) == (False, "disabled")
    assert rows["items"]["next_poll"] is None
    assert rows["systemd"]["enabled"] is False and rows["systemd"]["state"] == "disabled"
    table = quiet_home.attend("sensors").stdout
    items_line = next(line for line in table.splitlines() if line.startswith("items "))
    assert items_line.split()[3:5] == ["no", "disabled"]
    assert "enabled: false" not in table  # the table's STATE column says it; the message is for --json


def test_a_refused_project_sensor_shows_the_refusal_even_when_it_has_another_error(quiet_home) -> None:
    quiet_home.write_project_sensor(
        "msg",
        "spec: 1\nname: msg\nkind: command\nlane: message\ncommand: {argv: [cat, x.json]}\n"
        "triggers:\n  t: {path: '$[*]', key: id, on: added, magnitude: 1, description: 'msg {id}'}\n",
    )
    row = _rows(quiet_home)["msg"]
    assert row["state"] == "refused"
    assert "project_sensors" in row["message"], row["message"]
    out = quiet_home.attend("sensors", "poll", "msg")
    assert out.returncode == 1
    assert "project_sensors" in out.stderr


@pytest.mark.parametrize("breakage", ["state folder is a file", "database is not sqlite"])
@pytest.mark.parametrize(
    "command",
    [("sensors",), ("sensors", "poll", "items"), ("sensors", "fire", "items", "--input", "-"), ("drain",), ("run",)],
)
def test_an_unusable_state_store_is_a_clear_error_not_an_internal_one(items, quiet_home, breakage, command) -> None:
    state = quiet_home.state / "attend"
    if breakage == "state folder is a file":
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text("not a folder\n")
    else:
        state.mkdir(parents=True, exist_ok=True)
        (state / "attend.db").write_bytes(b"this is not an SQLite database, just some bytes\n" * 100)
    out = quiet_home.attend(*command, input='{"items": []}\n', timeout=30)
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"attend: cannot use the state store {state}"), out.stderr


def test_fire_on_a_lines_sensor_reports_the_lines_that_do_not_parse(quiet_home) -> None:
    quiet_home.write_user_sensor(
        "legacy", "spec: 1\nname: legacy\nkind: command\nthreshold: 0\ncommand: {argv: ['true'], output: lines}\n"
    )
    out = quiet_home.attend("sensors", "fire", "legacy", "--input", "-", input="4|disk full\nnot a line\n")
    assert out.returncode == 0, out.stderr
    assert "[attend sensor=legacy priority=medium] [test] disk full" in out.stdout
    assert "line 2: expected `magnitude|description`, got 'not a line'" in out.stderr
    report = json.loads(
        quiet_home.attend("sensors", "fire", "legacy", "--json", "--dry-run", "--input", "-", input="zzz\n").stdout
    )
    assert report["fires"] == []
    assert report["line_errors"] == ["line 1: expected `magnitude|description`, got 'zzz'"]


def test_a_lines_output_where_no_line_parses_is_a_failed_poll_not_every_item_removed(quiet_home) -> None:
    out_file = quiet_home.root / "lines.txt"
    quiet_home.write_user_sensor(
        "lined",
        "spec: 1\nname: lined\nkind: command\nthreshold: 0\n"
        f"command: {{argv: [cat, {str(out_file)!r}], output: lines}}\n"
        "triggers:\n  gone: {path: '$[*]', key: description, on: removed, magnitude: 3, description: 'gone {key}'}\n",
    )
    out_file.write_text("4|disk full\n")
    assert quiet_home.attend("sensors", "poll", "lined").returncode == 0  # baseline
    out_file.write_text("error: connection refused\n")
    failed = json.loads(quiet_home.attend("sensors", "poll", "lined", "--json").stdout)
    assert failed["state"] == "malformed"
    assert failed["fires"] == [] and failed["stored"] is False
    assert "no output line parsed" in failed["message"]
    assert failed["line_errors"] == ["line 1: expected `magnitude|description`, got 'error: connection refused'"]
    out_file.write_text("")  # an empty output is a valid "nothing now"
    emptied = json.loads(quiet_home.attend("sensors", "poll", "lined", "--json").stdout)
    assert emptied["state"] == "ok"
    assert [f["description"] for f in emptied["fires"]] == ["gone disk full"]


def test_the_table_shows_a_lane_note_without_repeating_lane(quiet_home) -> None:
    quiet_home.write_user_sensor(
        "mail", "spec: 1\nname: mail\nkind: command\nlane: message\ncommand: {argv: [cat, x.json]}\n"
        "triggers:\n  t: {path: '$[*]', key: id, on: added, magnitude: 1, description: 'mail {id}'}\n",
    )
    table = quiet_home.attend("sensors").stdout
    assert "    lane: message needs `author` in every trigger; t has none, so it runs on the event lane" in table
    assert "lane: lane:" not in table


#: What a terminal acts on: C0 but tab and newline, DEL, C1, the bidirectional controls (text.printable's set).
DRIVES_A_TERMINAL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"


def test_the_history_shows_a_commands_stderr_escaped_in_text_and_json(quiet_home) -> None:
    # issue 35, item 3: a poll's message quotes the command's stderr (an OSC title, ESC and an 8-bit CSI)
    import re

    said = "\x1b]0;owned\x07\x1b[2J \u009b31m red \u202e"
    sensor = {"spec": 1, "name": "loud", "kind": "command", "triggers": ITEMS_TRIGGERS,
              "command": {"argv": [sys.executable, "-c", f"import sys; sys.stderr.write({said!r}); sys.exit(3)"]}}
    quiet_home.write_user_sensor("loud", json.dumps(sensor))
    assert quiet_home.attend("sensors", "poll", "loud").returncode == 1
    text = quiet_home.attend("sensors", "history", "loud")
    assert text.returncode == 0, text.stderr
    assert not re.search(DRIVES_A_TERMINAL, text.stdout), text.stdout
    assert "\\x1b]0;owned\\x07\\x1b[2J \\x9b31m red \\u202e" in text.stdout
    as_json = quiet_home.attend("sensors", "history", "loud", "--json")
    assert not re.search(DRIVES_A_TERMINAL, as_json.stdout), as_json.stdout
    (trace,) = json.loads(as_json.stdout)["history"]
    assert said.strip() in trace["message"]  # the data itself, unchanged: JSON escapes it


def test_doctor_prints_a_project_folder_named_with_terminal_controls_escaped(quiet_home, tmp_path) -> None:
    import re

    project = tmp_path / "proj\x1b]0;owned\x07\u009b2J"
    project.mkdir()
    done = quiet_home.attend("doctor", "--project", str(project))
    assert not re.search(DRIVES_A_TERMINAL, done.stdout), done.stdout
    assert "proj\\x1b]0;owned\\x07\\x9b2J" in done.stdout


def test_the_command_the_away_line_names_runs_and_lists_each_sensors_fires(items, quiet_home) -> None:
    # A session back from away reads `N notifications while this session was away; attend sensors history`:
    # that command, as written (no NAME), lists every sensor's polls that fired or held something.
    import shlex

    from attend.runtime.sessions.news import away_text

    command = shlex.split(away_text(3).rsplit("; ", 1)[1])
    assert command == ["attend", "sensors", "history"]
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items(json.dumps({"items": [{"id": 1}, {"id": 2}, {"id": 3}]}))
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0
    text = quiet_home.attend(*command[1:])
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("items:\n"), text.stdout
    assert '      key 3: fired  "new item 3"' in text.stdout  # one sensor's text, indented
    as_json = quiet_home.attend(*command[1:], "--json")
    assert [d["sensor"] for d in json.loads(as_json.stdout)] == ["items"]  # the quiet shipped sensors are left out
    refused = quiet_home.attend(*command[1:], "--trigger", "new")
    assert refused.returncode == 2
    assert "--trigger needs a sensor" in refused.stderr


def test_a_one_shot_polls_printed_lines_read_as_fired_in_its_history(items, quiet_home) -> None:
    # `sensors poll` prints its lines and journals them as delivered: its trace says `fired`, never
    # `queued: waiting for the discloser` (no discloser ever sees those lines).
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items(json.dumps({"items": [{"id": 1}, {"id": 2}, {"id": 3}]}))
    polled = quiet_home.attend("sensors", "poll", "items")
    assert "[attend sensor=items priority=medium] new item 3" in polled.stdout
    history = quiet_home.attend("sensors", "history", "items", "--json")
    (trace,) = json.loads(history.stdout)["history"]
    (part,) = trace["triggers"]
    assert [(o["key"], o["outcome"]) for o in part["outcomes"]] == [(3, "fired")]
    assert 'key 3: fired  "new item 3"' in quiet_home.attend("sensors", "history", "items").stdout
