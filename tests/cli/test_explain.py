"""`attend explain` through the real CLI, against golden files (set ATTEND_UPDATE_GOLDEN=1 to rewrite them)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"

WEATHER = """\
spec: 1
name: weather
description: Wind at the office
kind: command
interval: 5m
command:
  argv: [curl, -sf, "https://example.invalid/wind"]
triggers:
  high-wind:
    path: $.current
    on: enters
    where:
      wind_speed_*: {above: 40}
      station: "ber-*"
    magnitude: 3.0
    description: "wind {wind_speed_10m} km/h"
  new-alert:
    path: "$.alerts[*]"
    key: id
    on: added
    where:
      title: {matches: '^(storm|gale)\\b'}
      level: [amber, red]
    match: any
    description: "{level} alert: {title} {{{id}}}"
"""

PROJECT_OVERRIDE = """\
triggers:
  high-wind:
    magnitude: 5
"""

INBOX = """\
spec: 1
name: inbox
kind: mcp
lane: message
mcp:
  server: mail
  tool: list_messages
  allow_unannotated: true
triggers:
  new-mail:
    path: $.messages[*]
    key: id
    on: added
    description: "mail from {from}: {subject}"
"""


def _normalised(text: str, home) -> str:
    return text.replace(str(home.root), "<home>").replace(str(home.project), "<project>")


def _golden(name: str, got: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ATTEND_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text()


@pytest.fixture
def weather(home):
    home.write_user_sensor("weather", WEATHER)
    home.write_project_sensor("weather", PROJECT_OVERRIDE)
    return home


def test_explain_shows_fields_with_their_layer_and_each_trigger_plan(weather) -> None:
    run = weather.attend("explain", "weather")
    assert run.returncode == 0, run.stderr
    _golden("explain_weather.txt", _normalised(run.stdout, weather))


def test_explain_json_holds_the_same_plan(weather) -> None:
    run = weather.attend("explain", "weather", "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(_normalised(run.stdout, weather))
    _golden("explain_weather.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    (high, alert) = data["triggers"]
    assert high["plan"]["magnitude"] == 5.0
    assert [f["layer"] for f in high["fields"] if f["field"] == "magnitude"] == ["project"]
    assert alert["plan"]["where"]["match"] == "any"


def test_explain_one_trigger_shows_only_that_trigger(weather) -> None:
    run = weather.attend("explain", "weather/new-alert")
    assert run.returncode == 0, run.stderr
    assert "trigger new-alert:" in run.stdout and "trigger high-wind:" not in run.stdout
    _golden("explain_weather_new_alert.txt", _normalised(run.stdout, weather))


def test_explain_of_an_invalid_sensor_shows_overrides_lane_and_problems_and_exits_one(home) -> None:
    home.write_user_sensor("inbox", INBOX)
    run = home.attend("explain", "inbox")
    assert run.returncode == 1, run.stderr
    assert "mcp.allow_unannotated: true: the MCP tool may run without declaring readOnlyHint: true" in run.stdout
    assert "lane: event  (declared message: lane: message needs `author` in every trigger; new-mail has none" in run.stdout
    assert "[lane-author]" in run.stdout.split("  problems:")[1]


def test_explain_shows_the_message_lane_when_every_trigger_has_an_author(home) -> None:
    home.write_user_sensor("inbox", INBOX.replace("    key: id\n", "    key: id\n    author: from\n"))
    run = home.attend("explain", "inbox")
    assert run.returncode == 0, run.stderr
    assert "\n  lane: message\n" in run.stdout and "author:      from" in run.stdout


def test_explain_an_unknown_sensor_or_trigger_exits_two(weather) -> None:
    run = weather.attend("explain", "nope")
    assert run.returncode == 2 and "no sensor named 'nope'" in run.stderr
    run = weather.attend("explain", "weather/nope")
    assert run.returncode == 2
    assert "sensor 'weather' has no trigger 'nope' (triggers: high-wind, new-alert)" in run.stderr


def test_explain_shows_a_trigger_that_does_not_compile_and_exits_one(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("path: $.current", "path: $.current["))
    run = home.attend("explain", "weather")
    assert run.returncode == 1
    assert "does not compile:" in run.stdout and "[path-syntax]" in run.stdout
    assert "trigger new-alert:" in run.stdout and "compiled plan:" in run.stdout


def test_explain_shows_what_wake_on_watches_for_the_file_and_for_the_git_crate(home) -> None:
    (home.project / "data").mkdir()
    home.write_user_sensor("feed", "spec: 1\nname: feed\nkind: command\ncommand: {argv: [cat, data/feed.json]}\n"
                                   "wake_on: [data/feed.json, \"inbox/**\"]\n")
    run = home.attend("explain", "feed")
    assert run.returncode == 0, run.stderr
    text = _normalised(run.stdout, home)
    assert "  wakes on (a change polls at once, no sooner than min_interval):" in text
    assert ("    data/feed.json  (file)  → watches <project>/data flat, wakes on <project>/data/feed.json"
            in text)
    assert ("    inbox/**  (file)  → watches <project>/inbox recursively, wakes on <project>/inbox/**; "
            "not there yet: its nearest existing folder is watched") in text
    git = json.loads(home.attend("explain", "git", "--json").stdout)["wake_on"]
    assert [(w["pattern"], w["declared_by"], w["recursive"]) for w in git["paths"]] == [
        (str(home.project / ".git" / "HEAD"), "crate git", False),
        (str(home.project / ".git" / "index"), "crate git", False),
        (str(home.project / ".git" / "packed-refs"), "crate git", False),
        (str(home.project / ".git" / "refs" / "**"), "crate git", True),
    ]


def test_explain_shows_a_fused_path_and_the_stages_of_one_with_a_descendant(home) -> None:
    home.write_user_sensor("deep", "spec: 1\nname: deep\nkind: command\ncommand: {argv: [echo, '{}']}\ntriggers:\n"
                                   "  owner: {path: '$.items[*].meta.owner.id', on: changed}\n"
                                   "  below: {path: '$.a..b[*].c', on: changed}\n")
    run = home.attend("explain", "deep")
    assert run.returncode == 0, run.stderr
    assert ("    path:        $.items[*].meta.owner.id  (one fused loop nest from the document down, the "
            "comprehension a person would write)") in run.stdout
    assert ("      stage fused      .items[*].meta.owner.id: one generated loop nest, no node list between its "
            "segments") in run.stdout
    below = json.loads(home.attend("explain", "deep/below", "--json").stdout)["triggers"][0]["plan"]["path"]
    assert [(s["stage"], s["segments"]) for s in below["stages"]] == [
        ("walk", ".a"), ("descendant", "..b"), ("fused", "[*].c")]


def test_explain_lists_an_invalid_sensors_problems_in_the_order_compile_check_prints_them(home) -> None:
    home.write_user_sensor("wrongtype", 'spec: 1\nname: wrongtype\nkind: command\ninterval: true\nthreshold: "high"\n'
                                        'enabled: "yes"\ncommand: {argv: echo, output: json}\n')
    check = [line for line in home.attend("compile", "--check").stdout.splitlines() if "wrongtype.yaml:" in line]
    run = home.attend("explain", "wrongtype")
    assert run.returncode == 1
    problems = [line.strip() for line in run.stdout.split("  problems:\n")[1].splitlines() if line.startswith("    /")]
    assert problems == check
    assert [(d["line"], d["col"]) for d in json.loads(home.attend("explain", "wrongtype", "--json").stdout)["diagnostics"]] == [
        (4, 11), (5, 12), (6, 10), (7, 17)]


def test_explain_of_an_invalid_sensor_shows_no_plan_built_from_a_rejected_value(home) -> None:
    home.write_user_sensor("weather", WEATHER.replace("magnitude: 3.0", "magnitude: 123456789012345678901234567890"))
    run = home.attend("explain", "weather")
    assert run.returncode == 1
    assert "`triggers.high-wind.magnitude` must be at most 1,000,000" in run.stdout
    assert "compiled plan: not shown: the sensor is invalid" in run.stdout
    assert "magnitude:   " not in run.stdout and "e+29" not in run.stdout
    data = json.loads(home.attend("explain", "weather", "--json").stdout)
    assert data["status"] == "invalid" and [d["code"] for d in data["diagnostics"]] == ["bad-value"]
    for trigger in data["triggers"]:
        assert "plan" not in trigger and "the sensor is invalid" in trigger["plan_withheld"]
        assert trigger["fields"]  # the fields and their provenance are still shown


def test_explain_of_a_refused_project_sensor_still_shows_its_plan(home) -> None:
    home.write_project_sensor("weather", WEATHER)
    data = json.loads(home.attend("explain", "weather", "--json").stdout)
    assert data["status"] == "refused"
    assert all("plan" in t and "plan_withheld" not in t for t in data["triggers"])


def test_a_flap_limit_of_one_reads_more_than_1_return(home) -> None:
    # no "1 returns" (issue 27, item 10)
    home.write_user_sensor("weather", WEATHER.replace("    magnitude: 3.0\n", "    magnitude: 3.0\n    flap: {limit: 1, window: 1m}\n", 1))
    run = home.attend("explain", "weather/high-wind")
    assert run.returncode == 0, run.stderr
    assert "more than 1 return of one key to a value it had within 60s is flapping" in run.stdout


#: A subscribed resource sensor on an inline sse server with a literal token in a header.
BOARD = (Path(__file__).parents[1] / "data" / "mcp" / "board.yaml").read_text()


def test_explain_says_how_an_mcp_sensor_polls_a_remote_server_and_never_shows_a_literal_token(home) -> None:
    home.write_user_sensor("board", BOARD)
    run = home.attend("explain", "board")
    assert run.returncode == 0, run.stderr
    assert "s3cret" not in run.stdout
    assert 'mcp.server.headers.Authorization  "Bearer <hidden: 14 characters>"' in run.stdout
    assert 'mcp.server.headers.X-Team         "${BOARD_TEAM}"' in run.stdout  # a reference is shown as written
    section = run.stdout.split("  mcp (kind: mcp):\n")[1]
    assert section.startswith("    server: mcp.example: sse at https://mcp.example/sse; headers: Authorization, X-Team")
    assert "    reads: resource board://issues (resources/read: read-only by nature" in section
    assert "    subscribe: yes: read again as soon as the server reports the resource updated" in section
    data = json.loads(home.attend("explain", "board", "--json").stdout)
    assert "s3cret" not in json.dumps(data)
    assert data["mcp"]["subscribe"].startswith("yes:") and data["mcp"]["reads"].startswith("resource board://issues")
