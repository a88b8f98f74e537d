"""The MCP tests' rig (mcp_rig.py): what stands behind the test servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
from mcp_rig import GENEROUS, Behind, call_tool

from attend.errors import RuntimeFailure
from attend.runtime.mcp.servers import McpSettings
from attend.spec.reader import read_mcp

if TYPE_CHECKING:
    from attend.runtime.kinds import PollContext
    from attend.runtime.mcp.pool import McpPool


def test_a_server_reading_the_items_never_sees_them_half_written(tmp_path: Path) -> None:
    # The servers read the items file whenever they like (resources.py every 20 ms): a file truncated and then
    # written is empty for a moment, and its JSON fails to parse in the server (which then answers an error,
    # or never answers, or stops publishing). `write_items` replaces the file whole: a reader that opened the
    # file before the write reads all of what was there, never a truncated file.
    behind = Behind(tmp_path / "items.json", tmp_path / "starts.txt", tmp_path / "crash-now")
    behind.write_items([{"id": "a", "title": "first"}])
    with open(behind.items_file, encoding="utf-8") as reader:
        behind.write_items([{"id": "b", "title": "second"}])
        assert json.loads(reader.read()) == [{"id": "a", "title": "first"}]
    assert json.loads(behind.items_file.read_text(encoding="utf-8")) == [{"id": "b", "title": "second"}]


async def test_a_wire_server_tool_that_raises_answers_an_error_result_as_the_sdks_server_does(
    ctx: PollContext, pool: McpPool, behind: Behind
) -> None:
    # servers/wire.py stands in for the SDK's server: a tool that raises (here: an argument it does not take)
    # is an error result naming the tool, so the call fails at once, not at its timeout; the session lives on.
    server = behind.inline("listing")
    settings = McpSettings(read_mcp({"server": server, "tool": "environment", "args": {"nope": 1}, "timeout": GENEROUS}))
    with trio.fail_after(GENEROUS / 3), pytest.raises(RuntimeFailure) as caught:
        await call_tool(settings, ctx)
    assert caught.value.state == "exit" and "Error executing tool environment" in caught.value.message
    _, call = await call_tool(McpSettings(read_mcp({"server": server, "tool": "list_items", "timeout": GENEROUS})), ctx)
    assert call.document == {"items": [{"id": "a", "title": "first"}]}
    assert len(behind.starts()) == 1


def test_a_test_of_server_everything_fails_under_ci_when_npm_cannot_install_it(tmp_path: Path) -> None:
    # No npm on PATH and an empty test cache: on a developer's machine the test is skipped, under CI it fails
    # (CI must never pass by skipping the real server). A real pytest run of a real test of the package.
    import os
    import subprocess
    import sys

    test = f"{Path(__file__).with_name('test_mcp_everything.py')}::test_a_2025_server_wakes_a_subscribed_user_through_resources_subscribe"
    (tmp_path / "bin").mkdir()
    runs = {}
    for ci in ("true", ""):
        env = {**os.environ, "PATH": str(tmp_path / "bin"), "ATTEND_TEST_CACHE": str(tmp_path / "cache"), "CI": ci}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
                               "-p", "no:cacheprovider", test], capture_output=True, text=True, env=env, timeout=600)
        runs[ci] = done.stdout.strip().splitlines()[-1]
    assert "1 error" in runs["true"] and "skipped" not in runs["true"], runs
    assert "1 skipped" in runs[""], runs
