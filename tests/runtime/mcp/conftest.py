"""Fixtures for the MCP tests: what stands behind the test servers, a poll context and a running pool."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp_rig import Behind, layer_paths

from attend.runtime.kinds import PollContext

if TYPE_CHECKING:  # the pool imports the mcp SDK (~1 s): only the tests that run a pool pay it, not collection
    from attend.runtime.mcp.pool import McpPool


@pytest.fixture
def behind(tmp_path: Path) -> Behind:
    b = Behind(tmp_path / "items.json", tmp_path / "starts.txt", tmp_path / "crash-now")
    b.write_items([{"id": "a", "title": "first"}])
    return b


@pytest.fixture
def ctx(tmp_path: Path) -> PollContext:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)  # the `home` fixture may have made it: then both share one project
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    return PollContext(project_dir=project, env=env, paths=layer_paths(tmp_path, project))


@pytest.fixture
async def pool(ctx: PollContext) -> McpPool:
    """A running pool on `ctx` (also set as `ctx.mcp_pool`); cancelled, with its servers, after the test."""
    from attend.runtime.mcp.pool import running_pool

    async with running_pool(ctx) as running:
        yield running


@pytest.fixture(scope="session")
def everything() -> Path:
    """The real npm server-everything package of the pinned release (installed into the test cache on first use)."""
    from everything_rig import installed_everything

    package = installed_everything()
    if package is None:
        from npm_cache import cannot_run

        cannot_run("npm is not installed: these tests need Node.js to install @modelcontextprotocol/server-everything")
    return package
