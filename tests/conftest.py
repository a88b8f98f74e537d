"""Fixtures shared by every test package: a temporary XDG home and a way to run the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests: CI (`.ci/run` exports HYPOTHESIS_PROFILE=ci) draws the same examples on every run and keeps no
# example database, so a clean checkout never fails on an old bug found by chance; local runs ("dev", the
# default) draw new examples each time. Every counterexample found is pinned with `@example` at its test.
# Deadlines are off in CI: a shared two-core machine makes timing a coin toss. `make test-fast` (the inner loop)
# loads "fast": a quarter of the examples, for a test's default and for the count it states
# (`max_examples=examples(N)`, tests/property_examples.py); `make test` and CI draw them all.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
hypothesis_settings.register_profile("dev", print_blob=True)
hypothesis_settings.register_profile("fast", print_blob=True, max_examples=25)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

#: Fixtures of the real Claude Code for every test package: the CLI, the plugin's build (plugin_fixtures.py),
#: and real sessions against a fake Messages API (host_rig.py).
pytest_plugins = ["plugin_fixtures", "host_rig", "pytester"]


#: Fixtures that start real daemons or real MCP servers, build the plugin's virtualenv or install npm packages:
#: a test using one is `heavy`, left out of `make test-fast` (the inner loop) and run by `make test` (CI,
#: README). `behind` stands behind the MCP test servers (tests/runtime/mcp/servers): a test using it starts
#: real MCP server processes. A test that starts one without these fixtures carries `pytest.mark.heavy`
#: itself (tests/docs: a page registering an MCP server).
HEAVY_FIXTURES = frozenset({"daemon", "claude", "checkout", "mcp_daemon", "everything", "behind", "claude_host",
                            "plugin_build"})

#: Test modules (relative to tests/) that start `attend run` or other long-lived processes themselves.
HEAVY_MODULES = frozenset({
    "plugin/test_plugin.py",
    "doctor/test_doctor.py",
    "peers/test_peers_cli.py",
    "runtime/mcp/test_mcp_daemon.py",
    "runtime/test_messages_e2e.py",
    "runtime/test_nats_peers.py",
    "runtime/test_presence_e2e.py",
    "sensors/test_keepwarm_daemon.py",
    "settings/test_settings_daemon.py",
})

TESTS = Path(__file__).resolve().parent


#: Modules whose tests take longest (the plugin's virtualenv builds, the SIGKILL rounds, the sensors tab
#: driven by its pilot): they start first, so that no long test is left alone at the end of the run.
LONGEST_FIRST = ("plugin/test_plugin.py", "runtime/test_daemon_sigkill.py", "runtime/test_sessions.py",
                 "tui/test_pilot.py", "tui/test_tab_keys.py", "tui/test_snapshots.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the heavy tests (`-m "not heavy"` is `make test-fast`) and run them first.

    pytest-xdist hands tests out in collection order, and `make test` has idle workers steal half of a busy
    one's queue (`--dist worksteal`): the long and heavy ones (seconds each) first and the light ones
    (milliseconds) after keep every worker busy to the end, with no long test left alone at the end. The
    order is the same in every worker (xdist requires it) and every run.
    """
    rank: dict[int, int] = {}
    for item in items:
        module = item.path.resolve().relative_to(TESTS).as_posix() if item.path.is_relative_to(TESTS) else ""
        fixtures = set(getattr(item, "fixturenames", ()))
        heavy = bool(fixtures & HEAVY_FIXTURES or module in HEAVY_MODULES or item.get_closest_marker("slow"))
        if heavy:
            item.add_marker(pytest.mark.heavy)
        if module in LONGEST_FIRST:
            rank[id(item)] = LONGEST_FIRST.index(module)
        else:
            rank[id(item)] = len(LONGEST_FIRST) + (0 if heavy else 1)
    items.sort(key=lambda item: rank[id(item)])  # stable: within a rank, the files' own order


@dataclass
class Home:
    """A temporary XDG home: every XDG variable and HOME point inside `root`."""

    root: Path
    config: Path
    data: Path
    state: Path
    cache: Path
    project: Path

    @property
    def user_sensors(self) -> Path:
        return self.config / "attend" / "sensors"

    @property
    def project_sensors(self) -> Path:
        return self.project / ".claude" / "attend" / "sensors"

    @property
    def config_file(self) -> Path:
        return self.config / "attend" / "config.yaml"

    @classmethod
    def create(cls, base: Path) -> Home:
        """A fresh home under `base` (base/home, and the project folder base/project)."""
        root = base / "home"
        h = cls(root=root, config=root / ".config", data=root / ".local" / "share", state=root / ".local" / "state",
                cache=root / ".cache", project=base / "project")
        for p in (h.config, h.data, h.state, h.cache, h.project):
            p.mkdir(parents=True, exist_ok=True)
        return h

    def quiet(self) -> Home:
        """Turn off every shipped sensor in the user layer, so only the test's own sensors run."""
        shipped = TESTS.parent / "src" / "attend" / "sensors.d"
        for path in sorted(shipped.glob("*.yaml")):
            if not path.name.endswith(".test.yaml"):
                self.write_user_sensor(path.stem, "spec: 1\nenabled: false\n")
        return self

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a subprocess of attend should see in this home."""
        # Nothing of the session running the tests leaks in: each test names its own sessions.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("XDG_") and k not in ("ATTEND_SESSION", "CLAUDE_CONFIG_DIR")}
        env.update(
            HOME=str(self.root),
            XDG_CONFIG_HOME=str(self.config),
            XDG_DATA_HOME=str(self.data),
            XDG_STATE_HOME=str(self.state),
            XDG_CACHE_HOME=str(self.cache),
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def write_user_sensor(self, name: str, text: str) -> Path:
        path = self.user_sensors / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def write_project_sensor(self, name: str, text: str) -> Path:
        path = self.project_sensors / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def attend(self, *args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run `attend` in this process (`attend.cli.main`) in this home and the project folder.

        The same arguments, environment, working directory, stdin and exit code as `attend_process`, without
        starting an interpreter. Tests of the process boundary itself (a hang ended by `timeout`, signals,
        a closed pipe, the console script) use `attend_process`.
        """
        return run_in_process(args, env=self.env(), cwd=self.project, input=input)

    def attend_process(self, *args: str, input: str | None = None,
                       timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run the real `attend` command (as `python -m attend`) in this home and the project folder."""
        return subprocess.run(
            [sys.executable, "-m", "attend", *args],
            cwd=self.project,
            env=self.env(),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


#: The command-line grammar by the command it was built for. `main` builds it at every call (once in a real
#: process; the per-message gettext lookups of argparse made it a quarter of an in-process command), so
#: in-process runs reuse it: a parser keeps nothing between parses.
_PARSERS: dict[str | None, Any] = {}


def _reusing(build_parser: Any) -> Any:
    """`build_parser`, building each command's parser once."""
    def parser(only: str | None = None) -> Any:
        built = _PARSERS.get(only)
        if built is None:
            built = _PARSERS[only] = build_parser(only)
        return built
    return parser


def main_reusing_parsers(argv: list[str] | tuple[str, ...]) -> int:
    """`attend.cli.main(argv)`, each command's parser built once per test process (see `_PARSERS`)."""
    import attend.cli

    build_parser = attend.cli.build_parser
    attend.cli.build_parser = _reusing(build_parser)
    try:
        return attend.cli.main(list(argv))
    finally:
        attend.cli.build_parser = build_parser


def run_in_process(args: tuple[str, ...] | list[str], *, env: dict[str, str], cwd: Path,
                   input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`attend.cli.main(args)` with this environment, working directory and stdin; stdout and stderr captured."""
    import io

    def stream(data: bytes = b"") -> io.TextIOWrapper:
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape", write_through=True)

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out, err = stream(), stream()
    sys.stdin, sys.stdout, sys.stderr = stream((input or "").encode("utf-8", "surrogateescape")), out, err
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
        try:
            code = main_reusing_parsers(args)
        except SystemExit as exit_:  # argparse: --help, --version, usage errors
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)

    def text(s: io.TextIOWrapper) -> str:
        s.flush()
        raw = s.buffer.getvalue()  # type: ignore[attr-defined]
        return raw.decode("utf-8", "replace").replace("\r\n", "\n")

    return subprocess.CompletedProcess(["attend", *args], code, text(out), text(err))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A fresh XDG home and project folder; the test process's own environment points at it too."""
    h = Home.create(tmp_path)
    for key, value in h.env().items():
        if key.startswith("XDG_") or key == "HOME":
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(h.project)
    return h


@pytest.fixture
def quiet_home(home: Home) -> Home:
    """A `home` whose user layer turns off every shipped sensor, so only a test's own sensors run."""
    return home.quiet()
