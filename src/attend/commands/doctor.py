"""`attend doctor [--json]`: what a working setup needs, one line per check with its fix (DESIGN.md,
"Sessions, Claude Code and the plugin").

Each check answers `ok`, `warn` or `fail` with a message and, unless it passed, the command or step
that fixes it. Exit 1 when any check fails; a warning (no daemon polls the project right now, a
refused project sensor) is shown but passes, so a wired machine passes outside a session too.

Checks, in order: the Python and attend versions; the store opens and its schema is current (and the
rows its readers skip); the peers files readers skip (a warning naming each); with `attend.peers.transport:
nats`, the peers server (connected, JetStream answering, sends waiting in the spool); every sensor compiles;
which session polls this project and since when, and which are attached; the Claude Code wiring (the
plugin installed and enabled, or a Stop hook running `attend drain` in a settings.json, with its three
companion hooks unless conduits is `monitor`); `attend` on PATH (after a plugin-only install, the link
that puts it there); the program
of every enabled command sensor is on PATH; the permissions the enabled sensors require (`requires:`) are
allowed in Claude Code's settings (a warning naming what `attend permissions` would add); every enabled MCP
sensor's server resolves to a program on PATH (or a remote endpoint), and none refused its credential
(`auth_failed`, in the server's words).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.errors import EXIT_FAILED
from attend.files import claude_folder
from attend.text import iso_time, json_text, printable

if TYPE_CHECKING:
    from attend.commands import JsonArgs
    from attend.runtime.sessions.status import LiveSession
    from attend.spec.loaded import LayerPaths, MergedSensor, SensorSet

__all__ = ["Check", "EXIT_FAILED", "main", "run_checks"]

#: How many names a check's message lists before it says "and N more".
SHOWN = 5
#: The two lines that install the plugin (README, "Install as a Claude Code plugin").
PLUGIN_INSTALL = "in Claude Code: `/plugin marketplace add <your attend clone>`, then `/plugin install attend@attend`"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: `status` is `ok`, `warn` or `fail`; `fix` is empty for `ok`."""

    check: str
    status: str
    message: str
    fix: str = ""

    def line(self) -> str:
        """The check as doctor prints it: one printable line (a message quotes paths, a server's words)."""
        label = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[self.status]
        return printable(f"{label} {self.check}: {self.message}" + (f"; fix: {self.fix}" if self.fix else ""),
                         one_line=True)


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def check_versions() -> Check:
    import attend

    found = sys.version_info[:3]
    text = f"Python {'.'.join(map(str, found))} ({sys.executable}), attend {attend.__version__}"
    if found < (3, 11):
        return Check("versions", "fail", text, "install Python 3.11 or newer and reinstall attend with it")
    return Check("versions", "ok", text)


def check_store(paths: LayerPaths) -> list[Check]:
    """The store opens, its schema is current, SQLite finds the file sound (`PRAGMA quick_check`), and
    the rows the readers skip as damaged (store/rows.py), each with its table and rowid."""
    import sqlite3

    from attend.runtime.store import DB_FILENAME, StoreUnavailable, open_project_store
    from attend.runtime.store.tables import SCHEMA_VERSION

    aside = f"move the state folder {paths.state_dir} aside; attend makes a new one"
    try:
        with open_project_store(paths) as store:
            db, version = store.path, store.schema_version
            problems, bad, reset = store.quick_check(), store.bad_rows(), store.reset_note()
    except StoreUnavailable as exc:
        return [Check("store", "fail", str(exc), aside)]
    except sqlite3.Error as exc:
        return [Check("store", "fail", f"cannot use the state store {paths.state_dir}: {DB_FILENAME}: {exc}", aside)]
    if version != SCHEMA_VERSION:
        return [Check("store", "fail", f"{db} has schema v{version}, this attend reads v{SCHEMA_VERSION}",
                      "run the newest attend (a newer one wrote this store)")]
    if problems:
        return [Check("store", "fail", f"{db} is damaged (PRAGMA quick_check: {_names(problems)})", aside)]
    checks = [Check("store", "ok", (f"{reset}; " if reset else "") + f"{db} opens, integrity ok, schema v{version} (current)")]
    if bad:
        checks.append(Check("store rows", "warn", f"{len(bad)} damaged row(s) skipped: {_names([str(b) for b in bad])}",
                            f"delete them (`sqlite3 {shlex.quote(str(db))} \"DELETE FROM <table> WHERE rowid = <rowid>\"`)"
                            " or move the state folder aside"))
    return checks


def check_peers(env: Mapping[str, str]) -> list[Check]:
    """The peers files readers skip (a damaged message or heartbeat, an unusable channels.yaml, a tray
    that is a symlink), each with why; nothing when every one reads."""
    from attend.peers.mailbox import Mailbox, peers_dir
    from attend.text import printable, printable_path

    mailbox = Mailbox(peers_dir(env))
    bad = mailbox.damaged()
    if not bad:
        return []
    shown = [f"{printable_path(path)} ({printable(reason, one_line=True)})" for path, reason in bad]
    return [Check("peers files", "warn", f"{len(bad)} peers file(s) skipped: {_names(shown)}",
                  f"remove them (every peers file is in {printable_path(mailbox.root)}); attend rewrites what it needs")]


def check_peers_server(env: Mapping[str, str]) -> list[Check]:
    """With `attend.peers.transport: nats`, the server: connected, JetStream answering (its stream's size),
    and the spool of sends waiting for it; nothing with the files transport."""
    from attend.peers.mailbox import Unavailable
    from attend.peers.transport import open_mailbox

    mailbox = open_mailbox(env)
    if mailbox.transport == "files":
        return []
    from attend.peers.natsbox import NatsMailbox  # loaded already: open_mailbox made one

    if not isinstance(mailbox, NatsMailbox):
        return []
    fix = ("start the server (`nats-server -js`) or set attend.peers.nats.url; `attend settings get "
           "attend.peers.nats` shows what attend uses")
    try:
        info = mailbox.link.check()
    except Unavailable as exc:
        if exc.state == "auth_failed":
            fix = "check attend.peers.nats.creds, nkey, token or user and password"
        checks = [Check("peers server", "fail", f"{exc.state}: {exc.words}", fix)]
    else:
        checks = [Check("peers server", "ok", f"connected to {info['server']}, JetStream answers: stream "
                        f"{info['stream']} holds {info['messages']} message(s), {info['bytes']} bytes")]
    waiting = mailbox.waiting()
    if waiting:
        checks.append(Check("peers spool", "warn", f"{waiting} sent message(s) wait to go out",
                            "they go out in order once the server answers: a running `attend run` publishes them, "
                            "or the next `attend peers send`"))
    return checks


def _polled(paths: LayerPaths, state: str) -> dict[str, str]:
    """The sensors whose last poll the daemon recorded in `state`, with its message: what the daemon's own
    environment found (`invalid`: a crate source it cannot import; `auth_failed`: a server that refused the
    credential, in its words), which checking here cannot see."""
    from attend.runtime.store import open_project_store
    from attend.runtime.store.sensor_status import POLL_STATE

    try:
        with open_project_store(paths) as store:
            statuses = store.statuses()
    except Exception:  # noqa: BLE001 - the store check reports a store that does not open
        return {}
    return {name: s.message for name, s in statuses.items() if s.state == state and s.state_source == POLL_STATE}


def check_sensors(sensor_set: SensorSet, polled_invalid: dict[str, str] | None = None) -> Check:
    """Every sensor compiles here, and none that does was found `invalid` by the daemon's last poll."""
    from attend.runtime.runnable import compiled_or_error, first_error, runnable

    broken, refused, good, found, crate = [], [], 0, 0, False
    for name, sensor in sorted(sensor_set.sensors.items()):
        if sensor.status == "refused":
            refused.append(name)
        elif not runnable(sensor):
            broken.append(f"{name} ({first_error(sensor)})")
        elif compiled_or_error(sensor)[0] is None:
            broken.append(f"{name} ({compiled_or_error(sensor)[1]})")
        elif sensor.enabled and name in (polled_invalid or {}):
            broken.append(f"{name} (the daemon's last poll: {(polled_invalid or {})[name]})")
            found += 1
            crate = crate or sensor.ir.kind == "crate"
        else:
            good += 1
    stray = [str(d) for d in sensor_set.diagnostics if str(d.severity) == "error"]
    if found:
        fix = ("install a crate sensor's package where the daemon runs (the plugin's own virtualenv: list it in "
               "extra-packages.txt, docs/authoring.md), then restart the daemon" if crate else
               "`attend sensors` shows each reason; an edit of the file (or a restart of the daemon) polls it again")
        return Check("sensors", "fail", f"{len(broken) + len(stray)} invalid: {_names(broken + stray)}", fix)
    if broken or stray:
        return Check("sensors", "fail", f"{len(broken) + len(stray)} do not compile: {_names(broken + stray)}",
                     "`attend compile --check` shows every problem with its position")
    if refused:
        return Check("sensors", "warn", f"{good} compile; refused (project not trusted): {_names(refused)}",
                     "`attend sensors` says how to trust the project, if you mean to")
    return Check("sensors", "ok", f"all {good} compile")


def check_sessions(project_dir: Path, env: Mapping[str, str]) -> list[Check]:
    """Which session polls the project and since when (or none); the other live sessions, each with its
    conduit; and a warning for each whose Monitor stream stopped while it lives."""
    from attend.files import run_lock_holder, run_lock_path
    from attend.runtime.sessions.handover import conduits, run_command
    from attend.runtime.sessions.status import project_sessions
    from attend.runtime.store import StoreUnavailable

    hooks: list[LiveSession] = []
    try:
        sessions = project_sessions(project_dir, env, conduits=conduits(project_dir, env))
        poller, attached, lock_pid, hooks = sessions.poller, sessions.attached, sessions.lock_pid, sessions.hooks
    except StoreUnavailable:  # the store check says why; the run lock still tells who polls
        poller, attached, lock_pid = None, [], run_lock_holder(run_lock_path(project_dir, env))
    if poller is not None:
        daemon = Check("daemon", "ok", f"session {poller.session} (pid {poller.pid}) polls {project_dir}"
                       + (f" since {iso_time(poller.since)}" if poller.since else ""))
    elif lock_pid is not None:
        since = iso_time(run_lock_path(project_dir, env).stat().st_mtime)
        daemon = Check("daemon", "ok", f"pid {lock_pid} polls {project_dir} since {since}")
    else:
        daemon = Check("daemon", "warn", f"no `attend run` polls {project_dir}",
                       "open a Claude Code session with the plugin (its monitor starts one), or run "
                       f"`attend run --project {shlex.quote(str(project_dir))}`")
    if attached:
        names = [s.named() for s in attached]
        joined = Check("sessions", "ok", f"{len(attached)} attached (each prints every notification): {_names(names)}")
    else:
        joined = Check("sessions", "ok", "no other session attached")
    checks = [daemon, joined]
    if hooks:
        names = [s.named() for s in hooks]
        checks.append(Check("sessions", "ok", f"{len(hooks)} served by their hooks alone (no attend stream): "
                                              f"{_names(names)}"))
    for live in hooks:
        if live.stream_stopped is not None:
            checks.append(Check(
                "stream", "warn", f"session {live.session}'s attend stream (pid {live.stopped_pid}) stopped at "
                                  f"{iso_time(live.stream_stopped)} while the session lives; its hooks carry its lines",
                f"a Monitor running `{run_command(project_dir, env)}` starts it again (Claude Code never restarts "
                "a plugin's monitor)"))
    return checks


#: How far back (seconds) `attend doctor` lists the recoveries `attend run` logged.
RECOVERIES_SINCE = 7 * 24 * 3600.0


def check_recoveries(project_dir: Path, env: Mapping[str, str]) -> Check:
    """What `attend run` recovered from in place lately (its run log; DESIGN.md, "Delivery": Staying up)."""
    import time

    from attend.runtime.sessions.runlog import RECOVERED, log_path, read_log

    lines = [(when, pid, text) for when, pid, text in read_log(log_path(project_dir, env),
                                                               since=time.time() - RECOVERIES_SINCE)
             if RECOVERED in text]
    if not lines:
        return Check("recoveries", "ok", "attend run recovered from nothing in the last 7 days")
    shown = "; ".join(f"{iso_time(when)} pid {pid}: {text}" for when, pid, text in lines[-5:])
    return Check("recoveries", "warn", f"attend run recovered in place {len(lines)} time(s) in the last 7 days: {shown}",
                 f"see the run log {log_path(project_dir, env)} for what led to it")


def _read_json(path: Path) -> Any:  # untrusted: read with isinstance checks (a bad shape fails the check)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


#: The hook events `attend drain --format hook` answers (docs/claude-code.md, section 2); without a plugin
#: all four are wired by hand unless `attend.delivery.conduits` is `monitor` (then the Stop hook alone).
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop")


def _hook_commands(settings: Any, event: str) -> Iterable[str]:
    """The commands a settings.json document's `hooks` run on `event`."""
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        for hook in (group.get("hooks") if isinstance(group, dict) else None) or []:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                yield hook["command"]


def check_claude_code(project_dir: Path, env: Mapping[str, str]) -> Check:
    home = claude_folder(env)
    settings_files = [home / "settings.json", project_dir / ".claude" / "settings.json",
                      project_dir / ".claude" / "settings.local.json"]
    settings = {path: _read_json(path) for path in settings_files}
    installed = _read_json(home / "plugins" / "installed_plugins.json")
    plugins = installed.get("plugins") if isinstance(installed, dict) else None
    ids = sorted(k for k in (plugins or {}) if k.split("@")[0] == "attend")
    for plugin_id in ids:
        enabled_in = [p for p, doc in settings.items()
                      if isinstance(doc, dict) and (doc.get("enabledPlugins") or {}).get(plugin_id) is True]
        if enabled_in:
            return Check("claude-code", "ok", f"plugin {plugin_id} installed and enabled ({enabled_in[0]})")
    def drains(doc: Any, event: str) -> bool:
        return any("attend" in c and "drain" in c for c in _hook_commands(doc, event))

    for path, doc in settings.items():
        if drains(doc, "Stop"):
            missing = [e for e in HOOK_EVENTS if not any(drains(d, e) for d in settings.values())]
            from attend.runtime.sessions.handover import conduits

            if missing and conduits(project_dir, env) != "monitor":
                return Check("claude-code", "warn",
                             f"Stop hook running `attend drain` in {path}, but none for {', '.join(missing)}: while "
                             "a session's Monitor stream is not live its lines wait for the agent to stop, and no "
                             "headless poller is started",
                             f"add the {', '.join(missing)} hook(s) of docs/claude-code.md (section 2), or "
                             "`attend settings set attend.delivery.conduits monitor` if every session runs the "
                             "Monitor")
            return Check("claude-code", "ok", f"Stop hook running `attend drain` in {path}")
    if ids:
        return Check("claude-code", "fail", f"plugin {ids[0]} is installed but not enabled",
                     f"in Claude Code: `/plugin enable {ids[0]}`")
    return Check("claude-code", "fail",
                 f"neither the attend plugin nor a Stop hook running `attend drain` found under {home} or "
                 f"{project_dir / '.claude'}", PLUGIN_INSTALL + " (or wire it by hand: README)")


def check_path(env: Mapping[str, str]) -> Check:
    """`attend` on PATH, for a terminal. A plugin-only install runs attend by the launcher's full path, so
    it is not: the fix links the command the launcher writes beside its virtualenv (plugin/bin/attend,
    write_command), which runs the same virtualenv and survives plugin updates."""
    path = env.get("PATH", "")
    found = shutil.which("attend", path=path)
    if found:
        return Check("path", "ok", f"attend on PATH: {found}")
    venv = env.get("ATTEND_PLUGIN_VENV")
    if not venv:
        here = Path(sys.executable).parent / "attend"
        fix = (f"`ln -s {shlex.quote(str(here))} ~/.local/bin/attend`" if here.exists() else
               "`pipx install <your attend clone>`")
        return Check("path", "warn", "`attend` is not on PATH", fix)
    command = Path(venv).parent / "bin" / "attend"
    home_bin = Path(env.get("HOME") or Path.home()) / ".local" / "bin"
    fix = (f"`mkdir -p {shlex.quote(str(home_bin))} && ln -sf {shlex.quote(str(command))} "
           f"{shlex.quote(str(home_bin / 'attend'))}`")
    if str(home_bin) not in path.split(os.pathsep):
        fix += f", and put {home_bin} on PATH"
    if not command.exists():
        fix = f"delete {venv} (the plugin's next command builds it again and writes {command}), then {fix}"
    return Check("path", "warn", "`attend` is not on PATH (the Claude Code plugin runs it by its full path)", fix)


def _enabled(sensor_set: SensorSet, kind: str) -> list[MergedSensor]:
    from attend.runtime.runnable import runnable

    return [s for _, s in sorted(sensor_set.sensors.items())
            if runnable(s) and s.ir.kind == kind and s.ir.enabled]


def _program_found(program: str, cwd: Path, path: str | None) -> bool:
    if os.sep in program:
        target = cwd / program
        return target.is_file() and os.access(target, os.X_OK)
    return shutil.which(program, path=path) is not None


def check_commands(sensor_set: SensorSet, project_dir: Path, env: Mapping[str, str]) -> Check:
    sensors = _enabled(sensor_set, "command")
    missing: list[str] = []
    off: list[str] = []
    for sensor in sensors:
        command = sensor.ir.command
        if command is None or not command.argv:
            continue
        argv = command.argv
        path = {**env, **command.env}.get("PATH")
        if not _program_found(argv[0], project_dir / command.cwd, path):
            missing.append(f"{sensor.name} needs `{argv[0]}`")
            off.append(f"`attend settings set attend.sensors.{sensor.name}.enabled false`")
    if missing:
        return Check("commands", "fail", f"not on PATH: {_names(missing)}",
                     f"install the program, or turn the sensor off: {_names(off)}")
    return Check("commands", "ok", f"the programs of all {len(sensors)} enabled command sensors are on PATH")


def check_permissions(sensor_set: SensorSet, project_dir: Path, env: Mapping[str, str]) -> Check:
    """The permissions the enabled sensors require (`requires:`) against Claude Code's rules (`attend
    permissions`): a warning, since attend polls without them; the agent is asked each time it acts."""
    from attend.commands.permissions import sensor_requirements
    from attend.settings.permissions import audit

    found = audit(sensor_requirements(sensor_set), project_dir, env)
    unread = f"; not read: {_names([str(p) for p, _ in found.unreadable])}" if found.unreadable else ""
    if found.blocked:
        return Check("permissions", "warn", "refused by a deny or ask rule: " + _names(
            [f"{f.rule} ({f.list} rule {f.by} in {f.file})" for f in found.blocked]) + unread,
            "see `attend permissions`; remove the rule if the sensors' agent should act on their news")
    if found.missing:
        return Check("permissions", "warn", "not allowed in Claude Code's settings: " + _names(
            [f"{f.rule} (for {', '.join(f.sensors)})" for f in found.missing]) + unread,
            "`attend permissions` prints the lines to add to permissions.allow")
    needed = len(found.allowed)
    if found.unreadable:
        return Check("permissions", "warn", f"{needed} required permission(s) allowed{unread}",
                     "fix the file's JSON: Claude Code cannot read it either")
    if not needed:
        return Check("permissions", "ok", "no enabled sensor requires a permission")
    return Check("permissions", "ok", f"all {needed} permission(s) the enabled sensors require are allowed")


#: Seconds `doctor` waits for a remote MCP server's host to accept a connection.
REACH_TIMEOUT = 2.0


def _unreachable(url: str) -> str:
    """Why a TCP connection to `url`'s host and port fails within `REACH_TIMEOUT` ("" when it opens): a
    bounded reachability check, no HTTP request and no MCP session."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"a url that does not read ({exc})"
    if not host:
        return "a url without a host"
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT).close()
    except TimeoutError:
        return f"no answer within {REACH_TIMEOUT:g} s"
    except ConnectionRefusedError:
        return "connection refused"
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    return ""


def _probed(paths: LayerPaths, names: Iterable[str]) -> set[str]:
    """Which of `names` have an MCP probe record in the store (none when it does not open)."""
    from attend.runtime.store import open_project_store

    try:
        with open_project_store(paths) as store:
            return {name for name in names if store.get_probe(name) is not None}
    except Exception:  # noqa: BLE001 - the store check reports a store that does not open
        return set()


def check_mcp(sensor_set: SensorSet, project_dir: Path, env: Mapping[str, str],
              polled_auth_failed: dict[str, str] | None = None,
              probed: Callable[[Iterable[str]], set[str]] | None = None) -> list[Check]:
    """Every enabled MCP sensor's server resolves (a stdio one to a program on PATH); a check of its own,
    no server refused its credential (`auth_failed`: a header's variable unset here, or the daemon's last poll
    refused, in the server's words); and another, every remote (http, sse) server's host accepts a connection
    within `REACH_TIMEOUT` (a sensor whose server cannot be reached is never probed, so never polled)."""
    from attend.errors import RuntimeFailure
    from attend.runtime.mcp.servers import resolve_server

    sensors = _enabled(sensor_set, "mcp")
    problems: list[str] = []
    refused: list[str] = []
    remote: list[tuple[str, str]] = []
    for sensor in sensors:
        try:
            server = resolve_server(sensor.ir.mcp.server if sensor.ir.mcp is not None else None, project_dir, env)
        except RuntimeFailure as exc:
            (refused if exc.state == "auth_failed" else problems).append(f"{sensor.name}: {exc.message}")
            continue
        if server.url:
            remote.append((sensor.name, server.url))
            if sensor.name in (polled_auth_failed or {}):
                refused.append(f"{sensor.name} (the daemon's last poll): {(polled_auth_failed or {})[sensor.name]}")
        elif not _program_found(server.command, project_dir, {**env, **server.env_dict}.get("PATH")):
            problems.append(f"{sensor.name}: server {server.name or server.command} needs `{server.command}`, not on PATH")
    checks = []
    if problems:
        checks.append(Check("mcp", "fail", _names(problems),
                            "add the server to Claude Code (`claude mcp add`) or the sensor's `mcp.server`, and install "
                            "its program; docs/mcp.md"))
    else:
        checks.append(Check("mcp", "ok", f"the servers of all {len(sensors)} enabled MCP sensors resolve" if sensors
                            else "no MCP sensor is enabled"))
    if refused:
        checks.append(Check("mcp auth", "fail", f"auth_failed: {_names(refused)}",
                            "renew the credential the server's `headers` carry (set the variable they name, or "
                            "replace the token) — attend never starts a login; docs/mcp.md"))
    reasons: dict[str, str] = {}
    for _, url in remote:
        if url not in reasons:
            reasons[url] = _unreachable(url)
    down = [(name, url) for name, url in remote if reasons[url]]
    if down:
        with_probe = probed([name for name, _ in down]) if probed is not None else set()
        shown = [f"{name}: {reasons[url]} at {url}; "
                 + ("probed before; its polls fail while it does not answer" if name in with_probe else "not probed, so never polled")
                 for name, url in down]
        checks.append(Check("mcp reach", "warn", _names(shown),
                            "start the server or correct its `url`; the sensor probes once it answers; docs/mcp.md"))
    return checks


def run_checks(project_dir: Path, env: Mapping[str, str]) -> list[Check]:
    """Every check for `project_dir`, in report order; a check that breaks is reported, never raised."""
    from attend.spec import layer_paths, load_set

    paths = layer_paths(project_dir, env)
    loaded: dict[str, SensorSet] = {}

    def sensor_set() -> SensorSet:
        if "set" not in loaded:
            loaded["set"] = load_set(project_dir, env)
        return loaded["set"]

    steps: list[tuple[str, Callable[[], Check | list[Check]]]] = [
        ("versions", check_versions),
        ("store", lambda: check_store(paths)),
        ("peers files", lambda: check_peers(env)),
        ("peers server", lambda: check_peers_server(env)),
        ("sensors", lambda: check_sensors(sensor_set(), _polled(paths, "invalid"))),
        ("daemon", lambda: check_sessions(project_dir, env)),
        ("recoveries", lambda: check_recoveries(project_dir, env)),
        ("claude-code", lambda: check_claude_code(project_dir, env)),
        ("path", lambda: check_path(env)),
        ("commands", lambda: check_commands(sensor_set(), project_dir, env)),
        ("permissions", lambda: check_permissions(sensor_set(), project_dir, env)),
        ("mcp", lambda: check_mcp(sensor_set(), project_dir, env, _polled(paths, "auth_failed"),
                                  lambda names: _probed(paths, names))),
    ]
    out: list[Check] = []
    for name, step in steps:
        try:
            result = step()
            out.extend(result if isinstance(result, list) else [result])
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            out.append(Check(name, "fail", f"the check itself failed: {type(exc).__name__}: {exc}",
                             "report this as a bug in attend"))
    return out


def main(args: JsonArgs) -> int:
    """`attend doctor [--json]`."""
    checks = run_checks(Path(args.project_dir), os.environ)
    ok = all(c.status != "fail" for c in checks)
    if getattr(args, "json", False):
        print(json_text({"ok": ok, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for c in checks:
            print(c.line())
    return 0 if ok else EXIT_FAILED
