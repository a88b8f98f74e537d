"""One long-lived stdio MCP session per server, shared by every sensor that names it (ADR-403 §4).

The pool runs inside a nursery (`await nursery.start(pool.run)`). A session is opened lazily, by the
first call that needs its server, in a task of the pool's own nursery: the mcp `Client` must be entered
and left by one task, while calls come from every sensor's task. Sessions are keyed by the resolved
`ServerDefinition` (command, args, env), so two sensors naming the same server share one process.

Before each call on a session that served calls before, a tools/list checks that the server is still
there (and refreshes the gate's view): a server that exited while idle is started again at once. A
session that fails (a call finds the connection closed, the start fails or times out) is dropped; the
next call starts the server again, but not before the restart backoff of `mcp.policy.restart_delay` has
passed. Until then the call fails as `unavailable` with the last error.
The server's stderr is appended to `<state dir>/mcp/<server>.log`. Every connect and every call runs
under the caller's deadline.

Each call names its user (the sensor), and the daemon tells the pool which sensors run after every
reload (`retain`): a server that no running sensor uses any more is stopped once UNUSED_GRACE seconds
have passed without a user coming back (a sensor restarted with a new file keeps its name and its server);
ATTEND_MCP_UNUSED_GRACE in the pool's environment sets another grace (a hidden knob for tests).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

import httpx2
import trio
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared._httpx_utils import McpHttpClientFactory, create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    EmptyResult,
    ListToolsRequest,
    ListToolsResult,
    PaginatedRequestParams,
    PingRequest,
    SubscribeRequest,
    SubscribeRequestParams,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import RootModel

from attend.errors import RuntimeFailure, reason
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.faults import env_seconds
from attend.runtime.mcp.inbound import Flow, inbound
from attend.runtime.mcp.policy import (
    gate_refusal,
    restart_delay,
    result_document,
    tool_error_state,
)
from attend.runtime.mcp.servers import ServerDefinition
from attend.text import quoted

if TYPE_CHECKING:
    from attend.spec.loaded import LayerPaths

__all__ = ["CLIENT_LOG", "GRACE_VARIABLE", "LOG_DIR", "UNUSED_GRACE", "McpPool", "ToolCall", "log_path", "running_pool"]

_R = TypeVar("_R")


class PoolContext(Protocol):
    """What a pool reads of the poll context (`runtime.kinds.PollContext`, which imports the pool): where
    servers log, where they start, their environment, and the slot a CLI command's pool is set in."""

    project_dir: Path
    env: dict[str, str]
    paths: LayerPaths
    mcp_pool: Any

#: The folder under the state directory that holds one stderr log per server.
LOG_DIR = "mcp"

#: The file (in the log folder) that receives the mcp client library's own warnings and errors, such as a
#: server line on stdout that is not JSON-RPC; without it Python would print them, traceback and all, on
#: attend's stderr.
CLIENT_LOG = "_mcp-client.log"

#: Seconds the liveness check before a call (a tools/list) may take; a server too busy to answer in time
#: counts as alive (the call's own deadline then decides).
PING_DEADLINE = 5.0

#: Seconds between two checks that a session holding `resources/subscribe` subscriptions still has its server
#: (a ping); the 2025 revisions send nothing when a subscription ends, so a server gone away is noticed here.
SUBSCRIBED_CHECK = 2.0

#: tools/list pages read at most; a server that paginates forever cannot hang a connect.
MAX_TOOL_PAGES = 50

#: Seconds a server that no running sensor uses any more is kept before it is stopped: a sensor turned
#: off and on again, or renamed, within it finds its server still running.
UNUSED_GRACE = 10.0
#: The environment variable (in the pool's context) that sets another grace, in seconds: a hidden knob for
#: tests, so a test of the stop need not wait out the whole grace.
GRACE_VARIABLE = "ATTEND_MCP_UNUSED_GRACE"


def log_path(state_dir: Path, server_name: str) -> Path:
    """The file a server's stderr is appended to: `<state dir>/mcp/<server>.log` (name made file-safe)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", server_name) or "server"
    return Path(state_dir) / LOG_DIR / f"{safe}.log"


@dataclass(slots=True)
class ToolCall:
    """What one successful tool call returned: the poll document and the raw result parts."""

    document: Any
    structured: Any
    texts: list[str]


@dataclass(eq=False)
class _Session:
    """One server's session, from the start attempt until it ends."""

    definition: ServerDefinition
    ready: trio.Event = field(default_factory=trio.Event)
    stop: trio.Event = field(default_factory=trio.Event)
    client: Client | None = None
    tools: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    failure: RuntimeFailure | None = None
    finished: bool = False
    used: bool = False
    #: The resources this session holds a subscription to, each with the users (sensors) it wakes.
    watchers: dict[str, set[str]] = field(default_factory=dict)
    #: The watched resources subscribed with `resources/subscribe` (2025 revisions): their updates arrive as
    #: `notifications/resources/updated` on the session itself, and they are lost with it.
    subscribed: set[str] = field(default_factory=set)
    #: What a remote server answered when it refused the credential (HTTP 401/403), or None.
    refusal: str | None = None
    #: Whether the watch of a subscribed session found its connection closed.
    lost: bool = False


@dataclass(slots=True)
class _History:
    """Consecutive failures of one server, kept across its sessions for the restart backoff."""

    failures: int = 0
    retry_at: float = -math.inf
    last: RuntimeFailure | None = None


class McpPool:
    """The shared MCP sessions of one daemon (or one CLI command).

    Args:
        ctx: the poll context; servers log to `ctx.paths.state_dir/mcp/<server>.log`, start in
            `ctx.project_dir` and get `ctx.env` with their own `env` merged over it.
        clock: the wall clock (the times in the servers' logs and `Flow.dropped_since`).
    """

    def __init__(self, ctx: PoolContext, *, clock: Clock = WALL_CLOCK) -> None:
        self._clock = clock
        self._state_dir = Path(ctx.paths.state_dir)
        self._cwd = Path(ctx.project_dir)
        # Servers see the daemon's environment with their own `env` merged over it, as Claude Code starts them.
        self._env = ctx.env
        self._sessions: dict[ServerDefinition, _Session] = {}
        self._history: dict[ServerDefinition, _History] = {}
        self._nursery: trio.Nursery | None = None
        #: The server each user (a sensor's name) called last; `retain` drops the users that stopped.
        self._users: dict[str, ServerDefinition] = {}
        self._stopping: set[_Session] = set()  # the sessions waiting out the grace
        #: Seconds an unused server is kept: UNUSED_GRACE, or GRACE_VARIABLE's in the context's environment.
        self.unused_grace = env_seconds(GRACE_VARIABLE, UNUSED_GRACE, ctx.env)
        #: The restart backoff after n consecutive failures; a test may shorten it.
        self.restart_delay = restart_delay
        #: Called with a user's name when a resource it subscribed to changed or its subscription was lost
        #: (the daemon wakes that sensor); None: updates are dropped.
        self.on_update: Callable[[str], None] | None = None
        #: The server each subscribed user (a sensor) wants updates from: when that server's session fails,
        #: the user is woken again once the restart backoff has passed, so its read subscribes anew.
        self._subscribers: dict[str, ServerDefinition] = {}
        #: What each server sent unasked, across its sessions (runtime/mcp/inbound.py).
        self._flows: dict[ServerDefinition, Flow] = {}

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Host the sessions until cancelled; every server process is stopped on the way out."""
        library_log = self._capture_library_log()
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                try:
                    await trio.sleep_forever()
                finally:
                    self._nursery = None
                    for session in self._sessions.values():
                        session.stop.set()
        finally:
            logging.getLogger("mcp").removeHandler(library_log)
            library_log.close()

    def _capture_library_log(self) -> logging.Handler:
        """Send the mcp library's warnings and errors to CLIENT_LOG instead of attend's stderr."""
        path = Path(self._state_dir) / LOG_DIR / CLIENT_LOG
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8", delay=True)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger("mcp").addHandler(handler)
        return handler

    def retain(self, users: set[str] | frozenset[str]) -> None:
        """Only `users` (the running sensors' names) use the pool now: every server none of them called
        last is stopped after `unused_grace` seconds, unless a call brings it a user again by then."""
        for name in set(self._users) - set(users):
            del self._users[name]
        for name in set(self._subscribers) - set(users):
            del self._subscribers[name]
        self._sweep()

    def _sweep(self) -> None:
        """Schedule the stop of every open session that no user calls."""
        used = set(self._users.values())
        for session in self._sessions.values():
            if session.definition in used or session.finished or session in self._stopping or self._nursery is None:
                continue
            self._stopping.add(session)
            self._nursery.start_soon(self._stop_unused, session)

    async def _stop_unused(self, session: _Session) -> None:
        try:
            await trio.sleep(self.unused_grace)
        finally:
            self._stopping.discard(session)
        if session.definition not in set(self._users.values()):
            session.stop.set()  # the session's task leaves the client, which ends the server process

    def flow(self, definition: ServerDefinition) -> Flow:
        """What the server sent unasked so far: its notifications, and the log messages dropped past the rate."""
        return self._flows.setdefault(definition, Flow())

    def live_servers(self) -> list[str]:
        """The names of the servers with an open session (for `sensors` and tests)."""
        return [s.definition.name for s in self._sessions.values() if s.client is not None and not s.finished]

    async def call(
        self,
        definition: ServerDefinition,
        tool: str,
        args: dict[str, Any],
        *,
        allow_unannotated: bool,
        timeout: float,
        user: str | None = None,
    ) -> ToolCall:
        """Call `tool` on the server through its shared session, after the read-only gate.

        Args:
            definition: the resolved server.
            tool: the tool's name.
            args: the tool's arguments.
            allow_unannotated: the sensor's override of the gate for a tool without `readOnlyHint`.
            timeout: seconds for the connect (when the session must start) and, separately, for the call.
            user: the calling sensor's name (the daemon's polls), for `retain`; None for a CLI command.

        Returns:
            The call's result.

        Raises:
            RuntimeFailure: `timeout`, `exec_failed` (the server would not start or died), `unavailable`
                (waiting out the restart backoff), `refused` (the gate), `exit` (the tool reported an error)
                or `auth_failed` (the error reports a missing or expired credential).
        """
        session = await self._session_for(definition, timeout, user)
        refusal = gate_refusal(
            tool, session.tools.get(tool), listed=tool in session.tools, allow_unannotated=allow_unannotated
        )
        if refusal is not None:
            raise RuntimeFailure("refused", f"MCP server {definition.name!r}: {refusal}")
        client = session.client
        assert client is not None  # _session_for returns only a session with a client
        result = await self._request(session, f"tool {tool}", lambda: client.call_tool(tool, args), timeout)
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        if result.is_error:
            message = "\n".join(texts).strip()
            said = quoted(message) or "the tool reported an error without a message"
            raise RuntimeFailure(tool_error_state(message), f"MCP tool {tool} on {definition.name!r}: {said}")
        structured = result.structured_content
        return ToolCall(document=result_document(structured, texts), structured=structured, texts=texts)

    async def read(self, definition: ServerDefinition, uri: str, *, timeout: float, user: str | None = None) -> ToolCall:
        """Read the resource `uri` (`resources/read`) through the server's shared session.

        A resource read is read-only by the protocol, so the read-only gate (a tool's `readOnlyHint`) does not
        apply. The document is the text contents joined and parsed as JSON, else `{"text": ...}`, as for a
        tool without structured content; binary (blob) contents are left out.

        Raises:
            RuntimeFailure: as `call`, except `refused`; a read the server answers with an error (an unknown
                URI) is `exit`, or `auth_failed` when its words report a credential problem.
        """
        session = await self._session_for(definition, timeout, user)
        client = session.client
        assert client is not None  # _session_for returns only a session with a client
        result = await self._request(session, f"resource {uri}", lambda: client.read_resource(uri), timeout)
        texts = [text for part in result.contents if isinstance(text := getattr(part, "text", None), str)]
        return ToolCall(document=result_document(None, texts), structured=None, texts=texts)

    async def subscribe(self, definition: ServerDefinition, uri: str, *, timeout: float, user: str) -> bool:
        """Make the server's open session tell `user` (through `on_update`) when the resource `uri` changes.

        On protocol 2026-07-28 this is a `subscriptions/listen` stream for the URI; on the 2025 revisions it is
        `resources/subscribe`, whose `notifications/resources/updated` arrive on the session itself. Either is
        one subscription per resource and session, shared by every user of it, and lives as long as the
        session: when it is lost (the server closed the stream, the connection broke, the session stopped)
        its users are woken once, so their next read subscribes again (no sooner than `min_interval`), and
        after a failed session once more when the restart backoff has passed; `interval` polling covers the
        gap.

        Returns:
            True when `user` is subscribed; False when there is no open session, the server offers no
            resource subscriptions, or it did not honour the URI: the sensor then polls at its `interval`.
        """
        subscribed = await self._subscribe(definition, uri, timeout=timeout, user=user)
        if subscribed:
            self._subscribers[user] = definition
        else:
            self._subscribers.pop(user, None)
        return subscribed

    async def _subscribe(self, definition: ServerDefinition, uri: str, *, timeout: float, user: str) -> bool:
        session = self._sessions.get(definition)
        client = session.client if session is not None and not session.finished else None
        if session is None or client is None:
            return False
        users = session.watchers.get(uri)
        if users is not None:
            users.add(user)
            return True
        resources = client.server_capabilities.resources
        if resources is None or not resources.subscribe:
            return False
        honoured = False
        with trio.move_on_after(timeout):
            try:
                if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    assert self._nursery is not None  # a session exists only while the pool runs
                    honoured = await self._nursery.start(self._listen, session, client, uri)
                else:
                    await client.session.send_request(
                        SubscribeRequest(params=SubscribeRequestParams(uri=uri)), EmptyResult
                    )
                    honoured = not session.finished
                    if honoured:
                        session.subscribed.add(uri)
            except Exception:  # noqa: BLE001 - a refused or broken subscription: poll at `interval` instead
                honoured = False
        if honoured:
            session.watchers.setdefault(uri, set()).add(user)
        return bool(honoured)

    def _updated(self, session: _Session, uri: str) -> None:
        """A `notifications/resources/updated` of `session` (taken out of the stream by `inbound`): wake the users
        of the watched resource it names, or of the one it lies below (the URI after a `/`, a sub-resource the
        protocol allows a server to name); an update of nothing watched wakes nobody."""
        users: set[str] = set()
        for watched, who in session.watchers.items():
            if uri == watched or uri.startswith(watched.rstrip("/") + "/"):
                users |= who
        if users:
            self._wake(users)

    async def _listen(self, session: _Session, client: Client, uri: str,
                      task_status: trio.TaskStatus[bool] = trio.TASK_STATUS_IGNORED) -> None:
        """One `subscriptions/listen` stream for `uri` on `session`, until the session stops or the stream ends."""
        lost = True
        try:
            async with client.listen(resource_subscriptions=[uri]) as stream, trio.open_nursery() as nursery:
                if uri not in (stream.honored.resource_subscriptions or []):
                    lost = False
                    task_status.started(False)
                    nursery.cancel_scope.cancel()
                    return
                session.watchers.setdefault(uri, set())
                task_status.started(True)

                async def until_stopped() -> None:
                    await session.stop.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(until_stopped)
                # its updates are taken out of the session's stream before the SDK sees them (`_updated`, through
                # `inbound`): this only waits for the stream's end
                async for event in stream:
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        self._wake(session.watchers.get(uri, set()))
        except Exception:  # noqa: BLE001 - a lost stream: its users poll again and subscribe anew
            pass
        finally:
            users = session.watchers.pop(uri, set())
            if lost:
                # However the stream ended (the server died, its session stopped or was restarted): its
                # users read again soon and subscribe anew. A wake after a deliberate stop is harmless.
                self._wake(users)

    def _wake(self, users: set[str]) -> None:
        if self.on_update is not None:
            for user in sorted(users):
                self.on_update(user)

    async def _session_for(self, definition: ServerDefinition, timeout: float, user: str | None) -> _Session:
        """The live session a request of `user` goes to (recorded for `retain`), checked alive when it served before."""
        if user is not None and self._users.get(user) != definition:
            moved = user in self._users
            self._users[user] = definition
            if moved:
                self._sweep()  # the server this sensor used before may have no user left
        session = await self._connected(definition, timeout)
        if session.used and not await self._alive(session, timeout):
            # The server exited while idle (an idle timeout, a restart of its own): not a failure of
            # this request, which has not been sent. Start it again at once.
            self._end(session, None)
            session = await self._connected(definition, timeout)
        session.used = True
        return session

    async def _request(self, session: _Session, what: str, send: Callable[[], Awaitable[_R]], timeout: float) -> _R:
        """Send one request (`what`: `tool NAME` or `resource URI`) under `timeout`, its failures as states.

        A JSON-RPC error answer leaves the session open (`exit` or `auth_failed`); a broken connection ends it.
        """
        name = session.definition.name
        with trio.move_on_after(timeout):
            try:
                return await send()
            except MCPError as exc:
                if session.refusal is not None:
                    # A remote server refused the credential (it expired mid-session): end the session, so
                    # the next attempt connects anew after the restart backoff.
                    failure = self._refused(session)
                    self._end(session, failure)
                    raise failure from None
                if exc.code != CONNECTION_CLOSED:
                    # The server answered with a JSON-RPC error: the session is fine, the request failed.
                    message = f"MCP {what} on {name!r}: {quoted(exc.message)} (error {exc.code})"
                    raise RuntimeFailure(tool_error_state(exc.message), message) from None
                raise self._lost(session, what, exc) from None
            except Exception as exc:  # noqa: BLE001 - any other failure is the transport's: the session is gone
                raise self._lost(session, what, exc) from None
        raise RuntimeFailure("timeout", f"MCP {what} on {name!r} did not answer within {timeout:g}s")

    async def _alive(self, session: _Session, timeout: float) -> bool:
        """Whether a session that served calls before still has its server; refreshes the tool listing.

        A dead session fails a request at once without sending it; the modern protocol has no ping, so the
        request is a tools/list, which also keeps the gate's view of the tools current. A server too busy
        to answer within PING_DEADLINE counts as alive (the call's own deadline then decides).
        """
        client = session.client
        if client is None:
            return False
        with trio.move_on_after(min(timeout, PING_DEADLINE)):
            try:
                session.tools = await _list_tools(client)
            except MCPError as exc:
                return exc.code != CONNECTION_CLOSED
            except Exception:  # noqa: BLE001 - the transport is gone
                return False
        return True

    def _lost(self, session: _Session, what: str, exc: BaseException) -> RuntimeFailure:
        """End a session whose connection broke during a call; the failure counts towards the backoff."""
        name = session.definition.name
        failure = RuntimeFailure(
            "exec_failed",
            f"MCP server {name!r} failed during {what}: {_describe(exc)} (stderr: {log_path(self._state_dir, name)})",
        )
        self._end(session, failure)
        return failure

    async def _connected(self, definition: ServerDefinition, timeout: float) -> _Session:
        """The live session of `definition`, starting one when there is none (and the backoff allows)."""
        if self._nursery is None:
            raise RuntimeFailure("unavailable", "the MCP session pool is not running")
        session = self._sessions.get(definition)
        if session is None or session.finished:
            history = self._history.setdefault(definition, _History())
            wait = history.retry_at - trio.current_time()
            if wait > 0 and history.last is not None:
                raise RuntimeFailure(
                    "unavailable",
                    f"{history.last.message} — next start attempt in {wait:.1f}s "
                    f"(after {history.failures} failure{'s' if history.failures > 1 else ''})",
                )
            session = _Session(definition)
            self._sessions[definition] = session
            self._nursery.start_soon(self._serve, session, timeout, name=f"mcp:{definition.name}")
        with trio.move_on_after(timeout):
            await session.ready.wait()
        if not session.ready.is_set():
            raise RuntimeFailure("timeout", f"MCP server {definition.name!r} did not start within {timeout:g}s")
        if session.client is None or session.finished:
            failure = session.failure
            if failure is None:
                raise RuntimeFailure("exec_failed", f"MCP server {definition.name!r} stopped")
            raise RuntimeFailure(failure.state, failure.message)
        return session

    async def _serve(self, session: _Session, timeout: float) -> None:
        """Run one session: start the server, list its tools, hold the session open until told to stop."""
        definition = session.definition
        log = log_path(self._state_dir, definition.name)
        failure: RuntimeFailure | None = None
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as errlog:
                _log_start(errlog, definition, self._clock())
                failure = await self._hold(session, errlog, timeout)
        except OSError as exc:
            failure = RuntimeFailure("exec_failed", f"MCP server {definition.name!r} could not start: {reason(exc)}")
        except Exception as exc:  # noqa: BLE001 - a failed start or a dying server is a state, not a crash
            if not definition.url:
                what = "stopped"
            elif session.client is None:  # a remote server: nothing was started, it was not reached
                what = f"could not be reached at {definition.url}"
            else:
                what = "lost its connection"
            failure = RuntimeFailure("exec_failed", f"MCP server {definition.name!r} {what}: {_describe(exc)} "
                                                    f"({_log_name(definition)}: {log})")
        finally:
            if session.refusal is not None:
                failure = self._refused(session)
            self._end(session, failure)

    def _refused(self, session: _Session) -> RuntimeFailure:
        """A remote server refused the credential (HTTP 401/403): `auth_failed` with its words; never a login."""
        return RuntimeFailure("auth_failed", f"MCP server {session.definition.name!r} refused the credential: "
                                             f"{session.refusal}")

    async def _hold(self, session: _Session, errlog: TextIO, timeout: float) -> RuntimeFailure | None:
        """Open the client under the connect deadline, publish it, and wait for the stop signal."""
        definition = session.definition
        async with AsyncExitStack() as stack:
            if definition.transport == "sse":
                transport: Any = sse_client(definition.url, headers=dict(definition.headers),
                                            httpx_client_factory=self._http_client_factory(session))
            elif definition.url:
                transport = streamable_http_client(definition.url, http_client=await stack.enter_async_context(
                    self._http_client_factory(session)(headers=dict(definition.headers))))
            else:
                params = StdioServerParameters(
                    command=definition.command,
                    args=list(definition.args),
                    env={**self._env, **definition.env_dict},
                    cwd=self._cwd,
                )
                transport = stdio_client(params, errlog=errlog)

            def write_log(line: str) -> None:
                errlog.write(line + "\n")
                errlog.flush()

            transport = inbound(transport, self.flow(definition), lambda uri: self._updated(session, uri), write_log,
                                clock=self._clock)
            return await self._hold_client(session, transport, timeout)

    def _http_client_factory(self, session: _Session) -> McpHttpClientFactory:
        """How a remote session's HTTP client is made: the SDK's, with a hook that keeps a 401/403's words."""

        async def on_response(response: httpx2.Response) -> None:
            if response.status_code in (401, 403):
                await response.aread()
                # the server's words, each part as a message quotes another program (escaped, one line, cut)
                words = quoted(response.text)
                challenge = quoted(response.headers.get("www-authenticate") or "")
                session.refusal = (f"HTTP {response.status_code} {response.reason_phrase}"
                                   f"{f': {words}' if words else ''}{f' ({challenge})' if challenge else ''}")

        def factory(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                    auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
            client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
            client.event_hooks = {"request": [], "response": [on_response]}
            return client

        return factory

    async def _hold_client(self, session: _Session, transport: Any, timeout: float) -> RuntimeFailure | None:
        definition = session.definition
        # One scope for the whole session: the connect deadline applies until the tools are listed and is
        # lifted then (the client's task group must be left inside the scope it was entered in).
        with trio.CancelScope(deadline=trio.current_time() + timeout) as scope:
            async with Client(transport, cache=None) as client:
                session.tools = await _list_tools(client)
                scope.deadline = math.inf
                session.client = client
                self._history[definition] = _History()
                session.ready.set()
                async with trio.open_nursery() as watch:
                    watch.start_soon(self._watch_subscribed, session, client)
                    await session.stop.wait()
                    watch.cancel_scope.cancel()
        if scope.cancelled_caught and session.client is None:
            return RuntimeFailure("timeout", f"MCP server {definition.name!r} did not start within {timeout:g}s")
        if session.lost:
            return RuntimeFailure("exec_failed", f"MCP server {definition.name!r} closed the connection "
                                                 f"({_log_name(definition)}: {log_path(self._state_dir, definition.name)})")
        return None

    async def _watch_subscribed(self, session: _Session, client: Client) -> None:
        """While the session holds `resources/subscribe` subscriptions, notice a server gone away: a ping every
        SUBSCRIBED_CHECK seconds, which fails at once on a closed connection, ends the session (its users are
        woken and subscribe anew after the backoff). Without subscriptions the next request notices instead."""
        while True:
            await trio.sleep(SUBSCRIBED_CHECK)
            if not session.subscribed:
                continue
            with trio.move_on_after(PING_DEADLINE):
                try:
                    # the 2025 revisions' ping, sent as such (the SDK's send_ping warns that 2026-07-28 dropped it)
                    await client.session.send_request(PingRequest(), EmptyResult)
                except MCPError as exc:
                    session.lost = exc.code == CONNECTION_CLOSED
                except Exception:  # noqa: BLE001 - the transport is gone
                    session.lost = True
            if session.lost:
                session.stop.set()
                return

    def _end(self, session: _Session, failure: RuntimeFailure | None) -> None:
        """Mark `session` finished; a failure counts towards its server's restart backoff."""
        if session.finished:
            return
        session.finished = True
        session.client = None
        session.stop.set()
        # The `resources/subscribe` subscriptions end with the session: their users read again soon and
        # subscribe anew (a `subscriptions/listen` stream wakes its own users as it ends).
        lost: set[str] = set()
        for uri in session.subscribed:
            lost |= session.watchers.pop(uri, set())
        session.subscribed.clear()
        self._wake(lost)
        if failure is not None:
            session.failure = failure
            history = self._history.setdefault(session.definition, _History())
            history.failures += 1
            history.last = failure
            history.retry_at = trio.current_time() + self.restart_delay(history.failures)
            self._wake_after_backoff(session.definition, history.retry_at)
        session.ready.set()

    def _wake_after_backoff(self, definition: ServerDefinition, retry_at: float) -> None:
        """Wake the subscribed users of a failed server again once its restart backoff has passed, so their
        reads start it and subscribe anew without waiting for `interval` (each failure doubles the wait)."""
        users = {user for user, wanted in self._subscribers.items() if wanted == definition}
        if not users or self._nursery is None:
            return

        async def wake_later() -> None:
            await trio.sleep_until(retry_at)
            self._wake({user for user in users if self._subscribers.get(user) == definition})

        self._nursery.start_soon(wake_later)


class _RawResult(RootModel[dict[str, Any]]):
    """A result read as the JSON it is, nothing coerced (pydantic's lax mode reads `"true"` and `1` as True)."""


async def _list_tools(client: Client) -> dict[str, dict[str, Any] | None]:
    """Every tool the server lists, name → its annotations as the server sent them (the JSON object, camelCase
    keys) or None.

    The gate reads the raw annotation: the SDK's model coerces, so `readOnlyHint: "true"` or `1` would read as
    the boolean. Each page is requested once, as `Client.list_tools` would, and handed to the session the same
    way (the tools it keeps, their output schemas and header maps for the calls)."""
    tools: dict[str, dict[str, Any] | None] = {}
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        request = ListToolsRequest(params=PaginatedRequestParams(cursor=cursor))
        raw = (await client.session.send_request(request, _RawResult)).root
        page = ListToolsResult.model_validate(raw, by_name=False)
        # What the session's own list_tools does with a page (a listing of one page is the whole listing).
        page = client.session._absorb_tool_listing(page, complete=cursor is None and page.next_cursor is None)  # noqa: SLF001
        sent = {t.get("name"): t.get("annotations") for t in raw.get("tools") or () if isinstance(t, dict)}
        for tool in page.tools:
            annotations = sent.get(tool.name)
            tools[tool.name] = annotations if isinstance(annotations, dict) else None
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _log_start(errlog: TextIO, definition: ServerDefinition, now: float) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now))
    if definition.url:
        errlog.write(f"--- {stamp} attend connects to {definition.url} ({definition.transport})\n")
    else:
        errlog.write(f"--- {stamp} attend starts {definition.command} {' '.join(definition.args)}\n")
    errlog.flush()


def _log_name(definition: ServerDefinition) -> str:
    """What a server's log file holds: a stdio server's stderr, a remote server's connection log."""
    return "log" if definition.url else "stderr"


def _describe(exc: BaseException) -> str:
    """A one-line description of an exception, unwrapping single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return quoted(text.splitlines()[0]) if text else type(exc).__name__


@asynccontextmanager
async def running_pool(ctx: PoolContext) -> AsyncIterator[McpPool]:
    """A pool for one CLI command (`sensors poll`, `sensors probe`), set as `ctx.mcp_pool` while open.

    On the way out the pool is cancelled, and with it every server it started. The daemon keeps its pool
    in its own nursery for its whole life instead.
    """
    async with trio.open_nursery() as nursery:
        pool = McpPool(ctx)
        await nursery.start(pool.run)
        ctx.mcp_pool = pool
        try:
            yield pool
        finally:
            nursery.cancel_scope.cancel()
