"""The mcp kind: one read-only tool call, or one resource read, on a stdio MCP server per poll (ADR-403 §4).

A poll resolves the sensor's server (`mcp.servers`), refuses to run without a valid, confirmed probe
record (`unprobed`), then calls the tool through the shared session pool (`mcp_pool.McpPool`, the
`ctx.mcp_pool` of the daemon or CLI command), which applies the read-only gate, or reads the sensor's
`resource` (`resources/read`, read-only by the protocol: no gate, but the probe still applies). Every
outcome carries its server's name (`PollOutcome.server`) so notifications can name the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attend.errors import RuntimeFailure
from attend.runtime.kinds import PollContext, PollOutcome
from attend.runtime.mcp.policy import probe_problem, unprobed_message
from attend.runtime.mcp.pool import McpPool, ToolCall
from attend.runtime.mcp.probe import ProbeRun, compare_results
from attend.runtime.mcp.servers import (
    DEFAULT_TIMEOUT,
    McpSettings,
    ServerDefinition,
    resolve_server,
    sensor_settings,
)

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.runtime.store import Store
    from attend.spec.loaded import LayerPaths

__all__ = ["DEFAULT_TIMEOUT", "McpPool", "McpSettings", "call_tool", "poll", "probe_calls", "sensor_settings"]


async def call_tool(settings: McpSettings, ctx: PollContext) -> tuple[ServerDefinition, ToolCall]:
    """Resolve the server and call the tool (or read the resource) through `ctx.mcp_pool` (the gate applies to
    a tool; the probe does not).

    Raises:
        RuntimeFailure: any failure state, with its message.
    """
    definition = resolve_server(settings.server, ctx.project_dir, ctx.env)
    return definition, await _pool_call(definition, settings, ctx)


async def _pool_call(
    definition: ServerDefinition, settings: McpSettings, ctx: PollContext, user: str | None = None
) -> ToolCall:
    pool = ctx.mcp_pool
    if isinstance(settings.resource, str) and settings.resource:
        if pool is None:
            raise RuntimeFailure("unavailable", "no MCP session pool is running")
        read = await pool.read(definition, settings.resource, timeout=settings.timeout, user=user)
        if settings.subscribe and user is not None:
            # After each read, so a lost subscription is taken up again by the next (interval) poll.
            await pool.subscribe(definition, settings.resource, timeout=settings.timeout, user=user)
        return read
    if not isinstance(settings.tool, str) or not settings.tool:
        raise RuntimeFailure("invalid", "mcp.tool must name the tool to call (or mcp.resource the resource to read)")
    if pool is None:
        raise RuntimeFailure("unavailable", "no MCP session pool is running")
    return await pool.call(
        definition,
        settings.tool,
        settings.args,
        allow_unannotated=settings.allow_unannotated,
        timeout=settings.timeout,
        user=user,
    )


async def poll(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    """Poll an mcp sensor once; a failure is a `PollOutcome` in its failure state, never an exception.

    Order: resolve the server (`invalid`, `unsupported`), check the probe record (`unprobed`, before any
    server starts), then call through the pool (gate, connect, call).
    """
    settings = sensor_settings(compiled)
    server = settings.label
    try:
        definition = resolve_server(settings.server, ctx.project_dir, ctx.env)
        server = definition.name
        record = ctx.store.get_probe(compiled.name) if ctx.store is not None else None
        problem = probe_problem(record, settings.fingerprint)
        if problem is not None:
            raise RuntimeFailure("unprobed", unprobed_message(compiled.name, problem, settings.resource is not None))
        call = await _pool_call(definition, settings, ctx, user=compiled.name)
    except RuntimeFailure as failure:
        return PollOutcome.failed(failure.state, failure.message, server=server)
    outcome = PollOutcome(result=call.document, server=server)
    if ctx.mcp_pool is not None:
        flooded = flood_note(ctx.mcp_pool, definition, ctx)
        if flooded:
            outcome.notes = [flooded]
    return outcome


def flood_note(pool: McpPool, definition: ServerDefinition, ctx: PollContext) -> str:
    """What the status says of a server's log messages dropped past the rate (runtime/mcp/inbound.py), or ""."""
    from attend.runtime.mcp.inbound import LOG_MESSAGES_PER_SECOND
    from attend.runtime.mcp.pool import log_path
    from attend.text import iso_time

    flow = pool.flow(definition)
    if not flow.dropped_logs:
        return ""
    return (f"server {definition.name} sent more than {LOG_MESSAGES_PER_SECOND} log messages a second: "
            f"{flow.dropped_logs:,} dropped since {iso_time(flow.dropped_since)} (the others are in "
            f"{log_path(ctx.paths.state_dir, definition.name)})")


async def probe_calls(compiled: CompiledSensor, paths: LayerPaths, env: dict[str, str], project_dir: str | Path,
                      store: Store) -> ProbeRun:
    """The probe's calls (`attend sensors probe`, runtime/mcp/probe.py): the sensor's tool twice in a row,
    and the comparison of the two results (nothing recorded yet).

    Raises:
        RuntimeFailure: the tool could not be called (its failure state and message).
    """
    from attend.runtime.mcp.pool import running_pool

    settings = sensor_settings(compiled)
    ctx = PollContext(project_dir=Path(project_dir), env=env, paths=paths, store=store)
    failure: RuntimeFailure | None = None
    async with running_pool(ctx):
        # Caught inside the pool: leaving its nursery with an exception would wrap it in a group.
        try:
            definition, first = await call_tool(settings, ctx)
            _, second = await call_tool(settings, ctx)
        except RuntimeFailure as exc:
            failure = exc
    if failure is not None:
        raise failure
    verdict = compare_results(compiled.triggers, first.document, second.document)
    return ProbeRun(compiled, settings, definition.name, first.document, second.document, verdict)
