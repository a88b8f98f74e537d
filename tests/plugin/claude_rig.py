"""The real Claude Code CLI for the plugin tests, installed once into a cache outside the repository.

`npm install @anthropic-ai/claude-code@<CLAUDE_CODE_VERSION>` goes into $ATTEND_TEST_CACHE, else
$XDG_CACHE_HOME/attend-test, else ~/.cache/attend-test, so a fresh machine installs it on the first run
and every later run (and every xdist worker) reuses it. The install is serialised by a file lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

#: The Claude Code release the plugin is tested against.
CLAUDE_CODE_VERSION = "2.1.328"

REPO = Path(__file__).resolve().parents[2]


def cache_root() -> Path:
    named = os.environ.get("ATTEND_TEST_CACHE")
    if named:
        return Path(named)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "attend-test"


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


def installed_claude() -> Path | None:
    """The `claude` executable of the pinned release, installed when missing; None when npm is missing."""
    folder = cache_root() / f"claude-code-{CLAUDE_CODE_VERSION}"
    exe = folder / "node_modules" / ".bin" / "claude"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"claude-code-{CLAUDE_CODE_VERSION}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _works(exe, folder):
            npm = shutil.which("npm")
            if npm is None:
                return None
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                 f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"],
                capture_output=True, text=True, timeout=600,
            )
            if done.returncode != 0 or not _works(exe, folder):
                raise RuntimeError(f"npm install of Claude Code {CLAUDE_CODE_VERSION} failed:\n{done.stdout}{done.stderr}")
    return exe


def _works(exe: Path, folder: Path) -> bool:
    if not exe.exists():
        return False
    try:
        done = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60,
                              env=claude_env(folder))
    except OSError:
        return False
    return done.returncode == 0 and CLAUDE_CODE_VERSION in done.stdout
