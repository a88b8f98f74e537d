"""The MCP tests' rig: real stdio test servers (servers/*.py), what stands behind them, sensor files."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon_rig import sensors_json

from attend.files import write_atomically
from attend.spec.loaded import LayerPaths
from waiting import wait_until

if TYPE_CHECKING:
    from attend.runtime.kinds import PollContext
    from attend.runtime.mcp.pool import ToolCall
    from attend.runtime.mcp.servers import McpSettings, ServerDefinition

SERVERS = Path(__file__).parent / "servers"


async def call_tool(settings: McpSettings, ctx: PollContext) -> tuple[ServerDefinition, ToolCall]:
    """attend.runtime.kinds.mcp.call_tool, imported on first call: the module imports the mcp SDK (~1 s of CPU),
    which collecting the MCP tests (every xdist worker, every run) must not pay."""
    from attend.runtime.kinds import mcp

    return await mcp.call_tool(settings, ctx)


#: Seconds a test server gets to start and answer (a Python interpreter importing mcp, on a busy machine).
GENEROUS = 30.0


@dataclass
class Behind:
    """What stands behind the test servers: the items file they read and the file that counts starts."""

    items_file: Path
    starts_file: Path
    crash_marker: Path

    def write_items(self, items: list[dict[str, Any]]) -> None:
        """Replace the items file whole: a server reads it whenever it likes, and a file truncated then
        written would be empty JSON for a moment."""
        write_atomically(self.items_file, json.dumps(items))

    def starts(self) -> list[str]:
        if not self.starts_file.exists():
            return []
        return self.starts_file.read_text(encoding="utf-8").splitlines()

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "ATTEND_TEST_ITEMS": str(self.items_file),
            "ATTEND_TEST_STARTS": str(self.starts_file),
            "ATTEND_TEST_CRASH": str(self.crash_marker),
            **extra,
        }

    def inline(self, script: str, **extra_env: str) -> dict[str, Any]:
        """An inline `mcp.server` block that runs servers/<script>.py with this interpreter."""
        return {"command": sys.executable, "args": [str(SERVERS / f"{script}.py")], "env": self.env(**extra_env)}


def mcp_sensor_yaml(name: str, server: Any, tool: str | None = "list_items", **mcp: Any) -> str:
    """A user sensor file of kind mcp with one keyed `added` trigger on `$.items[*]` (JSON is valid YAML).

    `tool=None` leaves the tool out (a resource sensor passes `resource=URI`)."""
    if tool is not None:
        mcp = {"tool": tool, **mcp}
    doc = {
        "spec": 1,
        "name": name,
        "kind": "mcp",
        "interval": 1,
        "min_interval": 1,
        "threshold": 1.0,
        "mcp": {"server": server, "timeout": GENEROUS, **mcp},
        "triggers": {
            "new-item": {
                "path": "$.items[*]",
                "key": "id",
                "on": "added",
                "magnitude": 5.0,
                "description": "new item {id}: {title}",
            }
        },
    }
    return json.dumps(doc, indent=2)


def polled_ok(home: Any, name: str) -> bool:
    """Whether the daemon polled sensor `name` at least once and its state is ok (not only probed ok)."""
    row = sensors_json(home).get(name, {})
    return row.get("state") == "ok" and bool(row.get("last_poll"))


def layer_paths(root: Path, project: Path) -> LayerPaths:
    """Layer paths inside `root` (the tests here need only the state directory to be real)."""
    return LayerPaths(
        shipped=root / "shipped",
        shipped_projection=root / "data" / "sensors",
        user=root / "config" / "sensors",
        project=project / ".claude" / "attend" / "sensors",
        project_dir=project,
        config_file=root / "config" / "config.yaml",
        project_config_file=project / ".claude" / "attend" / "config.yaml",
        state_dir=root / "state",
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


@contextmanager
def serving(argv: list[str], port: int, env: dict[str, str], output: Any = subprocess.DEVNULL) -> Iterator[int]:
    """Run a server process that listens on 127.0.0.1:`port`; yields the port once it accepts, stops it after."""
    proc = subprocess.Popen(argv, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: accepts(port), timeout=GENEROUS, what=f"port {port} of {Path(argv[1]).name}")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=GENEROUS)
