"""The daemon with an MCP sensor: the shared pool starts, and a notification names its server and key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from daemon_rig import sensors_json, wait_until

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parent / "mcp" / "servers" / "clean.py"


def test_an_mcp_notification_names_the_server_and_the_item_key(daemon, quiet_home) -> None:
    items = quiet_home.root / "mcp-items.json"
    items.write_text("[]")
    sensor = {
        "spec": 1,
        "name": "board",
        "kind": "mcp",
        "interval": "1s",
        "min_interval": "0.5s",
        "threshold": 0,
        "mcp": {
            "server": {"command": sys.executable, "args": [str(SERVER)], "env": {"ATTEND_TEST_ITEMS": str(items)}},
            "tool": "list_structured",
        },
        "triggers": {
            "new": {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3, "description": "card {title}"}
        },
    }
    quiet_home.write_user_sensor("board", json.dumps(sensor))
    probe = quiet_home.attend("sensors", "probe", "board", "--confirm", timeout=120)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["board"]["last_poll"] is not None, timeout=60, what="the first poll")
    assert sensors_json(quiet_home)["board"]["state"] == "ok"
    items.write_text(json.dumps([{"id": "c-7", "title": "ship it"}]))
    lines = d.wait_for(lambda ls: any("card ship it" in line for line in ls), timeout=60)
    [line] = [line for line in lines if "card ship it" in line]
    assert line.startswith("[attend sensor=board priority=medium] card ship it (server=")
    assert line.endswith(", key=c-7)")
    assert d.stop() == 0
