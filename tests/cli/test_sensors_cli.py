"""`attend sensors [list]`, `sensors poll` and `sensors fire`, run as the real CLI in a temporary home."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import sys

import pytest

SCRIPT = "import json, pathlib, sys; print(pathlib.Path(sys.argv[1]).read_text())"


@pytest.fixture
def items(quiet_home):
    """A command sensor `items` reporting the JSON in items.json; returns a setter for that JSON."""
    data = quiet_home.root / "items.json"
    quiet_home.write_user_sensor(
        "items",
        "spec: 1\nname: items\nkind: command\nthreshold: 0\n"
        f"command:\n  argv: [{sys.executable!r}, -c, {SCRIPT!r}, {str(data)!r}]\n"
        "triggers:\n  new:\n    path: $.items[*]\n    key: id\n    on: added\n    magnitude: 3\n"
        "    description: 'new item {id}'\n",
    )

    def set_items(*ids: object) -> None:
        data.write_text(json.dumps({"items": [{"id": i} for i in ids]}))

    set_items()
    return set_items


def _db(home) -> sqlite3.Connection:
    return sqlite3.connect(home.state / "attend" / "attend.db")


def _rows(home, sql: str) -> list[tuple]:
    conn = _db(home)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_sensors_list_json_has_the_documented_fields(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "list", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    row = rows["items"]
    for field in ("name", "kind", "layer", "file", "enabled", "state", "message", "last_poll", "next_poll"):
        assert field in row
    assert (row["kind"], row["layer"], row["enabled"], row["state"]) == ("command", "user", True, "ok")
    assert row["file"].endswith("items.yaml")
    assert row["last_poll"] is None and row["next_poll"] is None
    assert row["daemon_running"] is False
    assert rows["git"]["enabled"] is False


def test_sensors_without_an_action_lists_them_as_a_table(items, quiet_home) -> None:
    out = quiet_home.attend("sensors")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == ["NAME", "KIND", "LAYER", "ENABLED", "STATE", "LANE", "LAST", "POLL", "NEXT", "POLL"]
    assert any(line.startswith("items ") for line in out.stdout.splitlines())


def test_sensors_list_shows_an_invalid_file_with_its_error(quiet_home) -> None:
    quiet_home.write_user_sensor("broken", "spec: 1\nname: broken\nkind: command\ninterval: soon\ncommand: {argv: [true]}\n")
    rows = {r["name"]: r for r in json.loads(quiet_home.attend("sensors", "--json").stdout)}
    assert rows["broken"]["state"] == "invalid"
    assert "broken.yaml" in rows["broken"]["message"]
    assert rows["broken"]["next_poll"] is None


def test_sensors_list_shows_an_untrusted_project_command_as_refused(quiet_home) -> None:
    quiet_home.write_project_sensor("proj", "spec: 1\nname: proj\nkind: command\ncommand: {argv: [true]}\n")
    rows = {r["name"]: r for r in json.loads(quiet_home.attend("sensors", "--json").stdout)}
    assert rows["proj"]["state"] == "refused"


def test_sensors_poll_shows_the_result_and_each_trigger_verdict_and_stores_it(items, quiet_home) -> None:
    items(1, 2)
    out = quiet_home.attend("sensors", "poll", "items", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["state"] == "ok"
    assert report["result"] == {"items": [{"id": 1}, {"id": 2}]}
    [verdict] = report["triggers"]
    assert verdict["trigger"] == "new" and verdict["baseline"] is True
    assert report["stored"] is True
    items(1, 2, 3)
    report = json.loads(quiet_home.attend("sensors", "poll", "items", "--json").stdout)
    assert [f["description"] for f in report["fires"]] == ["new item 3"]
    assert report["lines"] == ["[attend sensor=items priority=medium] new item 3"] and report["delivered"] is True
    # Shown to the person who ran it, so journaled as delivered: nothing waits for a daemon to replay it.
    assert _rows(quiet_home, "SELECT * FROM pending") == []
    assert _rows(quiet_home, "SELECT description, printed, drained, test FROM journal") == [("new item 3", 1, 1, 0)]
    listed = {r["name"]: r for r in json.loads(quiet_home.attend("sensors", "--json").stdout)}
    assert listed["items"]["last_poll"] is not None


def test_sensors_poll_dry_run_stores_nothing(items, quiet_home) -> None:
    items(1)
    out = quiet_home.attend("sensors", "poll", "items", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "trigger new: baseline" in out.stdout
    assert "dry run: nothing stored" in out.stdout
    assert _rows(quiet_home, "SELECT * FROM trigger_state") == []


def test_sensors_poll_of_a_failing_command_exits_1_with_its_state(quiet_home) -> None:
    quiet_home.write_user_sensor(
        "bad", f"spec: 1\nname: bad\nkind: command\ncommand:\n  argv: [{sys.executable!r}, -c, 'print(1/0)']\n"
    )
    out = quiet_home.attend("sensors", "poll", "bad")
    assert out.returncode == 1
    assert "bad: exit" in out.stdout and "ZeroDivisionError" in out.stdout
    assert "trigger state untouched" in out.stdout


def test_sensors_poll_of_an_unknown_sensor_is_a_usage_error(quiet_home) -> None:
    out = quiet_home.attend("sensors", "poll", "nope")
    assert out.returncode == 2
    assert "no sensor named 'nope'" in out.stderr
    assert "Traceback" not in out.stderr


def test_sensors_fire_with_no_stored_state_compares_with_an_empty_poll(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", input="items: [{id: 7}]\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[attend sensor=items priority=medium] [test] new item 7\n"
    rows = _rows(quiet_home, "SELECT description, test, printed, lane FROM journal")
    assert rows == [("new item 7", 1, 0, "event")]
    assert _rows(quiet_home, "SELECT * FROM trigger_state") == []


def test_sensors_fire_reads_a_file_and_commit_stores_the_trigger_state(items, quiet_home) -> None:
    result = quiet_home.root / "result.json"
    result.write_text('{"items": [{"id": 1}]}')
    out = quiet_home.attend("sensors", "fire", "items/new", "--input", str(result), "--commit")
    assert out.returncode == 0, out.stderr
    assert "new item 1" in out.stdout
    assert len(_rows(quiet_home, "SELECT * FROM trigger_state")) == 1
    # The stored state now holds item 1: the same input fires nothing.
    again = quiet_home.attend("sensors", "fire", "items", "--input", str(result))
    assert again.stdout.startswith("no fire")


def test_sensors_fire_dry_run_stops_before_delivery(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", "--dry-run", input='{"items": [{"id": 2}]}')
    assert out.returncode == 0, out.stderr
    assert out.stdout == "would deliver (event lane): [attend sensor=items priority=medium] [test] new item 2\n"
    assert _rows(quiet_home, "SELECT * FROM journal") == []


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["items/nope", "--input", "-"], "{}", "no trigger 'nope'"),
        (["items", "--input", "-"], "", "the input is empty"),
        (["items", "--input", "-"], "items: [unclosed", "neither JSON nor YAML"),
        (["items", "--input", "/nonexistent/result.json"], None, "cannot read"),
    ],
)
def test_sensors_fire_rejects_bad_usage_with_exit_2(items, quiet_home, args, stdin, message) -> None:
    out = quiet_home.attend("sensors", "fire", *args, input=stdin)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_sensors_fire_json_reports_the_fires_and_the_lines(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--json", "--input", "-", input='{"items": [{"id": 4}, {"id": 5}]}')
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["priority"] == "medium" and report["lane"] == "event"
    assert [f["key"] for f in report["fires"]] == [4, 5]
    assert report["lines"] == [
        "[attend sensor=items priority=medium] [test] new item 4",
        "[attend sensor=items priority=medium] [test] new item 5",
    ]
    assert report["delivered"] is True and report["committed"] is False


def test_a_test_fire_of_an_mcp_sensor_names_its_server(quiet_home) -> None:
    quiet_home.write_user_sensor(
        "board",
        "spec: 1\nname: board\nkind: mcp\nthreshold: 0\nmcp:\n  server: {command: board-server}\n  tool: list\n"
        "triggers:\n  new: {path: '$.items[*]', key: id, on: added, magnitude: 3, description: 'card {id}'}\n",
    )
    out = quiet_home.attend("sensors", "fire", "board", "--input", "-", input='{"items": [{"id": "c-1"}]}')
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("[attend sensor=board priority=medium] [test] card c-1 (server=")
    assert out.stdout.rstrip().endswith(", key=c-1)")


def test_sensors_poll_dry_run_evaluates_against_the_stored_state_and_shows_what_would_fire(items, quiet_home) -> None:
    items(1)
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    states = _rows(quiet_home, "SELECT * FROM trigger_state")
    items(1, 2)
    for _ in range(2):  # a dry run changes nothing, so a second one previews the same
        out = quiet_home.attend("sensors", "poll", "items", "--dry-run")
        assert out.returncode == 0, out.stderr
        assert "would fire: new item 2 (trigger new, magnitude 3)" in out.stdout
        assert "dry run: nothing stored" in out.stdout
    report = json.loads(quiet_home.attend("sensors", "poll", "items", "--dry-run", "--json").stdout)
    assert [f["description"] for f in report["fires"]] == ["new item 2"]
    assert report["stored"] is False and report["delivered"] is False and report["dry_run"] is True
    assert _rows(quiet_home, "SELECT * FROM trigger_state") == states
    assert _rows(quiet_home, "SELECT * FROM journal") == [] and _rows(quiet_home, "SELECT * FROM pending") == []
    real = json.loads(quiet_home.attend("sensors", "poll", "items", "--json").stdout)
    assert [f["description"] for f in real["fires"]] == ["new item 2"]


def test_a_manual_poll_prints_its_fires_to_the_person_who_ran_it(items, quiet_home) -> None:
    items(1)
    quiet_home.attend("sensors", "poll", "items")
    items(1, 2)
    out = quiet_home.attend("sensors", "poll", "items")
    assert out.returncode == 0, out.stderr
    assert "[attend sensor=items priority=medium] new item 2" in out.stdout.splitlines()
    assert "journaled as delivered" in out.stdout
    assert quiet_home.attend("drain").stdout == ""  # delivered: the drain never hands it on


def test_sensors_fire_dry_run_with_commit_writes_nothing_and_says_so(items, quiet_home) -> None:
    items(1)
    quiet_home.attend("sensors", "poll", "items")
    before = _rows(quiet_home, "SELECT * FROM trigger_state")
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", "--dry-run", "--commit",
                            input='{"items": [{"id": 9}]}')
    assert out.returncode == 0, out.stderr
    assert "would deliver" in out.stdout
    assert "--commit ignored, nothing written" in out.stderr
    assert _rows(quiet_home, "SELECT * FROM trigger_state") == before
    assert _rows(quiet_home, "SELECT * FROM journal") == []
    report = json.loads(quiet_home.attend("sensors", "fire", "items", "--json", "--input", "-", "--dry-run", "--commit",
                                          input='{"items": [{"id": 9}]}').stdout)
    assert report["committed"] is False and report["delivered"] is False
    assert _rows(quiet_home, "SELECT * FROM trigger_state") == before


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('{"items": [{"id": 1}], "n": ' + "1" * 5000 + "}", "more than 4300 digits"),
        ('{"items": [{"id": NaN}]}', "NaN is not a JSON number"),
        ("[" * 10_000 + "]" * 10_000, "nested deeper than 256 levels"),
        ("items:\n  - id: " + "1" * 5000 + "\n", "not a usable poll result"),
        # issue 28 item 17: a YAML alias bomb of about 400 bytes (10**9 nodes expanded) is refused by the
        # strict loader's node bound, the one sensor files have, in well under a second
        ('a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
         + "".join(f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi"))
         + "items: *i\n", "more than 100,000 nodes once its aliases are expanded"),
    ],
)
def test_sensors_fire_refuses_hostile_input_with_exit_2_and_the_reason(items, quiet_home, stdin, message) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", "--dry-run", input=stdin)
    assert (out.returncode, out.stdout) == (2, "")
    assert message in out.stderr and "Traceback" not in out.stderr


def test_sensors_fire_refuses_an_input_over_the_cap_before_parsing_and_reads_only_regular_files(items, quiet_home) -> None:
    big = quiet_home.root / "big.json"
    big.write_text("[" + "0," * (1 << 20) + "0]")
    out = quiet_home.attend("sensors", "fire", "items", "--input", str(big), "--dry-run")
    assert out.returncode == 2 and "larger than 1048576 bytes" in out.stderr
    out = quiet_home.attend("sensors", "fire", "items", "--input", "/dev/zero", "--dry-run")
    assert out.returncode == 2 and "not a regular file" in out.stderr


def test_sensors_fire_with_a_lone_surrogate_notifies_the_item_with_u_fffd(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", input='{"items": [{"id": "\\ud800x"}]}')
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[attend sensor=items priority=medium] [test] new item \ufffdx\n"
    assert _rows(quiet_home, "SELECT description FROM journal") == [("new item \ufffdx",)]


def test_sensors_poll_of_a_command_printing_a_lone_surrogate_succeeds(items, quiet_home) -> None:
    (quiet_home.root / "items.json").write_text('{"items": [{"id": "\\udc00"}]}')
    out = quiet_home.attend("sensors", "poll", "items")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr


@pytest.mark.parametrize("key", ["attend.sensors.git.interval", "attend.sensors.git.description", "attend.project_sensors"])
def test_settings_set_refuses_a_5000_digit_integer_with_exit_3_and_writes_nothing(quiet_home, key) -> None:
    before = sorted(p.name for p in quiet_home.config.rglob("*"))
    # A string key takes VALUE as typed (a 5000-character string); its YAML reading is --yaml's.
    out = quiet_home.attend("settings", "set", key, "1" * 5000, *(["--yaml"] if key.endswith("description") else []))
    assert out.returncode == 3 and "digits" in out.stderr and "Traceback" not in out.stderr
    assert sorted(p.name for p in quiet_home.config.rglob("*")) == before


WRONG_TYPES = """\
spec: 1
name: wrongtype
kind: command
interval: true
threshold: "high"
enabled: "yes"
command: {argv: echo, output: json}
"""


def _first_check_error(home, name: str) -> str:
    check = home.attend("compile", "--check")
    return next(line for line in check.stdout.splitlines() if f"{name}.yaml:" in line and ": error: " in line)


def test_sensors_shows_an_invalid_sensors_first_error_in_the_order_compile_check_lists_them(quiet_home) -> None:
    quiet_home.write_user_sensor("wrongtype", WRONG_TYPES)
    first = _first_check_error(quiet_home, "wrongtype")
    assert "wrongtype.yaml:4:11: error: [bad-duration] `interval`" in first
    row = {r["name"]: r for r in json.loads(quiet_home.attend("sensors", "--json").stdout)}["wrongtype"]
    assert (row["state"], row["message"]) == ("invalid", first)
    assert f"    message: {first}" in quiet_home.attend("sensors").stdout.splitlines()


def test_sensors_counts_an_expression_error_when_it_comes_first_in_the_file(quiet_home) -> None:
    # A path error (found by the expression checks) on line 8 comes before the spec error on line 11.
    quiet_home.write_user_sensor(
        "pathfirst",
        "spec: 1\nname: pathfirst\nkind: command\ncommand: {argv: [echo, '{}']}\n"
        "triggers:\n  t:\n    on: changed\n    path: $.a]\n"
        "    description: x\n    magnitude: 1\nthreshold: high\n",
    )
    first = _first_check_error(quiet_home, "pathfirst")
    assert "pathfirst.yaml:8:" in first and "[path-syntax]" in first
    row = {r["name"]: r for r in json.loads(quiet_home.attend("sensors", "--json").stdout)}["pathfirst"]
    assert (row["state"], row["message"]) == ("invalid", first)


def test_sensors_of_another_project_suggests_a_pasteable_attend_run_for_it(quiet_home) -> None:
    project = quiet_home.root / "my proj ünï 日本"
    project.mkdir()
    out = quiet_home.attend("sensors", "--project", str(project))
    assert out.returncode == 0, out.stderr
    hint = out.stdout.splitlines()[-1]
    assert shlex.split(hint.split("`")[-2]) == ["attend", "run", "--project", str(project)]
    here = quiet_home.attend("sensors")
    assert here.stdout.splitlines()[-1].endswith("start one with `attend run`)")


def test_sensors_fire_says_why_an_input_file_cannot_be_read_in_the_os_s_words(items, quiet_home) -> None:
    out = quiet_home.attend("sensors", "fire", "items", "--input", "/nonexistent")
    assert out.returncode == 2
    assert out.stderr.strip() == "attend: cannot read /nonexistent: No such file or directory"


SWITCHES = (
    "spec: 1\nname: switches\nkind: command\nthreshold: 0\n"
    "command:\n  argv: ['true']\n"
    "triggers:\n  new:\n    path: $.items[*]\n    key: id\n    on: added\n    magnitude: 3\n"
    "    description: 'switch {id} is {on}, yes={yes}'\n"
)
#: One item whose keys `on` and `yes` are booleans in YAML 1.1 and strings in YAML 1.2.
SWITCH_ITEM = "items:\n  - id: a\n    on: off\n    yes: no\n"


def test_a_yaml_item_with_on_and_yes_keys_renders_alike_in_sensors_fire_and_attend_test(quiet_home) -> None:
    sensor = quiet_home.write_user_sensor("switches", SWITCHES)
    result = quiet_home.root / "result.yaml"
    result.write_text(SWITCH_ITEM)
    fired = quiet_home.attend("sensors", "fire", "switches", "--input", str(result), "--dry-run")
    assert fired.returncode == 0, fired.stderr
    assert fired.stdout.endswith("[test] switch a is off, yes=no\n"), fired.stdout
    indented = "".join(f"      {line}\n" for line in SWITCH_ITEM.splitlines())
    sensor.with_name("switches.test.yaml").write_text(
        f"polls:\n  - result: {{items: []}}\n  - result:\n{indented}    expect:\n      - {{description: 'switch a is off, yes=no'}}\n")
    tested = quiet_home.attend("test", str(sensor.with_name("switches.test.yaml")))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_sensors_fire_names_the_input_file_line_and_column_of_a_yaml_problem(items, quiet_home) -> None:
    result = quiet_home.root / "result.yaml"
    result.write_text("items:\n  - id: 1\n  - id: 2\n    id: 3\n")
    out = quiet_home.attend("sensors", "fire", "items", "--input", str(result), "--dry-run")
    assert (out.returncode, out.stdout) == (2, "")
    assert f"{result}:4:5:" in out.stderr and "Traceback" not in out.stderr


def test_sensors_fire_refuses_a_fifo_as_input_at_once_in_one_line(items, quiet_home) -> None:
    # Opening a FIFO for reading waits for a writer; the input is refused as no regular file instead.
    fifo = quiet_home.root / "result.fifo"
    os.mkfifo(fifo)
    out = quiet_home.attend_process("sensors", "fire", "items", "--input", str(fifo), "--dry-run", timeout=30)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"attend: cannot read {fifo}: not a regular file\n"


def test_attend_sensors_prints_a_failing_commands_stderr_escaped_in_its_table(items, quiet_home) -> None:
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    with open_project_store(layer_paths(quiet_home.project)) as store:  # what a failed poll keeps of stderr
        store.update_status("items", state="exec_failed", message="exit 1: \x1b]0;PWNED\x07\u202ex\x9b2J\nnext")
    done = quiet_home.attend_process("sensors")
    assert done.returncode == 0, done.stderr
    assert "message: exit 1: \\x1b]0;PWNED\\x07\\u202ex\\x9b2J next" in done.stdout
    assert not any(c in done.stdout for c in "\x1b\x07\u202e\x9b")


#: A test fire run in one interpreter, telling which of the heavy packages it imported.
FIRE_PROBE = """
import io, sys
sys.stdin = io.StringIO('{"items": [{"id": 7}]}')
from attend.cli import main
code = main(['sensors', 'fire', 'items', '--input', '-'])
heavy = ('trio', 'mcp', 'ruamel', 'textual', 'nats', 'attend.runtime.pipeline', 'attend.runtime.daemon',
         'attend.settings.document')
print(code, sorted({m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)}))
"""


def test_a_test_fire_imports_neither_trio_nor_the_mcp_sdk_nor_the_settings_yaml_editor(items, quiet_home) -> None:
    """A person waits for a test fire's line: its command loads what a fire needs (the sensor set, the
    evaluation, the store), not the daemon's event loop (issue 39: trio alone was half its time)."""
    import subprocess

    run = subprocess.run([sys.executable, "-c", FIRE_PROBE], capture_output=True, text=True, env=quiet_home.env(),
                         cwd=quiet_home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "0 []", run.stdout
