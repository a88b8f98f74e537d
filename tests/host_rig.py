"""The real host in the suite: the real Claude Code CLI (claude_rig.py), with attend installed as its plugin the
way README says, in real sessions against a local fake Messages API (fake_api.py).

Fixtures (registered for every test package by tests/conftest.py; a test using `claude_host` is heavy):

    def test_x(claude_host):                  # one user's machine: a temporary home, the plugin installed
        host = claude_host
        host.api                              # the FakeAPI every session here talks to
        host.home                             # tests/conftest.Home: attend's XDG folders, HOME, the project
        done = host.headless("hi")            # `claude -p hi` in host.home.project, to its end: the hook path
        proc = host.start_headless("hi")      # the same, started (a Popen): act while it runs
        with host.session() as s:             # an interactive `claude` in tmux: the plugin's Monitor arms
            s.wait_ready()                    # Claude Code idle at its prompt, attend's monitor stream live
            s.doorbell_armed()                # attend's doorbell waits for it (after a first turn's stop)
            host.home.attend("sensors", "fire", ...)   # anything that makes a line
            host.api.wait_for("the line", session=s.id)  # the request that carried it
            s.type("a prompt")                # a user's prompt, typed and entered
            s.wait_idle()                     # the turn ended: Claude Code waits for the user again
            s.screen()                        # the terminal as the user sees it (for failure messages)
            host.caught_up(s)                 # a fresh marker line reached s's requests: all before it did too
        host.api.reply(bash("attend peers send x"), text("done"), session=s.id)  # script the model (fake_api.py)
        host.api.of(s.id)                     # the requests of one session, in order; .is_turn, .text, .count()
        polled(host.home, "items")            # a sensor's poll read a result (its baseline is taken)

`host.project(name)` makes another project folder Claude Code trusts. Every session runs with the home's
XDG variables, so attend's daemons, journal and store are the test's own; when the test ends, every process
started with that home (Claude Code, its monitor, attend's daemons) is ended by its id.

Permissions: `Bash` is allowed in the user's settings (`claude -p` and the sessions run tool calls without
asking; `--dangerously-skip-permissions` is refused to root). Onboarding, the trust dialog and the API-key
question are pre-answered in ~/.claude.json. `attend` on the sessions' PATH is the installed plugin's launcher.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from claude_rig import claude_env, copy_checkout, path_without_attend
from fake_api import FakeAPI, Request
from pip_rig import pip_env
from waiting import PATIENCE, wait_until

#: The fake key every session sends (Claude Code asks once whether to use a key it finds: answered here).
API_KEY = "sk-ant-api03-attend-test-fake-key-000000000000000000000000000AA"

#: The statuses Claude Code's session record (~/.claude/sessions/<pid>.json) has while it waits for the user.
IDLE = frozenset({"idle", "shell"})

#: The rig's marker sensor (`ClaudeHost.caught_up`), and the seconds after which a marker line that reached no
#: request is fired again.
MARKER = "rig-marker"
MARKER_RETRY = 8.0
_markers = itertools.count(1)

#: The terminal an interactive session draws in.
COLUMNS, ROWS = 200, 50


@dataclass(frozen=True)
class InstalledPlugin:
    """README's plugin install done once per test run (per xdist worker): `~/.claude` as Claude Code left it."""

    dot_claude: Path
    root: Path  # the installed plugin's folder (Claude Code's plugin cache)


def install_plugin(claude: Path, base: Path) -> InstalledPlugin:
    """`claude plugin marketplace add <clone>` and `claude plugin install attend@attend` (README's install),
    into base/home, from a copy of the repository as a clone has it (base/attend-checkout)."""
    checkout = copy_checkout(base / "attend-checkout")
    home = base / "home"
    home.mkdir()
    env = claude_env(home)
    for argv in (["plugin", "marketplace", "add", str(checkout)], ["plugin", "install", "attend@attend"]):
        done = subprocess.run([str(claude), *argv], capture_output=True, text=True, timeout=PATIENCE * 4,
                              env=env, cwd=home)
        if done.returncode != 0:
            raise RuntimeError(f"claude {' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    root = Path(installed["plugins"]["attend@attend"][0]["installPath"])
    return InstalledPlugin(dot_claude=home / ".claude", root=root)


@pytest.fixture(scope="session")
def installed_plugin(claude: Path, tmp_path_factory: pytest.TempPathFactory) -> InstalledPlugin:
    """README's plugin install, once per test run (per xdist worker)."""
    return install_plugin(claude, tmp_path_factory.mktemp("host-install"))


@dataclass
class ClaudeHost:
    """One user's machine with Claude Code and the attend plugin; see the module docstring."""

    claude: Path
    api: FakeAPI
    home: Any  # tests/conftest.Home
    plugin: InstalledPlugin
    wheels: Path
    sessions: list[Session] = field(default_factory=list)

    @classmethod
    def set_up(cls, claude: Path, api: FakeAPI, home: Any, plugin: InstalledPlugin, build: Any,
               wheels: Path) -> ClaudeHost:
        """`home` made a user machine with the attend plugin installed (README's install, `plugin`) and set up
        (`build`, the run's one virtualenv build, linked in), Claude Code's first-run questions answered,
        `Bash` allowed, and `api` as the Messages API."""
        if build.returncode != 0:
            raise RuntimeError(f"the plugin's build failed:\n{build.stderr}")
        dot_claude = home.root / ".claude"
        shutil.copytree(plugin.dot_claude, dot_claude, symlinks=True)
        # The plugin's one virtualenv, in its data folder, where the hooks and the monitor (which names it on its
        # command line) look: the run's one build, hard-linked in.
        data = dot_claude / "plugins" / "data" / "attend-attend"
        build.copy_to(data)
        settings_path = dot_claude / "settings.json"
        settings = json.loads(settings_path.read_text()) if settings_path.exists() else {}
        settings["permissions"] = {"allow": ["Bash"]}
        settings["disableAutoMode"] = "disable"  # no auto mode: no question about it, no classifier requests
        settings_path.write_text(json.dumps(settings, indent=2))
        (home.root / "bin").mkdir()
        launcher = home.root / "bin" / "attend"
        # `attend` for the agent's Bash and the test, as the link `attend doctor` states runs it: the launcher with
        # the plugin's data folder (a Bash tool's environment has no CLAUDE_PLUGIN_DATA)
        launcher.write_text(f'#!/bin/sh\nexec {_quote(str(plugin.root / "bin" / "attend"))} '
                            f'--plugin-data {_quote(str(data))} "$@"\n')
        launcher.chmod(0o755)
        host = cls(claude=claude, api=api, home=home, plugin=plugin, wheels=wheels)
        state = {
            "hasCompletedOnboarding": True, "lastOnboardingVersion": "2.1.328", "theme": "dark",
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            "hasResetAutoModeOptInForDefaultOffer": True,
        }
        host.claude_json.write_text(json.dumps(state, indent=2))
        host.trust(home.project)
        return host

    @property
    def claude_json(self) -> Path:
        return self.home.root / ".claude.json"

    def project(self, name: str) -> Path:
        """A new project folder beside the home's, trusted by Claude Code."""
        folder = self.home.project.parent / name
        folder.mkdir(parents=True, exist_ok=True)
        self.trust(folder)
        return folder

    def trust(self, folder: Path) -> None:
        """Answer Claude Code's trust dialog and project onboarding for `folder` in ~/.claude.json."""
        state = json.loads(self.claude_json.read_text()) if self.claude_json.exists() else {}
        state.setdefault("projects", {})[str(folder)] = {
            "hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": [],
            "projectOnboardingSeenCount": 1,
        }
        self.claude_json.write_text(json.dumps(state, indent=2))

    def env(self, **extra: str) -> dict[str, str]:
        """The environment Claude Code runs with: the home's (HOME, XDG_*), the fake API, no network chatter,
        `attend` on PATH as the plugin's launcher, and pip pointed at the tests' wheelhouse."""
        base = self.home.env()
        env = claude_env(self.home.root)
        env.update({k: v for k, v in base.items() if k.startswith("XDG_")})
        env.update(pip_env(self.wheels))
        env.update(
            ANTHROPIC_BASE_URL=self.api.url,
            ANTHROPIC_API_KEY=API_KEY,
            PATH=f"{self.home.root / 'bin'}{os.pathsep}{path_without_attend()}",
            TERM="xterm-256color",
        )
        for name in ("ATTEND_SESSION", "TMUX", "TMUX_PANE"):
            env.pop(name, None)
        env.update(extra)
        return env

    def headless(self, prompt: str, *args: str, project: Path | None = None,
                 timeout: float = PATIENCE * 4) -> subprocess.CompletedProcess[str]:
        """`claude -p PROMPT ARGS...` in `project` (the home's), to its end: one headless run, the hooks as
        its conduit (plugin monitors do not arm under -p)."""
        with self.start_headless(prompt, *args, project=project) as proc:
            out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def start_headless(self, prompt: str, *args: str, project: Path | None = None) -> subprocess.Popen[str]:
        """`claude -p PROMPT ARGS...` started (stdout and stderr piped): for a test that acts while it runs."""
        return subprocess.Popen([str(self.claude), "-p", prompt, *args], cwd=project or self.home.project,
                                env=self.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    @contextlib.contextmanager
    def session(self, *args: str, project: Path | None = None) -> Iterator[Session]:
        """An interactive `claude ARGS...` in its own tmux server, in `project` (the home's); ended on exit."""
        session = Session.start(self, project or self.home.project, args)
        self.sessions.append(session)
        try:
            yield session
        finally:
            session.close()

    def caught_up(self, session: Session, timeout: float = PATIENCE) -> Request:
        """The request of `session` that carried a fresh marker line: everything made before it reached the
        session's Monitor stream and Claude Code (the explicit signal a negative waits for).

        The marker is a test fire of the rig's own sensor `rig-marker` (written into the user layer on first
        use). Claude Code sometimes drops a Monitor line that reaches it just as a turn ends (seen with
        2.1.328, docs/claude-code.md), so a marker that reached no request within `MARKER_RETRY` seconds is
        fired again, until `timeout`."""
        if not (self.home.user_sensors / f"{MARKER}.yaml").exists():
            self.home.write_user_sensor(MARKER, json.dumps({
                "spec": 1, "name": MARKER, "kind": "command", "lane": "event", "interval": "1h", "threshold": 0,
                "command": {"argv": ["echo", "[]"]},
                "triggers": {"new": {"path": "$[*]", "key": "id", "on": "added", "magnitude": 3,
                                     "description": "{id}"}},
            }))
        deadline = time.monotonic() + timeout
        while True:
            token = f"{MARKER}-{next(_markers)}"
            done = self.home.attend("sensors", "fire", MARKER, "--input", "-", input=json.dumps([{"id": token}]))
            assert done.returncode == 0, done.stderr
            try:
                return self.api.wait_for(token, session=session.id,
                                         timeout=min(MARKER_RETRY, max(deadline - time.monotonic(), 0.1)))
            except AssertionError:
                if time.monotonic() >= deadline:
                    raise

    def close(self) -> None:
        for session in self.sessions:
            session.close()
        end_processes_of(self.home.root)


def processes_of(home: Path) -> list[int]:
    """The ids of the processes running with HOME=`home` (what this test started there), this one excepted."""
    wanted = f"HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def end_processes_of(home: Path) -> None:
    """End, by id, every process started with HOME=`home`: SIGTERM, then SIGKILL for what outlives PATIENCE."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = processes_of(home)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        try:
            wait_until(lambda: not processes_of(home), timeout=PATIENCE / 3, what=f"the processes of {home} to end")
            return
        except AssertionError:
            continue


def polls(home: Any, sensor: str) -> list[dict[str, Any]]:
    """Every poll of `sensor` attend keeps, newest first (`attend sensors history NAME --all --json`)."""
    done = home.attend("sensors", "history", sensor, "--all", "--json")
    return list(json.loads(done.stdout)["history"]) if done.returncode == 0 else []


def polled(home: Any, sensor: str, session: str | None = None) -> bool:
    """A poll of `sensor` (for `session`, of a `scope: session` sensor) read a result: its baseline is taken."""
    return any(p["state"] == "ok" and (session is None or p.get("session") == session) for p in polls(home, sensor))


@dataclass
class Session:
    """An interactive Claude Code session in a tmux server of its own (see the module docstring)."""

    host: ClaudeHost
    project: Path
    socket: Path
    pid: int
    closed: bool = False

    @classmethod
    def start(cls, host: ClaudeHost, project: Path, args: tuple[str, ...]) -> Session:
        socket = Path(tempfile.mkdtemp(prefix="rig-tmux-")) / "s"  # short: a socket path is at most 107 bytes
        argv = " ".join(_quote(a) for a in (str(host.claude), *args))
        subprocess.run(["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-x", str(COLUMNS),
                        "-y", str(ROWS), "-c", str(project), f"exec {argv}"],
                       env=host.env(), check=True, capture_output=True, text=True, timeout=PATIENCE)
        pid = int(_tmux(socket, "display-message", "-p", "#{pane_pid}").strip())
        return cls(host=host, project=project, socket=socket, pid=pid)

    @property
    def record(self) -> dict[str, Any]:
        """Claude Code's own record of this session (~/.claude/sessions/<pid>.json); {} before it writes one."""
        path = self.host.home.root / ".claude" / "sessions" / f"{self.pid}.json"
        try:
            return dict(json.loads(path.read_text()))
        except (OSError, ValueError):
            return {}

    @property
    def id(self) -> str:
        """Claude Code's session id (waits for its record)."""
        wait_until(lambda: self.record.get("sessionId"), what=f"Claude Code's record of session pid {self.pid}")
        return str(self.record["sessionId"])

    def idle(self) -> bool:
        """Claude Code says the session waits for the user: its record's status is `idle`, or `shell` (idle
        with a background shell running, as the plugin's monitor is), not `busy` or `waiting` (a dialog)."""
        return self.record.get("status") in IDLE

    def doorbell_armed(self) -> bool:
        """attend's doorbell (the plugin's asyncRewake Stop hook) waits for this session: it holds the session's
        doorbell lock (runtime/sessions/doorbell.py). Armed when the agent stops, so after a first turn."""
        from attend.files import doorbell_lock_path, project_hash, run_lock_holder, state_folder

        if not self.record.get("sessionId"):
            return False
        path = doorbell_lock_path(state_folder(self.host.home.env()), project_hash(self.project), self.id)
        return run_lock_holder(path) is not None

    def monitor_live(self) -> bool:
        """attend's Monitor stream of this session is live: an `attend run` under this Claude Code has attached
        to the project's store as this session (from then on it prints every new journal row for it)."""
        from attend.runtime.sessions.status import project_sessions

        if not self.record.get("sessionId"):
            return False
        live = project_sessions(self.project, self.host.home.env())
        mine = {s.pid for s in [*([live.poller] if live.poller else []), *live.attached] if s.session == self.id}
        return bool(mine & set(_descendants(self.pid)))

    def wait_ready(self) -> None:
        """Wait until the session is idle at its prompt and the plugin's monitor (`attend run`) is live."""
        try:
            wait_until(lambda: self.idle() and self.monitor_live(), what="an idle session with attend's monitor")
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- screen ---\n{self.screen()}") from None

    def wait_idle(self, since: float = 0.0) -> None:
        """Wait until Claude Code waits for the user again (a turn ended), by a status it wrote at `since`
        (a `time.time()`) or later: a status written before a request came cannot say that turn ended.
        A Monitor line that reaches Claude Code just as a turn ends may be dropped (seen): a test that needs
        a line through should not make it at that moment, or use `ClaudeHost.caught_up`'s retry."""
        def idle_since() -> bool:
            return self.idle() and self.record.get("statusUpdatedAt", 0) / 1000 >= since

        try:
            wait_until(idle_since, what=f"session {self.pid} to be idle")
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- screen ---\n{self.screen()}") from None

    def type(self, text: str) -> None:
        """Type `text` at the prompt and press Enter."""
        _tmux(self.socket, "send-keys", "-l", text)
        _tmux(self.socket, "send-keys", "Enter")

    def screen(self) -> str:
        """The terminal's visible text."""
        try:
            return _tmux(self.socket, "capture-pane", "-p")
        except subprocess.CalledProcessError as e:
            return f"(no screen: {e.stderr.strip()})"

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            _tmux(self.socket, "kill-server")
        shutil.rmtree(self.socket.parent, ignore_errors=True)


def _tmux(socket: Path, *args: str) -> str:
    done = subprocess.run(["tmux", "-S", str(socket), *args], capture_output=True, text=True, timeout=PATIENCE,
                          check=True)
    return done.stdout


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def _descendants(root: int) -> list[int]:
    """The live processes below `root` (children's children included)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.fixture
def fake_api() -> Iterator[FakeAPI]:
    """A fake Messages API on a free local port, for this test; the test fails if answering a request failed
    (a reply's `before` raised: `FakeAPI.failures`)."""
    with FakeAPI() as api:
        yield api
    assert not api.failures, "the fake Messages API failed to answer:\n" + "\n".join(api.failures)


@pytest.fixture
def claude_host(claude: Path, fake_api: FakeAPI, home: Any, installed_plugin: InstalledPlugin,
                plugin_build: Any, wheels: Path) -> Iterator[ClaudeHost]:
    """This test's user machine (`ClaudeHost.set_up` in `home`); every process started in it is ended afterwards."""
    host = ClaudeHost.set_up(claude, fake_api, home, installed_plugin, plugin_build, wheels)
    try:
        yield host
    finally:
        host.close()
