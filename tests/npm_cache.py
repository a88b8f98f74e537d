"""npm packages the tests run for real, installed once into a cache outside the repository.

A package goes into $ATTEND_TEST_CACHE, else $XDG_CACHE_HOME/attend-test, else ~/.cache/attend-test (one
folder per package and pinned version), so a fresh machine installs it on the first run and every later
run (and every xdist worker) reuses it. Each install is serialised by a file lock next to its folder.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest


def under_ci(env: dict[str, str] | None = None) -> bool:
    """True when the tests run under CI (`CI` set, and not to `false` or `0`)."""
    return (os.environ if env is None else env).get("CI", "").strip().lower() not in ("", "0", "false")


def cannot_run(why: str) -> NoReturn:
    """End a test that needs an npm package this machine cannot install: a skip on a developer's machine, a
    failure under CI (`under_ci`), which must never pass by skipping the real server or host."""
    if under_ci():
        pytest.fail(why + " (CI never skips them)")
    pytest.skip(why)


def cache_root() -> Path:
    named = os.environ.get("ATTEND_TEST_CACHE")
    if named:
        return Path(named)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "attend-test"


def npm_installed(folder_name: str, spec: str, works: Callable[[Path], bool]) -> Path | None:
    """The cache folder holding `spec` (`package@version`) under node_modules, installed when `works(folder)`
    says it is missing or broken; None when npm itself is missing.

    Raises:
        RuntimeError: npm install failed, or the package does not work after it.
    """
    folder = cache_root() / folder_name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder_name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not works(folder):
            npm = shutil.which("npm")
            if npm is None:
                return None
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), spec],
                capture_output=True, text=True, timeout=600,
            )
            if done.returncode != 0 or not works(folder):
                raise RuntimeError(f"npm install of {spec} failed:\n{done.stdout}{done.stderr}")
    return folder
