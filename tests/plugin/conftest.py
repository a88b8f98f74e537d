"""Fixtures for the Claude Code plugin tests (the CLI itself: claude_rig.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from claude_rig import REPO, installed_claude


@pytest.fixture(scope="session")
def claude() -> Path:
    """The real `claude` CLI of the pinned release (installed into the test cache on first use)."""
    exe = installed_claude()
    if exe is None:
        pytest.skip("npm is not installed: the plugin tests need Node.js to install Claude Code")
    return exe


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the repository as a clone would have it: tracked and new files, nothing git ignores
    (no .venv, no caches), so the plugin is tested as a user's checkout is."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    dest = tmp_path / "attend-checkout"
    for name in filter(None, listed):
        source = REPO / name
        target = dest / name
        if source.is_symlink():  # plugin/'s links to the plugin's parts stay links, as git keeps them
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(source), target)
            continue
        if not source.is_file():
            continue  # deleted in the work tree but still in the index
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return dest
