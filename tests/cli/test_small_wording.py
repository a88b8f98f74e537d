"""Small wording defects of issue 27, item 10: each message says what is true, in attend's own voice."""

from __future__ import annotations

import json

from attend.cli import build_parser

KEYLESS = """\
spec: 1
name: mood
kind: command
command: {argv: [cat, mood.json]}
triggers:
  moved: {path: $.mood, on: changed, magnitude: 1.0, description: "mood {value}"}
"""


def test_doctor_names_the_sensor_to_turn_off_for_a_missing_program(home):
    home.write_user_sensor("mood", KEYLESS.replace("[cat, mood.json]", "[no-such-program-xyz]"))
    out = home.attend("doctor", "--json")
    check = next(c for c in json.loads(out.stdout)["checks"] if c["check"] == "commands")
    assert "attend settings set attend.sensors.mood.enabled false" in check["fix"]
    assert "NAME" not in check["fix"]


def test_explain_describes_a_keyless_changed_without_a_key(home):
    home.write_user_sensor("mood", KEYLESS)
    data = json.loads(home.attend("explain", "mood/moved", "--json").stdout)
    rule = data["triggers"][0]["plan"]["rule"]
    assert "key" not in rule and "the watched value differs" in rule


def test_explain_errors_use_the_same_prefix_as_every_command(home):
    out = home.attend("explain", "nope")
    assert out.returncode == 2 and out.stderr.startswith("attend: no sensor named 'nope'")


def test_attend_test_of_something_that_is_not_a_regular_file_says_so(home):
    out = home.attend("test", "/dev/null")
    assert out.returncode == 1
    assert "not a regular file or a folder" in out.stdout + out.stderr
    assert "no such test file" not in out.stdout + out.stderr


def test_a_test_file_with_one_poll_says_one_poll(home):
    (home.project / "one.test.yaml").write_text("sensor: git\npolls:\n  - result: {branch: main, dirty: 0}\n")
    out = home.attend("test", "one.test.yaml")
    assert "(git, 1 poll)" in out.stdout, out.stdout + out.stderr


def test_every_json_flag_has_its_help():
    parser = build_parser(None)
    stack = [parser]
    seen = 0
    while stack:
        p = stack.pop()
        for action in p._actions:
            if "--json" in action.option_strings:
                seen += 1
                assert action.help, p.prog
            if isinstance(action.choices, dict):
                stack.extend(action.choices.values())
    assert seen > 10
