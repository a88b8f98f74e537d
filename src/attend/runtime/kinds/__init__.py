"""The sensor kinds: one poll of a compiled sensor, whatever its source (ADR-403 §1).

Each kind lives in its own module (`command`, `mcp`, `crate`) with `async def poll(compiled, ctx)`.
A kind never raises for a failed poll: it returns a `PollOutcome` whose `state` names the failure
(DESIGN.md, Failure states), so the caller can leave trigger state untouched.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.runtime.store.pending import UNCHANGED, Unchanged
from attend.spec.schema import DEFAULT_MAX_OUTPUT
from attend.vocab import FAILURE_STATES, OK

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.runtime.kinds.crate import CrateInstance
    from attend.runtime.mcp.pool import McpPool
    from attend.runtime.store import Store
    from attend.spec.loaded import LayerPaths
    from attend.vocab import JSON, FailureState, SensorState

__all__ = ["FAILURE_STATES", "KIND_MODULES", "PollContext", "PollOutcome", "poll"]

#: The module that polls each kind.
KIND_MODULES: dict[str, str] = {
    "command": "attend.runtime.kinds.command",
    "mcp": "attend.runtime.kinds.mcp",
    "crate": "attend.runtime.kinds.crate",
}


@dataclass(slots=True)
class PollOutcome:
    """What one poll produced: a result on success, or a failure state with its message.

    `line_errors` lists the lines of a `lines` output that did not parse (the valid ones still count).
    The other fields are kind-specific facts for the store, notifications and `sensors poll`.
    """

    result: Any = None
    state: SensorState = OK
    message: str = ""
    line_errors: list[str] = field(default_factory=list)
    #: An mcp sensor's server (its notifications and `sensors poll` name it), failed or not.
    server: str | None = None
    #: A crate sensor's exported state (a stream's cursor), stored by `pipeline.record_poll` in the same
    #: transaction as the trigger states of the poll that produced it; `UNCHANGED` when it exported none.
    crate_state: JSON | Unchanged = UNCHANGED
    #: What a successful crate poll skipped as unreadable (a corrupt file), one line each: the poll's status
    #: message names them, so `attend sensors` shows them.
    skipped: list[str] = field(default_factory=list)
    #: Further facts for the poll's status message (a streaming command's restarts, cut lines, coalesced
    #: records and stderr tail; a flooded MCP server), one short note each.
    notes: list[str] = field(default_factory=list)
    #: A one-shot poll of a streaming command: how long it collected its records (`sensors poll --for`).
    collected_for: float | None = None

    @property
    def ok(self) -> bool:
        """True when the poll succeeded and `result` holds its result."""
        return self.state == OK

    @classmethod
    def failed(cls, state: FailureState, message: str, *, server: str | None = None) -> PollOutcome:
        """A failed poll in `state` (one of FAILURE_STATES); an mcp sensor's names its `server`."""
        if state not in FAILURE_STATES:
            raise ValueError(f"`state` must be one of {FAILURE_STATES}, not {state!r}")
        return cls(result=None, state=state, message=message, server=server)


@dataclass(slots=True)
class PollContext:
    """What a kind may use during a poll. One per daemon (or per one-shot CLI command).

    `mcp_pool` is the shared MCP session pool (kinds/mcp.py), started only when an mcp sensor exists.
    `crate_instances` keeps each crate sensor's object alive between polls, keyed by `state_key`.
    `session`: the session a session-scoped sensor is polled for (its focus), None for a project poll;
    `transcript`: that session's transcript as Claude Code told its hooks (None: not told).
    `stream_for` is how long a one-shot poll of a streaming command collects (the daemon never polls one).
    """

    project_dir: Path
    env: dict[str, str]
    paths: LayerPaths
    store: Store | None = None
    mcp_pool: McpPool | None = None
    crate_instances: dict[str, CrateInstance] = field(default_factory=dict)
    stdout_cap: int = DEFAULT_MAX_OUTPUT
    session: str | None = None
    transcript: str | None = None
    #: Seconds a one-shot poll of a streaming command collects its records (`sensors poll --for`).
    stream_for: float = 5.0

    def state_key(self, name: str) -> str:
        """Where sensor `name` keeps its trigger and crate state in this poll (`session_state_key`)."""
        return session_state_key(name, self.session)


def session_state_key(name: str, session: str | None) -> str:
    """The store key of sensor `name`'s trigger and crate state: per session for a session-scoped poll
    (`name@session`; `@` is in no sensor name), else the sensor's name."""
    return name if session is None else f"{name}@{session}"


async def poll(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    """Poll `compiled` once through the module of its kind."""
    module_name = KIND_MODULES.get(compiled.kind or "")
    if module_name is None:
        return PollOutcome.failed("invalid", f"unknown kind {compiled.kind!r}")
    module = importlib.import_module(module_name)
    outcome: PollOutcome = await module.poll(compiled, ctx)  # each kind's `poll` returns one
    if outcome.ok and compiled.kind != "command":  # a command's output went through results.read_json
        from attend.compiler.results import MalformedResult, admit

        try:
            outcome.result = admit(outcome.result)
        except MalformedResult as exc:
            return PollOutcome.failed("malformed", exc.message, server=outcome.server)
    return outcome
