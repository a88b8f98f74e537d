"""The real Claude Code CLI and the plugin's one virtualenv build, as fixtures every test package can use
(registered by tests/conftest.py): `claude` (the pinned CLI, claude_rig.py), `checkout` (a clone-like copy of
the repository), `wheels` (pip_rig.py's wheelhouse) and `plugin_build` (the run's one build of the plugin's
virtualenv, started early by `early_plugin_build`).

Without npm the `claude` fixture skips its test, except under CI (`CI` set), where a missing Claude Code
is a failure: CI must never pass by skipping the real host (`npm_cache.cannot_run`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from claude_rig import REPO, as_installed, copy_checkout, installed_claude
from npm_cache import cannot_run
from pip_rig import EXTRA, EXTRA_VERSION, launcher_env, pip_env, wheelhouse


@pytest.fixture(scope="session")
def claude() -> Path:
    """The real `claude` CLI of the pinned release (installed into the test cache on first use)."""
    exe = installed_claude()
    if exe is None:
        cannot_run("npm is not installed: the tests of the real Claude Code need Node.js to install it")
    return exe


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the repository as a clone would have it: tracked and new files, nothing git ignores
    (no .venv, no caches), so the plugin is tested as a user's checkout is."""
    return copy_checkout(tmp_path / "attend-checkout")


@pytest.fixture(scope="session")
def wheels() -> Path:
    """The local wheelhouse every launcher build in these tests installs from (pip_rig.py)."""
    return wheelhouse()


@dataclass(frozen=True)
class PluginBuild:
    """The plugin's first run, done once per test run: `bin/attend --version` of the plugin as installed,
    with no virtualenv yet and extra-packages.txt listing EXTRA, so the launcher built `venv` with pip."""

    root: Path
    venv: Path
    returncode: int
    stdout: str
    stderr: str

    def copy_to(self, data: Path) -> Path:
        """This build's virtualenv as data/venv, as if the launcher had built it there (hard links: the launcher
        and Python replace files, never write into one)."""
        data.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copytree(self.venv, data / "venv", symlinks=True, copy_function=os.link))


def shared_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this test run that every xdist worker shares (the workers' common parent)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


#: What the plugin's processes in the host tests import (the monitor's `attend run`, the hooks' `attend drain`,
#: the tests' `attend peers` and `attend sensors fire`): compiled once in the run's build (`compiled`).
PLUGIN_IMPORTS = ("attend.cli", "attend.commands.run", "attend.commands.drain", "attend.commands.peers",
                  "attend.commands.sensors", "attend.runtime.daemon")


def compiled(venv: Path) -> None:
    """The build's bytecode for what the plugin's processes import, written once into `venv`.

    The build installs without compiling (pip_env: PIP_COMPILE=0) and every host test runs in a hard-linked
    copy of it (`PluginBuild.copy_to`), whose __pycache__ folders are the copy's own: without this, the first
    process of each kind in every copy compiled attend and trio again (0.2-0.4 s of CPU a test). The copies
    link the files written here. What a process imports beyond these it compiles itself, as before."""
    subprocess.run([str(venv / "bin" / "python"), "-P", "-c", "; ".join(f"import {name}" for name in PLUGIN_IMPORTS)],
                   capture_output=True, timeout=300, env={k: v for k, v in os.environ.items()
                                                         if k != "PYTHONDONTWRITEBYTECODE"})
    subprocess.run([str(venv / "bin" / "python"), "-P", "-m", "compileall", "-q", "-j", "0",
                    *map(str, venv.glob("lib/python3.*/site-packages/attend"))], capture_output=True, timeout=300)


def built(shared: Path, wheels: Path) -> dict[str, Any]:
    """The outcome of the run's one build of the plugin (in shared/plugin-build), made now unless another
    thread or worker made it; a build in progress elsewhere is waited for (a file lock)."""
    folder = shared / "plugin-build"
    with open(shared / "plugin-build.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = folder / "result.json"
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a build that died on the way left
            root = as_installed(REPO, folder / "plugin")
            data = folder / "data"
            data.mkdir()
            (data / "extra-packages.txt").write_text(f"{EXTRA}=={EXTRA_VERSION}\n")  # a wheel in `wheels`
            (folder / "home").mkdir()
            done = subprocess.run([sys.executable, str(root / "bin" / "attend"), "--version"], capture_output=True,
                                  text=True, timeout=900, env=launcher_env(folder / "home", data, **pip_env(wheels)))
            if done.returncode == 0:
                compiled(data / "venv")
            result.write_text(json.dumps({"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}))
        return dict(json.loads(result.read_text()))


@pytest.fixture(scope="session", autouse=True)
def early_plugin_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """When a selected test needs `plugin_build`, start that build on a thread at the first plugin test, so
    the tests before it run meanwhile instead of a worker waiting for it later; joined at the session's end."""
    if not any("plugin_build" in getattr(item, "fixturenames", ()) for item in request.session.items):
        yield
        return
    shared, wheels = shared_folder(tmp_path_factory), request.getfixturevalue("wheels")

    def build() -> None:
        try:
            built(shared, wheels)
        except Exception:  # the plugin_build fixture builds again and fails with the reason
            pass

    thread = threading.Thread(target=build, name="plugin-build", daemon=True)
    thread.start()
    yield
    thread.join()


@pytest.fixture(scope="session")
def plugin_build(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> PluginBuild:
    """The one real build of the plugin's virtualenv in a test run, shared by the tests that need an
    installed attend (the build is the slowest step of the plugin tests: ~20 s of pip even from wheels).
    Started early by `early_plugin_build`; under xdist the workers share it through the run's common
    temporary folder, behind a file lock."""
    shared = shared_folder(tmp_path_factory)
    folder = shared / "plugin-build"
    return PluginBuild(root=folder / "plugin", venv=folder / "data" / "venv", **built(shared, wheels))
