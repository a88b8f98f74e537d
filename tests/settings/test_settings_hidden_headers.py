"""`attend settings list` and `settings get` never print a literal credential in an mcp sensor's header: they
show it as explain and the TUI do (`Bearer <hidden: N characters>`, one implementation in spec/headers.py),
a `${VAR}` reference as written."""

from __future__ import annotations

import json
from pathlib import Path

from attend.spec.headers import shown_header, shown_value

#: A subscribed resource sensor on an inline sse server with a literal token in a header.
BOARD = (Path(__file__).parents[1] / "data" / "mcp" / "board.yaml").read_text()
HIDDEN = "Bearer <hidden: 14 characters>"


def test_settings_list_hides_a_literal_bearer_token_and_shows_a_var_reference(home):
    home.write_user_sensor("board", BOARD)
    run = home.attend("settings", "list", "attend.sensors.board")
    assert run.returncode == 0, run.stderr
    assert "s3cret" not in run.stdout
    assert f"attend.sensors.board.mcp.server.headers.Authorization = '{HIDDEN}'" in run.stdout
    assert "attend.sensors.board.mcp.server.headers.X-Team = ${BOARD_TEAM}" in run.stdout


def test_settings_list_json_hides_a_literal_bearer_token_in_stored_and_effective(home):
    home.write_user_sensor("board", BOARD)
    run = home.attend("settings", "list", "attend.sensors.board", "--json")
    assert run.returncode == 0, run.stderr
    assert "s3cret" not in run.stdout
    data = json.loads(run.stdout)
    key = "attend.sensors.board.mcp.server.headers.Authorization"
    assert [e["value"] for e in data["stored"] if e["key"] == key] == [HIDDEN]
    assert [e["value"] for e in data["effective"] if e["key"] == key] == [HIDDEN]


def test_settings_get_of_a_header_a_server_or_a_whole_sensor_hides_a_literal_token(home):
    home.write_user_sensor("board", BOARD)
    for key in ("attend.sensors.board.mcp.server.headers.Authorization", "attend.sensors.board.mcp.server.headers",
                "attend.sensors.board.mcp.server", "attend.sensors.board.mcp", "attend.sensors.board"):
        for extra in ((), ("--json",)):
            run = home.attend("settings", "get", key, *extra)
            assert run.returncode == 0, (key, run.stderr)
            assert "s3cret" not in run.stdout, (key, extra)
            assert "<hidden: 14 characters>" in run.stdout, (key, extra)


def test_shown_value_hides_only_header_values_and_keeps_everything_else():
    server = {"type": "sse", "url": "https://x", "headers": {"Authorization": "Bearer abc", "X": "${T}"}}
    assert shown_value(("mcp", "server"), server) == {**server, "headers": {"Authorization": "Bearer <hidden: 3 characters>", "X": "${T}"}}
    assert shown_value(("mcp", "server", "url"), "https://x") == "https://x"
    assert shown_value(("mcp", "resource"), "file:///notes.md") == "file:///notes.md"  # not a header: as it is
    # ...except for what the one redaction policy hides in any value (attend.redact)
    assert shown_value(("mcp", "resource"), "Bearer a1b2c3d4e5") == "Bearer <redacted>"
    assert shown_value(("command", "env", "API_TOKEN"), "abc") == "<redacted>"
    assert shown_value(("command", "argv"), ["gh", "--token", "abc", "api"]) == ["gh", "--token", "<redacted>", "api"]
    assert shown_value(("interval",), "1h") == "1h"
    assert shown_header("token-only") == "<hidden: 10 characters>"
    assert shown_header("Bearer ${TOKEN}") == "Bearer ${TOKEN}"


def test_settings_set_of_a_header_does_not_repeat_the_literal_token_it_wrote(home):
    home.write_user_sensor("board", BOARD)
    key = "attend.sensors.board.mcp.server.headers.Authorization"
    for extra in ((), ("--json",)):
        run = home.attend("settings", "set", key, "Bearer n3wtoken", *extra)
        assert run.returncode == 0, run.stderr
        assert "n3wtoken" not in run.stdout and "<hidden: 8 characters>" in run.stdout
    assert "Bearer n3wtoken" in (home.user_sensors / "board.yaml").read_text()  # written as given
