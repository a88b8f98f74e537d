"""Which stdio MCP server an mcp sensor names, resolved from Claude Code's configuration (ADR-403 §4).

A sensor's `mcp.server` is either a name or an inline `{command, args, env}` mapping. A name is looked up
in the scopes Claude Code itself uses, highest first:

1. local   — `~/.claude.json` → `projects.<absolute project dir>.mcpServers`
2. project — `<project dir>/.mcp.json` → `mcpServers`
3. user    — `~/.claude.json` → top-level `mcpServers`

`~/.claude.json` lives in `$CLAUDE_CONFIG_DIR` when that variable is set (as Claude Code does), else in
`$HOME`. Both files are read tolerantly (missing, invalid JSON or wrong shapes are skipped with a note)
and never written. `${VAR}` and `${VAR:-default}` are expanded in `command`, `args` and `env` values as
Claude Code expands them; a variable without a value and without a default makes the server `invalid`.
A remote server, `type: http` (streamable HTTP) or `type: sse` (HTTP with server-sent events), named or inline,
resolves to its `url` and its `headers` (`${VAR}` expanded; an unset one is a missing credential,
`auth_failed`); any other remote server (`ws`, a bare `url` without `type`) is `unsupported`.

Everything here is pure apart from reading the two JSON files; no trio, no mcp.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from attend import ir
from attend.errors import RuntimeFailure, reason
from attend.spec.headers import VAR_REFERENCE
from attend.spec.reader import mcp_block
from attend.spec.schema import DEFAULT_MCP_TIMEOUT

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor

__all__ = [
    "CLAUDE_JSON",
    "DEFAULT_TIMEOUT",
    "McpSettings",
    "PROJECT_MCP_JSON",
    "REMOTE_TYPES",
    "SSE_TYPES",
    "ServerDefinition",
    "claude_json_path",
    "describe_mcp",
    "expand_vars",
    "fingerprint",
    "resolve_server",
    "sensor_settings",
    "server_label",
]

#: Claude Code's user configuration file, in `$CLAUDE_CONFIG_DIR` or the home directory.
CLAUDE_JSON = ".claude.json"

#: The project-scoped MCP configuration file, at the project directory's root.
PROJECT_MCP_JSON = ".mcp.json"

#: Transport types of a remote server attend connects to over streamable HTTP (with `url` and `headers`).
HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http"})

#: Transport types of a remote server attend connects to over HTTP with server-sent events (the 2024-11-05
#: transport, still served by many hosted servers), with `url` and `headers`.
SSE_TYPES = frozenset({"sse"})

#: Transport types that are not stdio; those neither in HTTP_TYPES nor SSE_TYPES are `unsupported`.
REMOTE_TYPES = frozenset({"http", "sse", "streamable-http", "streamable_http", "ws", "websocket"})

#: Commands that start another program named in their arguments (an inline server is named after that).
_LAUNCHER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|npx|uvx|uv|bunx|bun|deno|pipx|pnpm|yarn|docker)(\.exe)?$")

#: Launcher arguments that are verbs, not the program (`uv run`, `pipx run`, `docker run`, `pnpm dlx`).
_LAUNCHER_VERBS = frozenset({"run", "dlx", "exec", "tool"})


@dataclass(frozen=True, slots=True)
class ServerDefinition:
    """A stdio server, resolved and expanded: what attend starts, and the key of its shared session.

    Two sensors share one session exactly when their definitions are equal, so `name`, `source` and
    `configured` (which say where it came from) stay out of equality and hashing.
    """

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: A remote server's endpoint ("" for a stdio server, which has a `command`).
    url: str = ""
    #: A remote server's transport: "http" (streamable HTTP) or "sse"; "" for a stdio server.
    transport: str = ""
    #: A remote server's HTTP headers, `${VAR}` expanded (a bearer token, an API key).
    headers: tuple[tuple[str, str], ...] = ()
    name: str = field(default="", compare=False)
    source: str = field(default="inline", compare=False)
    configured: Any = field(default=None, compare=False, hash=False)

    @property
    def env_dict(self) -> dict[str, str]:
        """The server's extra environment as a mapping."""
        return dict(self.env)


def claude_json_path(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps its user configuration: `$CLAUDE_CONFIG_DIR/.claude.json` or `~/.claude.json`."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return Path(config_dir) / CLAUDE_JSON
    home = env.get("HOME") or str(Path.home())
    return Path(home) / CLAUDE_JSON


def expand_vars(text: str, env: Mapping[str, str], *, where: str) -> str:
    """Expand `${VAR}` and `${VAR:-default}` in `text` the way Claude Code expands its MCP config.

    Args:
        text: the configured string.
        env: the variables to expand from.
        where: what the string is (for the error message), e.g. `server "git" args[1]`.

    Raises:
        RuntimeFailure: state `invalid`, when a variable has no value and no default.
    """

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise RuntimeFailure("invalid", f"{where}: ${{{name}}} is not set and has no default (${{{name}:-…}})")

    return VAR_REFERENCE.sub(replace, text)


def server_label(server: object) -> str:
    """The name notifications, states and log files use for a sensor's `mcp.server` value.

    A named server is its name. An inline one is named after its command, or, when the command is a
    launcher (`python`, `node`, `npx`, `uvx`, …), after the first argument that is not an option
    (`python -m mcp_server_git` → `mcp_server_git`, `npx -y @scope/server-x` → `server-x`); an inline
    remote one after its url's host and port (`http://127.0.0.1:8123/mcp` → `127.0.0.1:8123`).
    """
    if isinstance(server, str):
        return server
    if not isinstance(server, Mapping):
        return "inline"
    url = server.get("url")
    if isinstance(url, str) and not server.get("command"):
        # an inline remote server is named after its host (and port): `https://mcp.example/mcp` → mcp.example
        try:
            parts = urlsplit(url)
            host = parts.hostname
            port = parts.port
        except ValueError:
            return "inline"
        return (f"{host}:{port}" if port else host) if host else "inline"
    command = server.get("command")
    if not isinstance(command, str) or not command:
        return "inline"
    label = Path(command).name
    args = server.get("args")
    if _LAUNCHER.fullmatch(label) and isinstance(args, list):
        for arg in args:
            if isinstance(arg, str) and arg and not arg.startswith("-") and arg not in _LAUNCHER_VERBS:
                return arg.rstrip("/").rsplit("/", 1)[-1] or label
    return label


def describe_mcp(block: ir.McpBlock | None) -> dict[str, str]:
    """How an mcp sensor polls, as explain and the TUI say it: its server, what it asks for, and whether it
    subscribes (pure: nothing is resolved or started). An inline server is read as Claude Code's config is."""
    block = block or mcp_block({})
    server = block.server
    label = server_label(server)
    if isinstance(server, str):
        where = (f"{label!r}, looked up in ~/.claude.json (projects.<dir>.mcpServers, then mcpServers) and the "
                 "project's .mcp.json, as Claude Code does")
    elif isinstance(server, Mapping) and server.get("type", "stdio") != "stdio":
        headers = server.get("headers")
        names = ", ".join(str(name) for name in headers) if isinstance(headers, Mapping) and headers else "none"
        where = (f"{label}: {server.get('type')} at {server.get('url')}; headers: {names} (${{VAR}} expanded from the "
                 "environment when it connects; a missing or refused credential is auth_failed, never a login)")
    elif isinstance(server, Mapping):
        args = server.get("args")
        argv = [server.get("command"), *(args if isinstance(args, list) else [])]
        where = f"{label}: attend starts `{' '.join(str(a) for a in argv)}` (stdio)"
    else:
        where = "(none)"
    out = {"server": where}
    if block.resource is not None:
        out["reads"] = f"resource {block.resource} (resources/read: read-only by nature, no readOnlyHint needed)"
        out["subscribe"] = ("yes: read again as soon as the server reports the resource updated (subscriptions/listen "
                            "on protocol 2026-07-28, resources/subscribe on the 2025 revisions), no sooner than "
                            "min_interval; interval is the fallback" if block.subscribe
                            else "no: polled at its cadence")
    else:
        gate = ("allowed without readOnlyHint (allow_unannotated)" if block.allow_unannotated
                else "it must declare readOnlyHint: true")
        out["calls"] = f"tool {block.tool} ({gate})"
    return out


def fingerprint(server: object, tool: object, args: object, resource: object = None) -> str:
    """The probe record's fingerprint: a hash of the server (as configured), tool and args (or resource).

    The server enters as the sensor names it (a name, or the inline mapping before expansion), so a
    rotated token in the environment does not void a probe, but pointing the sensor elsewhere does.
    A resource sensor's URI enters too; a tool sensor's fingerprint is unchanged by it (no `resource` key).
    """
    fields: dict[str, object] = {"server": server, "tool": tool, "args": args}
    if resource is not None:
        fields["resource"] = resource
    canonical = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def resolve_server(server: object, project_dir: Path, env: Mapping[str, str]) -> ServerDefinition:
    """Resolve a sensor's `mcp.server` (a name or an inline mapping) to a stdio server definition.

    Args:
        server: the `mcp.server` value of the sensor.
        project_dir: the absolute project directory (selects `projects.<dir>` and `<dir>/.mcp.json`).
        env: the environment `${VAR}` expands from (also locates `~/.claude.json`).

    Returns:
        The expanded definition.

    Raises:
        RuntimeFailure: `invalid` (unknown name, malformed entry, unset variable) or `unsupported`
            (a remote server), with a message saying where attend looked.
    """
    if isinstance(server, Mapping):
        return _definition(server, name=server_label(server), source="inline", env=env)
    if not isinstance(server, str) or not server:
        raise RuntimeFailure("invalid", "mcp.server must be a server name or a mapping with `command`")

    claude_json = claude_json_path(env)
    mcp_json = Path(project_dir) / PROJECT_MCP_JSON
    user_doc, user_note = _read_json(claude_json)
    project_doc, project_note = _read_json(mcp_json)

    scopes = (
        (f"{claude_json} (projects.{project_dir}.mcpServers, local scope)", _local_servers(user_doc, project_dir)),
        (f"{mcp_json} (project scope)", _servers_of(project_doc)),
        (f"{claude_json} (mcpServers, user scope)", _servers_of(user_doc)),
    )
    for source, servers in scopes:
        if server in servers:
            entry = servers[server]
            if not isinstance(entry, Mapping):
                raise RuntimeFailure("invalid", f"MCP server {server!r} in {source} is not a mapping")
            if source.startswith(str(mcp_json)) and server in _disabled_project_servers(user_doc, project_dir):
                raise RuntimeFailure(
                    "refused", f"MCP server {server!r} of {mcp_json} is disabled for this project in {claude_json}"
                )
            return _definition(entry, name=server, source=source, env=env)

    looked = "; ".join(
        f"{path}{f' ({note})' if note else ''}"
        for path, note in ((claude_json, user_note), (mcp_json, project_note))
    )
    raise RuntimeFailure(
        "invalid",
        f"no MCP server named {server!r}: looked in projects.{project_dir}.mcpServers and mcpServers of "
        f"{claude_json}, and mcpServers of {mcp_json} [{looked}]",
    )


def _read_json(path: Path) -> tuple[dict[str, Any], str]:
    """A JSON file as a mapping, and a note when it could not be used (never raises)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, "missing"
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"unreadable: {reason(exc)}"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON at line {exc.lineno} column {exc.colno}"
    if not isinstance(doc, dict):
        return {}, "not a JSON object"
    return doc, ""


def _servers_of(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    servers = doc.get("mcpServers")
    return servers if isinstance(servers, Mapping) else {}


def _project_entry(doc: Mapping[str, Any], project_dir: Path) -> Mapping[str, Any]:
    projects = doc.get("projects")
    if not isinstance(projects, Mapping):
        return {}
    # Claude Code keys projects by the absolute directory; try it as given and with symlinks resolved.
    for key in (str(project_dir), os.path.realpath(project_dir)):
        entry = projects.get(key)
        if isinstance(entry, Mapping):
            return entry
    return {}


def _local_servers(doc: Mapping[str, Any], project_dir: Path) -> Mapping[str, Any]:
    return _servers_of(_project_entry(doc, project_dir))


def _disabled_project_servers(doc: Mapping[str, Any], project_dir: Path) -> set[str]:
    disabled = _project_entry(doc, project_dir).get("disabledMcpjsonServers")
    return {name for name in disabled if isinstance(name, str)} if isinstance(disabled, list) else set()


def _definition(entry: Mapping[str, Any], *, name: str, source: str, env: Mapping[str, str]) -> ServerDefinition:
    """Check one server entry's shape and expand it; remote entries are `unsupported`."""
    kind = entry.get("type")
    if isinstance(kind, str) and kind.lower() in HTTP_TYPES | SSE_TYPES:
        transport = "sse" if kind.lower() in SSE_TYPES else "http"
        return _remote_definition(entry, name=name, source=source, env=env, transport=transport)
    if (isinstance(kind, str) and kind.lower() in REMOTE_TYPES) or "url" in entry:
        raise RuntimeFailure(
            "unsupported",
            f"MCP server {name!r} ({source}) is a remote server ({kind or 'url'}); attend runs stdio servers, "
            "`type: http` (streamable HTTP) and `type: sse` ones",
        )
    if kind not in (None, "stdio"):
        raise RuntimeFailure("unsupported", f"MCP server {name!r} ({source}) has transport type {kind!r}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise RuntimeFailure("invalid", f"MCP server {name!r} ({source}) has no `command`")
    args = entry.get("args", [])
    if args is None:
        args = []
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise RuntimeFailure("invalid", f"MCP server {name!r} ({source}): `args` must be a list of strings")
    label = f"MCP server {name!r} ({source})"
    extra = _string_map(entry, "env", label)
    return ServerDefinition(
        command=expand_vars(command, env, where=f"{label} command"),
        args=tuple(expand_vars(str(a), env, where=f"{label} args[{i}]") for i, a in enumerate(args)),
        env=tuple(sorted((k, expand_vars(str(v), env, where=f"{label} env.{k}")) for k, v in extra.items())),
        name=name,
        source=source,
        configured=dict(entry),
    )


def _string_map(entry: Mapping[str, Any], key: str, label: str) -> Mapping[str, Any]:
    """A server entry's `env` or `headers`: a mapping with string keys (absent or null: empty)."""
    value = entry.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise RuntimeFailure("invalid", f"{label}: `{key}` must be a mapping of strings")
    return value


def _remote_definition(entry: Mapping[str, Any], *, name: str, source: str, env: Mapping[str, str],
                       transport: str) -> ServerDefinition:
    """A `type: http` (streamable HTTP) or `type: sse` server: its `url` and its `headers`, `${VAR}` expanded.

    A header whose variable is unset holds a missing credential: `auth_failed`, like a rejected one.
    """
    label = f"MCP server {name!r} ({source})"
    url = entry.get("url")
    if not isinstance(url, str) or not url.strip():
        raise RuntimeFailure("invalid", f"{label} is `type: {entry.get('type')}` but has no `url`")
    headers = _string_map(entry, "headers", label)
    expanded = []
    for key, value in headers.items():
        try:
            expanded.append((key, expand_vars(str(value), env, where=f"{label} headers.{key}")))
        except RuntimeFailure as missing:
            raise RuntimeFailure("auth_failed", f"{missing.message} (a missing credential)") from None
    return ServerDefinition(
        command="",
        url=expand_vars(url, env, where=f"{label} url"),
        transport=transport,
        headers=tuple(sorted(expanded)),
        name=name,
        source=source,
        configured=dict(entry),
    )


#: Seconds for a connect and for a call when `mcp.timeout` is not set (the spec's default).
DEFAULT_TIMEOUT = DEFAULT_MCP_TIMEOUT


class McpSettings:
    """A sensor's `mcp:` block, read once: server (as configured), tool and args or resource, gate override,
    timeout."""

    __slots__ = ("allow_unannotated", "args", "resource", "server", "subscribe", "timeout", "tool")

    def __init__(self, block: ir.McpBlock | None) -> None:
        block = block or mcp_block({})
        self.server: str | dict[str, Any] | None = block.server
        self.tool: str | None = block.tool
        #: The URI a resource sensor reads (`resources/read`) instead of calling a tool; None for a tool sensor.
        self.resource: str | None = block.resource
        #: Whether a resource sensor subscribes to its resource and reads it again on each update.
        self.subscribe = block.subscribe
        self.args: dict[str, Any] = dict(block.args)
        self.allow_unannotated = block.allow_unannotated
        self.timeout = block.timeout

    @property
    def label(self) -> str:
        """The server's name as notifications and states show it."""
        return server_label(self.server)

    @property
    def fingerprint(self) -> str:
        """What a probe record must have been taken with (server as configured, tool, args)."""
        return fingerprint(self.server, self.tool, self.args, self.resource)

    @property
    def target(self) -> str:
        """What a poll asks the server for, as messages show it: `tool NAME` or `resource URI`."""
        return f"resource {self.resource}" if self.resource is not None else f"tool {self.tool}"


def sensor_settings(compiled: CompiledSensor) -> McpSettings:
    """The `mcp:` block of a compiled sensor (no MCP SDK: `sensors fire` names the server with it)."""
    return McpSettings(compiled.sensor.ir.mcp)
