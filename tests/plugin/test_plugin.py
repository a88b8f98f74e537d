"""The repository is a Claude Code plugin and its own marketplace (DESIGN.md, "Sessions, Claude Code and
the plugin"), checked with the real Claude Code CLI: validate, add the marketplace, install, list; then
the installed plugin's monitor and Stop hook run exactly as Claude Code runs them, with no attend on PATH.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
from claude_rig import REPO, claude_env

from waiting import PATIENCE

#: Seconds to wait for the first run of bin/attend (it builds its virtualenv) plus the daemon's start.
FIRST_RUN = 300.0
#: Seconds to wait for something a running daemon does "within about a second" on a busy machine.


#: What the plugin is made of (plugin/ links to each): its manifest, launcher, hooks, monitor, skill, and
#: what the launcher's pip install reads.
PLUGIN_PARTS = (".claude-plugin", "README.md", "bin", "hooks", "monitors", "pyproject.toml", "skills", "src")


def manifest(name: str) -> dict:
    return json.loads((REPO / ".claude-plugin" / name).read_text())


def package() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_the_plugin_version_is_the_package_version():
    plugin = manifest("plugin.json")
    assert plugin["name"] == "attend"
    assert plugin["version"] == package()["version"]
    assert plugin["license"] == package()["license"]
    assert plugin["description"] and plugin["author"]["name"] and plugin["homepage"].startswith("https://")


def test_the_marketplace_lists_the_repository_itself_as_the_attend_plugin():
    market = manifest("marketplace.json")
    assert market["metadata"]["description"]
    (entry,) = market["plugins"]
    assert (entry["name"], entry["source"]) == ("attend", "./plugin")
    # plugin/ links to the parts of the repository the plugin is made of, and to nothing else: Claude Code
    # copies a directory plugin whole (it reads no .gitignore), so a clone's .venv stays out of its cache
    links = {p.name: os.readlink(p) for p in (REPO / "plugin").iterdir()}
    assert links == {name: f"../{name}" for name in PLUGIN_PARTS}


def test_every_plugin_command_calls_attend_through_the_plugin_launcher():
    monitors = json.loads((REPO / "monitors" / "monitors.json").read_text())
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    commands = [m["command"] for m in monitors] + [h["command"] for g in hooks["Stop"] for h in g["hooks"]]
    assert len(commands) == 2
    for command in commands:
        assert command.startswith('"${CLAUDE_PLUGIN_ROOT}/bin/attend" ')
        assert '--project "${CLAUDE_PROJECT_DIR}"' in command
    assert os.access(REPO / "bin" / "attend", os.X_OK)


def as_installed(root: Path, dest: Path) -> Path:
    """The plugin of the marketplace at `root` as Claude Code installs it: plugin/ with its links followed."""
    return Path(shutil.copytree(root / "plugin", dest, symlinks=False,
                                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")))


def test_claude_plugin_validate_strict_passes(claude, tmp_path):
    # the plugin as installed, strictly; the marketplace, whose only warnings are plugin/'s links (the
    # validator follows none; install dereferences those that stay inside the marketplace)
    plugin = as_installed(REPO, tmp_path / "installed")
    done = subprocess.run([str(claude), "plugin", "validate", "--strict", str(plugin)], capture_output=True,
                          text=True, timeout=120, env=claude_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
    market = subprocess.run([str(claude), "plugin", "validate", str(REPO)], capture_output=True,
                            text=True, timeout=120, env=claude_env(tmp_path))
    assert market.returncode == 0, market.stdout + market.stderr
    assert "Validation passed" in market.stdout


def test_claude_plugin_validate_strict_refuses_a_misspelled_hook_event(claude, checkout, tmp_path):
    # The check above can fail: the same validator refuses the hooks file with an unknown event.
    hooks = checkout / "hooks" / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"Stop"', '"Stopp"'))
    plugin = as_installed(checkout, tmp_path / "installed")
    done = subprocess.run([str(claude), "plugin", "validate", "--strict", str(plugin)], capture_output=True,
                          text=True, timeout=120, env=claude_env(tmp_path))
    assert done.returncode == 1
    assert "Validation failed" in done.stdout + done.stderr


def launcher_root(tmp_path: Path, pyproject: str) -> Path:
    """A plugin root holding only bin/attend and the given pyproject.toml."""
    root = tmp_path / "plugin"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(REPO / "bin" / "attend", root / "bin" / "attend")
    (root / "pyproject.toml").write_text(pyproject)
    return root


def run_launcher(root: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "XDG_", "ATTEND_"))}
    base.update(HOME=str(tmp_path), CLAUDE_PLUGIN_DATA=str(tmp_path / "data"), **env)
    return subprocess.run([sys.executable, str(root / "bin" / "attend"), "--version"], capture_output=True,
                          text=True, timeout=120, env=base)


def test_the_launcher_refuses_a_python_older_than_3_11_in_one_line(tmp_path):
    old = tmp_path / "python3.9"
    old.write_text("#!/bin/sh\necho 3.9\n")  # answers the launcher's version question as a 3.9 would
    old.chmod(0o755)
    root = launcher_root(tmp_path, 'version = "0.1.0"\n')
    done = run_launcher(root, tmp_path, ATTEND_PYTHON=str(old))
    assert done.returncode == 1
    assert done.stderr == f"attend: attend needs Python 3.11 or newer ({old} is 3.9); install one, or set ATTEND_PYTHON to it\n"
    assert not (tmp_path / "data" / "venv").exists()


def test_the_launcher_names_an_attend_python_that_does_not_exist(tmp_path):
    root = launcher_root(tmp_path, 'version = "0.1.0"\n')
    missing = tmp_path / "no-such-python"
    done = run_launcher(root, tmp_path, ATTEND_PYTHON=str(missing))
    assert done.returncode == 1
    assert done.stderr == (f"attend: attend needs Python 3.11 or newer (ATTEND_PYTHON={missing} is not found); "
                           "install one, or set ATTEND_PYTHON to it\n")


def test_the_launcher_reports_a_failed_install_in_one_line_and_keeps_no_half_built_venv(tmp_path):
    root = launcher_root(tmp_path, 'version = "0.1.0"\n[project\n')  # pip cannot read this pyproject.toml
    done = run_launcher(root, tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith("attend: setting up attend 0.1.0 ")
    assert re.fullmatch(rf"attend: could not install attend from {re.escape(str(root))} \(exit \d+\); the log is \S+",
                        lines[1])
    assert len(lines) == 2 and "Traceback" not in done.stderr
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["venv.install.log", "venv.lock"]


MINI = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' \
       '[project]\nname = "{name}"\nversion = "{version}"\n'


def test_a_hook_never_waits_for_the_first_build_and_says_setting_up(tmp_path):
    root = launcher_root(tmp_path, 'version = "0.1.0"\n[project\n')  # the build fails, in the background
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "XDG_", "ATTEND_"))}
    base.update(HOME=str(tmp_path), CLAUDE_PLUGIN_DATA=str(tmp_path / "data"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(root / "bin" / "attend"), "drain", "--format", "hook"],
                          input="{}", capture_output=True, text=True, timeout=60, env=base)
    assert time.monotonic() - started < 10  # a first build takes 40-50 s; the hook's timeout is 30-60 s
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == (f"attend: setting up attend 0.1.0 in {tmp_path / 'data' / 'venv'}; "
                           "notifications start once it is ready\n")
    log = tmp_path / "data" / "venv.install.log"
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.exists()  # the build runs in the background


@pytest.mark.slow
def test_the_extra_packages_list_is_installed_by_every_build(tmp_path):
    extra = tmp_path / "extra-pkg"
    extra.mkdir()
    (extra / "pyproject.toml").write_text(MINI.format(name="attend-extra-mini", version="1.0"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "extra-packages.txt").write_text(f"{extra}\n")
    for version in ("0.1.0", "0.2.0"):  # the first build, then a new plugin version's rebuild
        root = tmp_path / version
        (root / "bin").mkdir(parents=True)
        shutil.copy2(REPO / "bin" / "attend", root / "bin" / "attend")
        (root / "pyproject.toml").write_text(MINI.format(name="attend-mini", version=version))
        run_launcher(root, tmp_path)  # --version then fails (the mini package is no attend): the venv is built
        venv = tmp_path / "data" / "venv"
        assert (venv / ".attend-plugin-version").read_text() == f"{version}\n"
        shown = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "attend-extra-mini"],
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, (version, shown.stderr)


class Stream:
    """A process's stdout read line by line on a thread, so the test can wait for a line."""

    def __init__(self, pipe) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.pipe = pipe
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.pipe:
            self.lines.put(line.rstrip("\n"))

    def close(self) -> None:
        """After the process ended: the reader has seen end of file; close the pipe."""
        self.thread.join(timeout=PATIENCE)
        self.pipe.close()

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {timeout} s")


def as_claude_code_runs(command: str, variables: dict[str, str]) -> str:
    """A plugin command after Claude Code's substitution of ${CLAUDE_PLUGIN_ROOT} and friends."""
    for name, value in variables.items():
        command = command.replace("${" + name + "}", value)
    return command


def path_without_attend() -> str:
    """The directories of this PATH that hold no `attend`, plus the base interpreter's own folder."""
    base = os.path.dirname(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    dirs = [base] + os.environ.get("PATH", "").split(os.pathsep)
    kept = [d for d in dict.fromkeys(dirs) if d and not os.path.exists(os.path.join(d, "attend"))]
    return os.pathsep.join(kept)


def readme_install_lines(checkout: Path) -> list[list[str]]:
    """README's plugin install, the in-session `/plugin ...` lines as the `claude plugin ...` CLI takes them."""
    section = (REPO / "README.md").read_text().split("## Install as a Claude Code plugin", 1)[1]
    block = section.split("```", 2)[1]
    lines = [line.split() for line in block.splitlines() if line.startswith("/plugin ")]
    assert [words[:3] for words in lines] == [["/plugin", "marketplace", "add"], ["/plugin", "install", "attend@attend"]]
    return [["plugin", *[str(checkout) if w == "/path/to/attend" else w for w in words[1:]]] for words in lines]


def wait_for_polls(home, names: set[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = json.loads(home.attend("sensors", "list", "--json").stdout or "[]")
        if {s["name"] for s in listed if s.get("last_poll")} >= names:
            return
        time.sleep(0.5)
    raise AssertionError(f"{names} were not polled within {timeout} s")


@pytest.mark.slow
def test_the_installed_plugin_s_monitor_and_stop_hook_work_without_attend_on_path(claude, checkout, quiet_home):
    home = quiet_home
    env = claude_env(home.root)
    for argv in readme_install_lines(checkout):  # the README's two lines, as `claude plugin ...` runs them
        done = subprocess.run([str(claude), *argv], capture_output=True, text=True, timeout=120,
                              env=env, cwd=home.project)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run([str(claude), "plugin", "list", "--json"], capture_output=True, text=True,
                            timeout=120, env=env, cwd=home.project)
    (plugin,) = [p for p in json.loads(listed.stdout) if p["id"] == "attend@attend"]
    assert plugin["enabled"] is True and plugin["version"] == package()["version"]

    installed = json.loads((home.root / ".claude" / "plugins" / "installed_plugins.json").read_text())
    root = installed["plugins"]["attend@attend"][0]["installPath"]
    variables = {
        "CLAUDE_PLUGIN_ROOT": root,
        "CLAUDE_PLUGIN_DATA": str(home.root / ".claude" / "plugins" / "data" / "attend-attend"),
        "CLAUDE_PROJECT_DIR": str(home.project),
    }
    path = path_without_attend()
    assert shutil.which("attend", path=path) is None
    run_env = home.env(PATH=path, **variables)
    run_env.setdefault("PIP_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "pip"))

    # Two sensors of the user's: one loud on the event lane, one quiet on the message lane.
    (home.project / "items.json").write_text("[]")
    (home.project / "chat.json").write_text("[]")
    for name, lane, magnitude, extra in (("items", "event", 3, {}), ("chat", "message", 1, {"author": "from"})):
        home.write_user_sensor(name, json.dumps({
            "spec": 1, "name": name, "kind": "command", "lane": lane, "interval": "1s", "min_interval": "0.2s",
            "threshold": 0, "command": {"argv": ["cat", f"{name}.json"]},
            "triggers": {"new": {"path": "$[*]", "key": "id", "on": "added", "magnitude": magnitude,
                                 "description": "{text}", **extra}},
        }))

    (monitor,) = json.loads((Path(root) / "monitors" / "monitors.json").read_text())
    proc = subprocess.Popen(["sh", "-c", as_claude_code_runs(monitor["command"], variables)], cwd=home.project,
                            env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    stdout, stderr = Stream(proc.stdout), Stream(proc.stderr)  # stderr drained: the daemon never blocks on it
    try:
        wait_for_polls(home, {"items", "chat"}, FIRST_RUN)
        (home.project / "items.json").write_text('[{"id": 1, "text": "deploy finished"}]')
        line = stdout.wait_for("deploy finished", PATIENCE)
        assert line == "[attend sensor=items priority=medium] deploy finished"

        (home.project / "chat.json").write_text('[{"id": 7, "from": "ann", "text": "ann: lunch?"}]')
        (group,) = json.loads((Path(root) / "hooks" / "hooks.json").read_text())["hooks"]["Stop"]
        (hook,) = group["hooks"]
        stop = {"session_id": "s-1", "transcript_path": str(home.root / "t.jsonl"), "cwd": str(home.project),
                "hook_event_name": "Stop", "stop_hook_active": False}
        deadline = time.monotonic() + PATIENCE
        while True:
            done = subprocess.run(["sh", "-c", as_claude_code_runs(hook["command"], variables)], cwd=home.project,
                                  env=run_env, input=json.dumps(stop), capture_output=True, text=True,
                                  timeout=hook["timeout"])
            assert done.returncode == 0, done.stderr
            if done.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        decision = json.loads(done.stdout)
        assert decision["decision"] == "block"
        assert "[attend sensor=chat priority=low] ann: lunch?" in decision["reason"].splitlines()
        again = subprocess.run(["sh", "-c", as_claude_code_runs(hook["command"], variables)], cwd=home.project,
                               env=run_env, input=json.dumps({**stop, "stop_hook_active": True}),
                               capture_output=True, text=True, timeout=hook["timeout"])
        assert (again.returncode, again.stdout) == (0, "")

        # `attend doctor`, through the same launcher, finds this wiring and the polling daemon.
        launcher = str(Path(root) / "bin" / "attend")
        done = subprocess.run([launcher, "doctor", "--json", "--project", str(home.project)], cwd=home.project,
                              env=run_env, capture_output=True, text=True, timeout=PATIENCE)
        checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
        assert done.returncode == 0, checks
        assert checks["claude-code"]["message"].startswith("plugin attend@attend installed and enabled")
        assert checks["daemon"]["status"] == "ok"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=PATIENCE)
        stdout.close()
        stderr.close()


def test_installing_from_a_clone_after_make_run_leaves_its_venv_out_of_the_plugin_cache(claude, checkout, tmp_path):
    # `make run` makes .venv in the clone (111 MB measured); Claude Code copies a directory plugin whole,
    # so the plugin's source is plugin/, which links to the plugin's parts only (issue 27, item 10)
    (checkout / ".venv" / "lib").mkdir(parents=True)
    (checkout / ".venv" / "lib" / "big.bin").write_bytes(b"\0" * 4096)
    (checkout / "tests" / "scratch.txt").write_text("not part of the plugin")
    env = claude_env(tmp_path)
    for argv in readme_install_lines(checkout):
        done = subprocess.run([str(claude), *argv], capture_output=True, text=True, timeout=120, env=env,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    installed = json.loads((tmp_path / ".claude" / "plugins" / "installed_plugins.json").read_text())
    root = Path(installed["plugins"]["attend@attend"][0]["installPath"])
    assert sorted(p.name for p in root.iterdir()) == sorted(PLUGIN_PARTS)
    assert not (root / "bin" / "attend").is_symlink() and os.access(root / "bin" / "attend", os.X_OK)
    assert (root / "src" / "attend" / "cli.py").is_file()
