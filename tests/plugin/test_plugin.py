"""The repository is a Claude Code plugin and its own marketplace (DESIGN.md, "Sessions, Claude Code and
the plugin"), checked with the real Claude Code CLI: validate, add the marketplace, install, list; then
the installed plugin's monitor and Stop hook run exactly as Claude Code runs them, with no attend on PATH.
"""

from __future__ import annotations

import fcntl
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
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from claude_rig import REPO, as_installed, claude_env, copy_checkout, path_without_attend
from pip_rig import EXTRA, EXTRA_VERSION, launcher_env, pip_env, tiny_package, uv_env
from waiting import PATIENCE, wait_until

#: What the plugin is made of: its manifest, launcher, hooks, monitor and skill (real files in plugin/, which
#: the validator reads), and what the launcher's pip install reads (plugin/ links to these in the repository).
PLUGIN_FILES = (".claude-plugin", "bin", "hooks", "monitors", "skills")
PLUGIN_LINKS = ("README.md", "pyproject.toml", "src")
PLUGIN_PARTS = PLUGIN_FILES + PLUGIN_LINKS
PLUGIN = REPO / "plugin"


def manifest(name: str) -> dict:
    """The plugin's manifest (plugin.json) or the repository's marketplace (marketplace.json)."""
    folder = PLUGIN if name == "plugin.json" else REPO
    return json.loads((folder / ".claude-plugin" / name).read_text())


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
    # plugin/ holds the plugin's own files and links to the package it installs, and nothing else: Claude Code
    # copies a directory plugin whole (it reads no .gitignore), so a clone's .venv stays out of its cache
    assert sorted(p.name for p in PLUGIN.iterdir()) == sorted(PLUGIN_PARTS)
    assert {name: os.readlink(PLUGIN / name) for name in PLUGIN_LINKS} == {name: f"../{name}" for name in PLUGIN_LINKS}
    for name in PLUGIN_FILES:  # real folders of real files: the validator reads no link (issue 34, item 6)
        assert not any(p.is_symlink() for p in [PLUGIN / name, *(PLUGIN / name).rglob("*")]), name


def test_every_plugin_command_calls_attend_through_the_plugin_launcher():
    monitors = json.loads((PLUGIN / "monitors" / "monitors.json").read_text())
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    commands = [m["command"] for m in monitors] + [h["command"] for g in hooks["Stop"] for h in g["hooks"]]
    assert len(commands) == 2
    for command in commands:
        assert command.startswith('"${CLAUDE_PLUGIN_ROOT}/bin/attend" ')
        assert '--project "${CLAUDE_PROJECT_DIR}"' in command
    # the monitor names the data folder on its command line, where Claude Code substitutes it (its
    # environment lacks it); the hooks have it in theirs
    (monitor,) = monitors
    assert monitor["command"].startswith('"${CLAUDE_PLUGIN_ROOT}/bin/attend" --plugin-data "${CLAUDE_PLUGIN_DATA}" run ')
    assert os.access(PLUGIN / "bin" / "attend", os.X_OK)


def validate_strict(claude: Path, folder: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(claude), "plugin", "validate", "--strict", str(folder)], capture_output=True,
                          text=True, timeout=120, env=claude_env(home))


@pytest.mark.parametrize("folder", ["the folder the marketplace names", "the plugin as installed", "the marketplace"])
def test_claude_plugin_validate_strict_passes(claude, tmp_path, folder):
    # in the checkout, where the validator reads no link (issue 34, item 6); the install's copy; the
    # marketplace, which reads the plugin it names
    (entry,) = manifest("marketplace.json")["plugins"]
    path = {"the folder the marketplace names": REPO / entry["source"],
            "the plugin as installed": as_installed(REPO, tmp_path / "installed"),
            "the marketplace": REPO}[folder]
    done = validate_strict(claude, path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout  # --strict: a warning would have failed it


def test_claude_plugin_validate_strict_refuses_a_misspelled_hook_event(claude, checkout, tmp_path):
    # The check above can fail: the same validator refuses the hooks file with an unknown event.
    hooks = checkout / "plugin" / "hooks" / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"Stop"', '"Stopp"'))
    done = validate_strict(claude, checkout / "plugin", tmp_path)
    assert done.returncode == 1
    assert "Validation failed" in done.stdout + done.stderr


def launcher_root(tmp_path: Path, pyproject: str) -> Path:
    """A plugin root holding only bin/attend and the given pyproject.toml."""
    root = tmp_path / "plugin"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(PLUGIN / "bin" / "attend", root / "bin" / "attend")
    (root / "pyproject.toml").write_text(pyproject)
    return root


def run_launcher(root: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(root / "bin" / "attend"), "--version"], capture_output=True,
                          text=True, timeout=120, env=launcher_env(tmp_path, tmp_path / "data", **env))


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


def stamped_venv(data: Path, stamp: str) -> Path:
    """A set-up plugin virtualenv stamped `stamp` whose python only says how it was run."""
    python = data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "ran $*; $ATTEND_PLUGIN_VENV $ATTEND_PLUGIN_VERSION"\n')
    python.chmod(0o755)
    (data / "venv" / ".attend-plugin-version").write_text(stamp + "\n")
    return data / "venv"


def test_a_virtualenv_set_up_for_this_version_runs_straight_from_sh_without_a_second_python(tmp_path):
    root = launcher_root(tmp_path, '[project]\nname = "attend"\nversion = "0.1.0"\n')
    venv = stamped_venv(tmp_path / "data", "0.1.0")
    # No python3 on PATH: only the launcher's sh part can run (as it does before every hook).
    env = launcher_env(tmp_path, tmp_path / "data", PATH=str(tmp_path / "empty"))
    done = subprocess.run([str(root / "bin" / "attend"), "drain", "--format", "hook"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"ran -P -m attend drain --format hook; {venv} 0.1.0\n", "")


def this_interpreters_venv(data: Path, stamp: str) -> Path:
    """A set-up plugin virtualenv stamped `stamp` whose python is this test run's (attend importable)."""
    venv = data / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    for name in ("pyvenv.cfg", "lib"):
        (venv / name).symlink_to(Path(sys.prefix) / name)
    (venv / ".attend-plugin-version").write_text(stamp + "\n")
    return venv


@pytest.mark.parametrize("path", ["sh", "python"])
def test_a_checkout_holding_an_attend_package_never_runs_in_place_of_attend(tmp_path, path):
    # Claude Code runs the hooks and the monitor in the project folder: `python -m attend` there would import
    # a checkout's own attend/ (sys.path[0] is the working folder) and run its code on every hook, trusted
    # or not. The launcher runs attend with -P (no unsafe path first), from sh and from its Python part.
    root = launcher_root(tmp_path, '[project]\nname = "attend"\nversion = "0.1.0"\n')
    this_interpreters_venv(tmp_path / "data", "0.1.0")
    checkout = tmp_path / "checkout"
    (checkout / "attend").mkdir(parents=True)
    marker = tmp_path / "planted-code-ran"
    (checkout / "attend" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (checkout / "attend" / "__main__.py").write_text("print('attend 6.6.6')\n")
    argv = [str(root / "bin" / "attend"), "--version"]
    if path == "python":  # the launcher's Python part (what a link to bin/attend or an odd pyproject takes)
        argv = [sys.executable, "-S", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=checkout,
                          env=launcher_env(tmp_path, tmp_path / "data"))
    assert (done.returncode, done.stdout.strip()) == (0, "attend 0.1.0"), done.stderr
    assert not marker.exists()


def monitor_command(root: Path, data: Path, project: Path) -> str:
    """The plugin's monitor command for the plugin at `root` as Claude Code runs it: its variables substituted
    in the text; run it in an environment without them (launcher_env(home, None)), as Claude Code does."""
    (monitor,) = json.loads((PLUGIN / "monitors" / "monitors.json").read_text())
    return as_claude_code_runs(monitor["command"], {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data),
                                                    "CLAUDE_PROJECT_DIR": str(project)})


@pytest.mark.parametrize("path", ["sh", "python"])
def test_the_monitor_runs_attend_in_the_data_folder_its_command_names_though_its_environment_lacks_it(tmp_path, path):
    # Claude Code substitutes ${CLAUDE_PLUGIN_DATA} in a monitor's command text but does not export it (issue
    # 34, item 4): the monitor runs the virtualenv the hooks run, data/venv, not a second one of its own.
    root = launcher_root(tmp_path, '[project]\nname = "attend"\nversion = "0.1.0"\n')
    venv = stamped_venv(tmp_path / "data", "0.1.0")
    project = tmp_path / "project"
    # No build can run: a launcher that looked for a virtualenv elsewhere fails at once.
    env = launcher_env(tmp_path, None, ATTEND_PYTHON=str(tmp_path / "no-such-python"))
    if path == "sh":
        env["PATH"] = str(tmp_path / "empty")  # no python3: only the launcher's sh part can run
    else:  # the launcher's Python part, which a link to bin/attend takes
        (tmp_path / "linked" / "bin").mkdir(parents=True)
        (tmp_path / "linked" / "bin" / "attend").symlink_to(root / "bin" / "attend")
        root = tmp_path / "linked"
    done = subprocess.run(["/bin/sh", "-c", monitor_command(root, tmp_path / "data", project)], capture_output=True,
                          text=True, timeout=60, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"ran -P -m attend run --project {project}; {venv} 0.1.0\n", "")


@pytest.mark.parametrize("path", ["sh", "python"])
def test_a_data_folder_left_empty_on_the_command_line_is_the_environment_s(tmp_path, path):
    # A Claude Code that substituted nothing leaves `--plugin-data ""` after sh's expansion: the hooks' way
    # of naming it (CLAUDE_PLUGIN_DATA) then holds.
    root = launcher_root(tmp_path, '[project]\nname = "attend"\nversion = "0.1.0"\n')
    venv = stamped_venv(tmp_path / "data", "0.1.0")
    argv = [str(root / "bin" / "attend"), "--plugin-data", "", "--version"]
    if path == "python":
        argv = [sys.executable, "-S", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          env=launcher_env(tmp_path, tmp_path / "data", PATH=str(tmp_path / "empty")))
    assert (done.returncode, done.stdout, done.stderr) == (0, f"ran -P -m attend --version; {venv} 0.1.0\n", "")


def test_plugin_data_without_a_folder_is_one_line_and_exit_1(tmp_path):
    root = launcher_root(tmp_path, 'version = "0.1.0"\n')
    done = subprocess.run([str(root / "bin" / "attend"), "--plugin-data"], capture_output=True, text=True,
                          timeout=60, env=launcher_env(tmp_path, tmp_path / "data"))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "attend: --plugin-data needs a folder: bin/attend --plugin-data DIR [ARGS...]\n"


def test_a_virtualenv_of_another_version_goes_to_the_launchers_python_part(tmp_path):
    root = launcher_root(tmp_path, '[project]\nname = "attend"\nversion = "0.2.0"\n')
    stamped_venv(tmp_path / "data", "0.1.0")
    env = launcher_env(tmp_path, tmp_path / "data", PATH=str(tmp_path / "empty"))
    done = subprocess.run([str(root / "bin" / "attend"), "--version"], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 127 and "python3" in done.stderr and "ran " not in done.stdout  # not the old one


def build_lock_held(data: Path) -> bool:
    """Whether a launcher holds the build lock beside data/venv (a build runs)."""
    with open(data / "venv.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
        return False


@pytest.mark.parametrize("named", ["in the environment", "on the command line"])
def test_a_hook_never_waits_for_the_first_build_and_says_setting_up(tmp_path, named):
    root = launcher_root(tmp_path, 'version = "0.1.0"\n')
    # The build's Python: a 3.12 whose first build step (`-m venv`) runs until the test releases it, then
    # fails; so the hook is seen returning while its build provably still runs, and no build outlives the test.
    release = tmp_path / "release"
    python = tmp_path / "python3.12"
    python.write_text(f'#!/bin/sh\nif [ "$1" = -c ]; then echo 3.12; exit 0; fi\n'
                      f'while [ ! -e "{release}" ]; do sleep 0.05; done\nexit 1\n')
    python.chmod(0o755)
    data = tmp_path / "data"
    started = time.monotonic()
    # the data folder as hooks get it (CLAUDE_PLUGIN_DATA) or as the monitor names it: the background build
    # builds there too
    data_args = ["--plugin-data", str(data)] if named == "on the command line" else []
    done = subprocess.run([sys.executable, str(root / "bin" / "attend"), *data_args, "drain", "--format", "hook"],
                          input="{}", capture_output=True, text=True, timeout=60,
                          env=launcher_env(tmp_path, None if data_args else data, ATTEND_PYTHON=str(python)))
    assert time.monotonic() - started < 10  # a first build takes 40-50 s; the hook's timeout is 30-60 s
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == (f"attend: setting up attend 0.1.0 in {data / 'venv'}; "
                           "notifications start once it is ready\n")
    log = data / "venv.install.log"
    wait_until(lambda: log.exists() and " -m venv " in log.read_text(), what="the background build's first step")
    assert build_lock_held(data) and not release.exists()  # the build runs in the background, the hook is done
    release.touch()
    wait_until(lambda: not build_lock_held(data), what="the background build's end")
    assert not (data / "venv").exists()


@pytest.mark.slow
def test_the_first_run_builds_the_virtualenv_from_the_plugins_source_and_runs_attend_in_it(plugin_build):
    # the plugin as installed, no virtualenv yet: `bin/attend --version` sets one up with pip, then runs in it
    version = package()["version"]
    assert (plugin_build.returncode, plugin_build.stdout) == (0, f"attend {version}\n"), plugin_build.stderr
    venv = plugin_build.venv
    assert re.fullmatch(rf"attend: setting up attend {re.escape(version)} \(Python 3\.\d+, pip\) in {re.escape(str(venv))}; "
                        rf"the first run takes a minute\nattend: attend {re.escape(version)} is ready\n", plugin_build.stderr)
    assert (venv / ".attend-plugin-version").read_text() == f"{version}\n"
    assert sorted(p.name for p in venv.parent.iterdir()) == ["bin", "extra-packages.txt", "venv", "venv.install.log",
                                                             "venv.lock"]
    assert installed(venv, EXTRA, EXTRA_VERSION) == "pip"  # the first build installed what extra-packages.txt lists


def installed(venv: Path, name: str, version: str) -> str | None:
    """Which installer (pip, uv) put distribution `name` `version` into `venv` (its .dist-info's INSTALLER, as
    pip show reads it); None when it is not there."""
    dist = name.replace("-", "_")
    found = sorted(venv.glob(f"lib/python3.*/site-packages/{dist}-{version}.dist-info/INSTALLER"))
    return found[0].read_text().strip() if found else None


@pytest.mark.slow
def test_with_uv_the_first_run_builds_with_uv_from_the_plugins_source_and_the_extra_packages(wheels, tmp_path):
    # uv on PATH (here ATTEND_UV names the real uv of the test environment) builds the virtualenv in seconds
    # instead of pip's minute (issue 34, item 4; `python -m benchmarks first_start` times both)
    version = package()["version"]
    root = as_installed(REPO, tmp_path / "plugin")
    data = tmp_path / "data"
    data.mkdir()
    (data / "extra-packages.txt").write_text(f"{EXTRA}=={EXTRA_VERSION}\n")  # a wheel in `wheels`
    env = launcher_env(tmp_path, None, **uv_env(wheels, tmp_path / "uv-cache"))
    done = subprocess.run([str(root / "bin" / "attend"), "--plugin-data", str(data), "--version"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert (done.returncode, done.stdout) == (0, f"attend {version}\n"), done.stderr
    venv = data / "venv"
    assert re.fullmatch(rf"attend: setting up attend {re.escape(version)} \(Python 3\.\d+, uv\) in {re.escape(str(venv))}; "
                        rf"the first run takes a few seconds\nattend: attend {re.escape(version)} is ready\n", done.stderr)
    log = (data / "venv.install.log").read_text()
    assert f"$ {env['ATTEND_UV']} venv " in log and f"$ {env['ATTEND_UV']} pip install " in log
    assert installed(venv, "attend", version) == "uv"
    assert installed(venv, EXTRA, EXTRA_VERSION) == "uv"


@pytest.mark.slow
def test_the_extra_packages_list_is_installed_by_every_build(wheels, tmp_path):
    # the first build installs the list (test_the_first_run_builds_...); a new plugin version's rebuild, over
    # the virtualenv of the version before, installs it again
    data = tmp_path / "data"
    stamped_venv(data, "0.1.0")
    (data / "extra-packages.txt").write_text(f"{EXTRA}=={EXTRA_VERSION}\n")
    root = tiny_package(tmp_path / "0.2.0", "attend-mini", "0.2.0")  # a plugin root whose version changed
    (root / "bin").mkdir()
    shutil.copy2(PLUGIN / "bin" / "attend", root / "bin" / "attend")
    run_launcher(root, tmp_path, **pip_env(wheels))  # --version then fails (the mini package is no attend)
    venv = data / "venv"
    assert (venv / ".attend-plugin-version").read_text() == "0.2.0\n"
    assert installed(venv, "attend-mini", "0.2.0")  # the new version's build, not the old virtualenv
    assert installed(venv, EXTRA, EXTRA_VERSION)


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


def attend_runs(pid: int) -> list[psutil.Process]:
    """The `attend run` processes the launcher started (`python -P -m attend run ...`) among process `pid` and
    its descendants."""
    top = psutil.Process(pid)
    return [p for p in [top, *top.children(recursive=True)] if p.cmdline()[1:5] == ["-P", "-m", "attend", "run"]]


def as_claude_code_runs(command: str, variables: dict[str, str]) -> str:
    """A plugin command after Claude Code's substitution of ${CLAUDE_PLUGIN_ROOT} and friends."""
    for name, value in variables.items():
        command = command.replace("${" + name + "}", value)
    return command


def readme_install_lines(checkout: Path) -> list[list[str]]:
    """README's plugin install, the in-session `/plugin ...` lines as the `claude plugin ...` CLI takes them."""
    section = (REPO / "README.md").read_text().split("## Install as a Claude Code plugin", 1)[1]
    block = section.split("```", 2)[1]
    lines = [line.split() for line in block.splitlines() if line.startswith("/plugin ")]
    assert [words[:3] for words in lines] == [["/plugin", "marketplace", "add"], ["/plugin", "install", "attend@attend"]]
    return [["plugin", *[str(checkout) if w == "/path/to/attend" else w for w in words[1:]]] for words in lines]


def readme_link_line() -> str:
    """README's command that puts a plugin-only install's `attend` on PATH (its plugin section)."""
    section = (REPO / "README.md").read_text().split("## Install as a Claude Code plugin", 1)[1].split("\n## ", 1)[0]
    (line,) = [line for line in section.splitlines() if line.startswith("mkdir -p ~/.local/bin && ln -sf ")]
    return line


def polled(home) -> set[str]:
    """The sensors `attend sensors list` shows a last poll for."""
    listed = json.loads(home.attend("sensors", "list", "--json").stdout or "[]")
    return {s["name"] for s in listed if s.get("last_poll")}


@dataclass(frozen=True)
class ReadmeInstall:
    """README's plugin install (`readme_install`): the home Claude Code installed into, the installed
    plugin's folder and what `claude plugin list --json` said afterwards."""

    home: Path
    root: Path
    listed: list[dict]


@pytest.fixture(scope="module")
def readme_install(claude, tmp_path_factory) -> ReadmeInstall:
    """README's two `/plugin` lines, as `claude plugin ...` runs them, once for this module's tests: from a
    clone after `make run` (its .venv, 111 MB measured, and a stray file in tests/), into a home of its own;
    then `claude plugin list --json`. Three runs of the Claude Code CLI, for the install the tests below
    look at from two sides (what it copied; the installed monitor and Stop hook at work)."""
    base = tmp_path_factory.mktemp("readme-install")
    checkout = copy_checkout(base / "attend-checkout")
    (checkout / ".venv" / "lib").mkdir(parents=True)
    (checkout / ".venv" / "lib" / "big.bin").write_bytes(b"\0" * 4096)
    (checkout / "tests" / "scratch.txt").write_text("not part of the plugin")
    home = base / "home"
    home.mkdir()
    env = claude_env(home)
    for argv in readme_install_lines(checkout):
        done = subprocess.run([str(claude), *argv], capture_output=True, text=True, timeout=120, env=env, cwd=home)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run([str(claude), "plugin", "list", "--json"], capture_output=True, text=True,
                            timeout=120, env=env, cwd=home)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    root = Path(installed["plugins"]["attend@attend"][0]["installPath"])
    return ReadmeInstall(home=home, root=root, listed=json.loads(listed.stdout))


@pytest.mark.slow
def test_the_installed_plugin_s_monitor_and_stop_hook_work_without_attend_on_path(readme_install, quiet_home,
                                                                                   wheels, tmp_path):
    home = quiet_home
    # The plugin as README's install left it (readme_install), in this user's home: what Claude Code wrote
    # under ~/.claude (the installed plugins, settings.json enabling it), as the user's own.
    shutil.copytree(readme_install.home / ".claude", home.root / ".claude", symlinks=True)
    (plugin,) = [p for p in readme_install.listed if p["id"] == "attend@attend"]
    assert plugin["enabled"] is True and plugin["version"] == package()["version"]

    plugins = json.loads((home.root / ".claude" / "plugins" / "installed_plugins.json").read_text())
    root = plugins["plugins"]["attend@attend"][0]["installPath"]
    variables = {
        "CLAUDE_PLUGIN_ROOT": root,
        "CLAUDE_PLUGIN_DATA": str(home.root / ".claude" / "plugins" / "data" / "attend-attend"),
        "CLAUDE_PROJECT_DIR": str(home.project),
    }
    path = path_without_attend()
    assert shutil.which("attend", path=path) is None
    # Claude Code substitutes the variables in both commands' text; it exports them to the hooks, not to the
    # monitor (issue 34, item 4). No virtualenv yet: the monitor's first start builds it, with uv on PATH
    # (here ATTEND_UV, the real uv of the test environment), from the tests' wheelhouse.
    build = uv_env(wheels, tmp_path / "uv-cache")
    run_env = home.env(PATH=path, **variables, **build)
    monitor_env = {k: v for k, v in home.env(PATH=path, **build).items() if not k.startswith("CLAUDE_")}
    data = Path(variables["CLAUDE_PLUGIN_DATA"])
    data.mkdir(parents=True)
    (data / "extra-packages.txt").write_text(f"{EXTRA}=={EXTRA_VERSION}\n")

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
                            env=monitor_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    stdout, stderr = Stream(proc.stdout), Stream(proc.stderr)  # stderr drained: the daemon never blocks on it
    try:
        stderr.wait_for(f"attend {package()['version']} is ready", 600)  # the build (seconds with uv)
        wait_until(lambda: polled(home) >= {"items", "chat"}, what="both sensors polled")
        # The monitor polls from the one virtualenv the hooks use (built with extra-packages.txt), and no
        # second one was made where a launcher without the data folder would put it.
        (polling,) = attend_runs(proc.pid)
        assert polling.cmdline()[0] == str(data / "venv" / "bin" / "python")
        assert polling.environ()["ATTEND_PLUGIN_VENV"] == str(data / "venv")
        assert installed(data / "venv", EXTRA, EXTRA_VERSION) == "uv"
        assert not (home.data / "attend" / "plugin-venv").exists()
        (home.project / "items.json").write_text('[{"id": 1, "text": "deploy finished"}]')
        line = stdout.wait_for("deploy finished", PATIENCE)
        assert line == "[attend sensor=items priority=medium] deploy finished"

        hooks = json.loads((Path(root) / "hooks" / "hooks.json").read_text())["hooks"]
        (group,) = hooks["Stop"]
        (hook,) = group["hooks"]
        assert hook["asyncRewake"] is True  # the doorbell: Claude Code runs it in the background
        stop = {"session_id": "s-1", "transcript_path": str(home.root / "t.jsonl"), "cwd": str(home.project),
                "hook_event_name": "Stop", "stop_hook_active": False}
        # The session started before the message came, as in Claude Code: its SessionStart hook ran (a session
        # is told what is journaled after it started; on a busy machine the Stop hook's own start could come
        # after the message's poll).
        (start_group,) = hooks["SessionStart"]
        subprocess.run(["sh", "-c", as_claude_code_runs(start_group["hooks"][0]["command"], variables)], cwd=home.project,
                       env=run_env, input=json.dumps({**stop, "hook_event_name": "SessionStart", "source": "startup"}),
                       capture_output=True, text=True, timeout=PATIENCE, check=True)
        (home.project / "chat.json").write_text('[{"id": 7, "from": "ann", "text": "ann: lunch?"}]')
        # It waits until the session (no Monitor of its own) has a line worth a turn: the message.
        done = subprocess.run(["sh", "-c", as_claude_code_runs(hook["command"], variables)], cwd=home.project,
                              env=run_env, input=json.dumps(stop), capture_output=True, text=True, timeout=PATIENCE)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert "[attend sensor=chat priority=low] ann: lunch?" in done.stderr.splitlines()
        # Under `claude -p` (which waits for it) a stop that had its turn gets none again, at once.
        again = subprocess.run(["sh", "-c", as_claude_code_runs(hook["command"], variables)], cwd=home.project,
                               env={**run_env, "CLAUDE_CODE_ENTRYPOINT": "sdk-cli"},
                               input=json.dumps({**stop, "stop_hook_active": True}),
                               capture_output=True, text=True, timeout=PATIENCE)
        assert (again.returncode, again.stdout, again.stderr) == (0, "", "")

        # `attend doctor`, through the same launcher, finds this wiring and the polling daemon.
        launcher = str(Path(root) / "bin" / "attend")
        done = subprocess.run([launcher, "doctor", "--json", "--project", str(home.project)], cwd=home.project,
                              env=run_env, capture_output=True, text=True, timeout=PATIENCE)
        checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
        assert done.returncode == 0, checks
        assert checks["claude-code"]["message"].startswith("plugin attend@attend installed and enabled")
        assert checks["daemon"]["status"] == "ok"
        # attend is not on PATH (a plugin-only install): doctor states the command that puts it there, and
        # in a terminal (no CLAUDE_ variables) `attend` then runs from the same virtualenv.
        local_bin = home.root / ".local" / "bin"
        assert checks["path"]["status"] == "warn"
        assert checks["path"]["fix"] == (f"`mkdir -p {local_bin} && ln -sf {data / 'bin' / 'attend'} {local_bin / 'attend'}`, "
                                         f"and put {local_bin} on PATH")
        link = checks["path"]["fix"].split("`")[1]
        assert link == readme_link_line().replace("~", str(home.root))  # README states the same command
        subprocess.run(["sh", "-c", link], env=run_env, check=True, timeout=PATIENCE)
        terminal = {k: v for k, v in home.env(PATH=f"{local_bin}{os.pathsep}{path}").items() if not k.startswith("CLAUDE_")}
        done = subprocess.run(["attend", "doctor", "--json"], cwd=home.project, env=terminal, capture_output=True,
                              text=True, timeout=PATIENCE)
        checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
        assert checks["path"] == {"check": "path", "status": "ok", "message": f"attend on PATH: {local_bin / 'attend'}",
                                  "fix": ""}
        assert checks["versions"]["message"].startswith("Python 3.") and str(data / "venv") in checks["versions"]["message"]
        assert sorted(p.name for p in data.iterdir()) == ["bin", "extra-packages.txt", "venv", "venv.install.log", "venv.lock"]
        assert not (home.data / "attend" / "plugin-venv").exists()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=PATIENCE)
        stdout.close()
        stderr.close()


def test_installing_from_a_clone_after_make_run_leaves_its_venv_out_of_the_plugin_cache(readme_install):
    # `make run` makes .venv in the clone (111 MB measured; readme_install's clone has one); Claude Code copies
    # a directory plugin whole, so the plugin's source is plugin/, which holds the plugin's parts only
    # (issue 27, item 10)
    root = readme_install.root
    assert sorted(p.name for p in root.iterdir()) == sorted(PLUGIN_PARTS)
    assert not (root / "bin" / "attend").is_symlink() and os.access(root / "bin" / "attend", os.X_OK)
    assert (root / "src" / "attend" / "cli.py").is_file()
