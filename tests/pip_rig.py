"""A local wheelhouse for the plugin launcher's builds, filled once into the test cache (npm_cache.cache_root).

The launcher builds its virtualenv with real pip (`pip install <plugin root>`, then the extra packages).
From PyPI that is a minute of index pages and downloads per build; the tests instead hand the launcher
pip's own switches, `PIP_NO_INDEX=1` and `PIP_FIND_LINKS=<wheelhouse>`, so the same pip resolves the same
requirements from wheels on disk. The wheelhouse holds attend's dependencies and build backend (hatchling),
setuptools (the tests' tiny packages build with it) and the wheel of the tiny EXTRA package (the extra
package the builds install, by name); it is filled by `pip wheel` on first use (the only time the network
is needed) and kept under a name hashed from what it holds, so a dependency change fills a new one.
Filling is serialised by a file lock (xdist workers, concurrent runs).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from claude_rig import REPO
from npm_cache import cache_root

#: The tiny extra package the shared plugin build's extra-packages.txt lists (tests/plugin/conftest.py),
#: by name: its wheel is in the wheelhouse.
EXTRA = "attend-extra-mini"
EXTRA_VERSION = "1.0"

#: A package with nothing in it but its name and version, built by setuptools (from the wheelhouse).
TINY = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' \
       '[project]\nname = "{name}"\nversion = "{version}"\n'


def tiny_package(folder: Path, name: str, version: str) -> Path:
    """A source folder of TINY named `name` at `version` (pip installs it from the folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(TINY.format(name=name, version=version))
    return folder


def requirements() -> list[str]:
    """What a launcher build installs from an index: attend's dependencies, its build backend, setuptools."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [*project["project"]["dependencies"], *project["build-system"]["requires"], "setuptools"]


@functools.cache
def launcher_python() -> tuple[int, ...] | None:
    """The version of the Python a launcher builds with when ATTEND_PYTHON is unset (bin/attend's
    base_python: the first of python3.13 .. python3.11 and python3 on PATH that is 3.11 or newer)."""
    for name in ("python3.13", "python3.12", "python3.11", "python3"):
        exe = shutil.which(name)
        if exe is None:
            continue
        done = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                              text=True, timeout=60)
        version = tuple(int(part) for part in done.stdout.split()) if done.returncode == 0 else ()
        if version >= (3, 11):
            return version
    return None


def pip_env(wheels: Path) -> dict[str, str]:
    """pip's own switches that make every pip the launcher starts install from `wheels` and nothing else;
    when the launcher builds with another Python than this one (whose wheels these are), pip may still
    fetch from the index what the wheelhouse lacks for it.

    And `PIP_COMPILE=0` (pip's `--no-compile`): pip installs the same files but compiles none of them to
    bytecode; the interpreter compiles the modules a test imports when it imports them (writing
    __pycache__ as it goes). Byte-compiling every installed package was a third of a build's CPU (the
    run's shared build: 20.0 s -> 13.6 s). `PIP_NO_COMPILE=1` would turn compiling on: pip stores the
    value of an environment variable of a `--no-` switch as the switch's value."""
    env = {"PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_COMPILE": "0"}
    if launcher_python() == tuple(sys.version_info[:2]):
        env["PIP_NO_INDEX"] = "1"
    return env


def wheelhouse() -> Path:
    """The folder of wheels for `requirements()` on this Python, filled with `pip wheel` when missing."""
    wanted = "\n".join(requirements())
    tiny_text = TINY.format(name=EXTRA, version=EXTRA_VERSION)
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    wheel_hash = hashlib.sha256(f"{tag}\n{wanted}\n{tiny_text}".encode()).hexdigest()[:16]
    folder = cache_root() / f"wheelhouse-{tag}-{wheel_hash}"
    done_mark = folder / ".complete"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done_mark.exists():
            folder.mkdir(exist_ok=True)
            (folder / "requirements.txt").write_text(wanted + "\n")
            env = {k: v for k, v in os.environ.items() if k not in ("PIP_NO_INDEX", "PIP_REQUIRE_VIRTUALENV")}
            done = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                 "--wheel-dir", str(folder), "-r", str(folder / "requirements.txt")],
                capture_output=True, text=True, timeout=900, env=env,
            )
            if done.returncode == 0:
                tiny = tiny_package(folder / "tiny-source", EXTRA, EXTRA_VERSION)
                done = subprocess.run(
                    [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                     "--find-links", str(folder), "--no-index", "--wheel-dir", str(folder), str(tiny)],
                    capture_output=True, text=True, timeout=900, env=env,
                )
            if done.returncode != 0:
                raise RuntimeError(f"pip wheel into {folder} failed:\n{done.stdout}{done.stderr}")
            done_mark.write_text(wanted + "\n")
    return folder


def uv_env(wheels: Path, cache: Path) -> dict[str, str]:
    """What makes the launcher build with the real uv of the test environment (`uv` in pyproject's test extra,
    from PyPI) from `wheels` and nothing else, its cache in `cache` (uv reads none of pip's variables)."""
    uv = Path(sysconfig.get_path("scripts")) / "uv"
    assert uv.is_file(), f"no uv at {uv}: `make .venv/.installed-test` installs the test extra, uv among it"
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))  # the Python `wheels` are for
    return {"ATTEND_UV": str(uv), "ATTEND_PYTHON": base, "UV_FIND_LINKS": str(wheels), "UV_NO_INDEX": "1",
            "UV_CACHE_DIR": str(cache), "UV_PYTHON_DOWNLOADS": "never"}


def launcher_env(home: Path, data: Path | None, **extra: str) -> dict[str, str]:
    """The environment a launcher runs with in a test: this one without Claude's, XDG or attend variables,
    a throwaway HOME and CLAUDE_PLUGIN_DATA=`data` (the launcher's virtualenv is data/venv; None: unset, as
    in a plugin monitor's environment). It builds with pip (ATTEND_UV empty, a uv on PATH or not) unless
    `extra` says otherwise (uv_env)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "XDG_", "ATTEND_", "UV_"))}
    env.update(HOME=str(home), ATTEND_UV="")
    if data is not None:
        env["CLAUDE_PLUGIN_DATA"] = str(data)
    env.update(extra)
    return env
