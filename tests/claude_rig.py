"""The real Claude Code CLI for the plugin tests, installed once into a cache outside the repository.

`npm install @anthropic-ai/claude-code@<CLAUDE_CODE_VERSION>` goes into the tests' npm cache (npm_cache.py:
$ATTEND_TEST_CACHE, else $XDG_CACHE_HOME/attend-test, else ~/.cache/attend-test), so a fresh machine
installs it on the first run and every later run (and every xdist worker) reuses it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from npm_cache import npm_installed

#: The Claude Code release the plugin is tested against.
CLAUDE_CODE_VERSION = "2.1.328"

REPO = Path(__file__).resolve().parents[1]


def claude_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment the Claude Code CLI runs with: a throwaway HOME, and no network chatter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "XDG_"))}
    env.update(
        HOME=str(home),
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    env.update(extra)
    return env


def as_installed(root: Path, dest: Path) -> Path:
    """The plugin of the marketplace at `root` as Claude Code installs it: plugin/ with its links followed."""
    return Path(shutil.copytree(root / "plugin", dest, symlinks=False,
                                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")))


def copy_checkout(dest: Path) -> Path:
    """The repository copied to `dest` as a clone would have it: tracked and new files, nothing git ignores
    (no .venv, no caches); plugin/'s links stay links."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")
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


def path_without_attend() -> str:
    """The directories of this PATH that hold no `attend`, plus the base interpreter's own folder."""
    base = os.path.dirname(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    dirs = [base] + os.environ.get("PATH", "").split(os.pathsep)
    kept = [d for d in dict.fromkeys(dirs) if d and not os.path.exists(os.path.join(d, "attend"))]
    return os.pathsep.join(kept)


def installed_claude() -> Path | None:
    """The `claude` executable of the pinned release, installed when missing; None when npm is missing."""
    folder = npm_installed(f"claude-code-{CLAUDE_CODE_VERSION}", f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
                           lambda folder: _works(_exe(folder), folder))
    return None if folder is None else _exe(folder)


def _exe(folder: Path) -> Path:
    return folder / "node_modules" / ".bin" / "claude"


def _works(exe: Path, folder: Path) -> bool:
    if not exe.exists():
        return False
    try:
        done = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60,
                              env=claude_env(folder))
    except OSError:
        return False
    return done.returncode == 0 and CLAUDE_CODE_VERSION in done.stdout
