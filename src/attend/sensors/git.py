"""The git sensor: the working tree, branch, commits and upstream of the project's repository.

It stays compiled (ADR-403 §1 names git as the first candidate for a command file): git prints no
JSON, the spec's `lines` output is the magnitude form rather than data, and "new commits since the
last poll" needs the previous HEAD, which a stateless command can't hold. The sensor reads the
repository with two or three git commands per poll (``GIT_OPTIONAL_LOCKS=0``, so it never takes the
index lock a concurrent ``git commit`` needs; each started by ``attend.children.run`` in the poll's
environment, its group ended past ``command_timeout``) and returns one JSON-like snapshot; the triggers in
``sensors.d/git.yaml`` decide what is a change worth reporting.

Result::

    {"branch": "main", "head": "<sha>", "upstream_name": "origin/main",
     "upstream": [{"name": "origin/main", "head": "<sha>", "short": "<sha7>"}],
     "ahead": 0, "behind": 0,
     "commits": [{"sha", "short", "author", "subject"}],   # new on this branch since the last poll
     "dirty": [{"path", "status", "change"}], "dirty_count": 3, "clean": false}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attend.children import ChildTimeout, Finished, run
from attend.sensors.base import Focus, SensorUnavailable, require, require_seconds

__all__ = ["GitSensor", "Head", "describe_change", "git_dirs", "parse_porcelain_v2", "read_head", "wake_paths"]

#: The environment every git command runs with: no optional locks (git status would otherwise
#: refresh the index and hold index.lock), no pager, no prompts, the C locale for stable output.
GIT_ENV_OVERRIDES: dict[str, str] = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
}

#: A field separator git never emits inside a name or a subject line.
_UNIT_SEP = "\x1f"


@dataclass(frozen=True, slots=True)
class StatusSnapshot:
    """What ``git status --porcelain=v2 --branch -z`` says."""

    head: str
    branch: str
    upstream_name: str
    ahead: int
    behind: int
    dirty: tuple[tuple[str, str], ...]  # (path, XY status), sorted by path


def parse_porcelain_v2(text: str) -> StatusSnapshot:
    """Parse the NUL-separated output of ``git status --porcelain=v2 --branch -z``.

    Args:
        text: The command's stdout.

    Returns:
        The snapshot; `head` is empty before the first commit, `branch` is ``(detached)`` on a detached
        HEAD, `upstream_name` is empty without an upstream.
    """
    head = branch = upstream = ""
    ahead = behind = 0
    dirty: list[tuple[str, str]] = []
    fields = text.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if not entry:
            continue
        if entry.startswith("# "):
            _, key, value = (entry.split(" ", 2) + [""])[:3]
            if key == "branch.oid":
                head = "" if value == "(initial)" else value
            elif key == "branch.head":
                branch = value
            elif key == "branch.upstream":
                upstream = value
            elif key == "branch.ab":
                a, _, b = value.partition(" ")
                ahead, behind = int(a.lstrip("+") or 0), int(b.lstrip("-") or 0)
            continue
        kind = entry[0]
        if kind == "?":
            dirty.append((entry[2:], "??"))
        elif kind == "1":
            dirty.append((entry.split(" ", 8)[8], entry[2:4]))
        elif kind == "2":
            dirty.append((entry.split(" ", 9)[9], entry[2:4]))
            i += 1  # a rename's original path follows as its own field
        elif kind == "u":
            dirty.append((entry.split(" ", 10)[10], entry[2:4]))
        # "!" (ignored) entries are not requested and not reported.
    return StatusSnapshot(head, branch, upstream, ahead, behind, tuple(sorted(dirty)))


#: The word for each status letter, in the order a change is named (worktree first, then index).
_CHANGE_WORDS = {"M": "modified", "T": "type changed", "A": "added", "D": "deleted", "R": "renamed", "C": "copied"}


def describe_change(xy: str) -> str:
    """One word for a porcelain XY status: ``untracked``, ``conflicted``, ``modified``, ``added``, …"""
    if xy == "??":
        return "untracked"
    if "U" in xy or xy in ("AA", "DD"):
        return "conflicted"
    for letter in (xy[1:2], xy[:1]):
        if letter in _CHANGE_WORDS:
            return _CHANGE_WORDS[letter]
    return "changed"


def git_dirs(cwd: Path) -> tuple[Path, Path] | None:
    """The git directory and the common directory of the repository holding `cwd`, read from disk.

    A `.git` folder is both. A `.git` file (a linked worktree, a submodule) names the git directory
    (``gitdir: PATH``, relative to the file's folder); a ``commondir`` file inside it names the
    common directory (relative to the git directory), where refs and packed-refs live. None when no
    folder from `cwd` up holds a `.git`, or the `.git` file cannot be read.
    """
    for folder in (cwd, *cwd.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return dotgit, dotgit
        if dotgit.is_file():
            try:
                text = dotgit.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            first = text.splitlines()[0] if text else ""
            if not first.startswith("gitdir:"):
                return None
            gitdir = Path(os.path.normpath(folder / first[len("gitdir:"):].strip()))
            try:
                common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
            except OSError:
                return gitdir, gitdir
            return gitdir, Path(os.path.normpath(gitdir / common))
    return None


@dataclass(frozen=True, slots=True)
class Head:
    """What the repository's HEAD names, read from git's own files: the branch (empty on a detached
    HEAD) and the commit (empty before the first commit)."""

    branch: str
    sha: str


def read_head(cwd: Path) -> Head | None:
    """The HEAD of the repository holding `cwd`, read from its files (no git process): the branch of
    ``ref: refs/heads/NAME`` and the commit that ref (a loose file, else ``packed-refs``) or a detached
    HEAD names. None without a repository or a readable HEAD."""
    found = git_dirs(cwd)
    if found is None:
        return None
    gitdir, common = found
    try:
        text = (gitdir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("ref:"):
        return Head("", text)
    ref = text[len("ref:"):].strip()
    branch = ref.removeprefix("refs/heads/")
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return Head(branch, "")  # not a ref git would write: its commit is not looked for
    for folder in (gitdir, common):  # a ref is per worktree only in rare layouts; refs/heads live in common
        try:
            return Head(branch, (folder / ref).read_text(encoding="utf-8").strip())
        except OSError:
            continue
    try:
        packed = (common / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Head(branch, "")
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return Head(branch, sha)
    return Head(branch, "")


def wake_paths(cwd: Path) -> list[str]:
    """What a change in the repository at `cwd` touches: HEAD and index (per worktree), refs and
    packed-refs (shared). Without a repository, the paths a `git init` in `cwd` would create."""
    found = git_dirs(cwd)
    gitdir, common = found if found is not None else (cwd / ".git", cwd / ".git")
    return [str(gitdir / "HEAD"), str(gitdir / "index"), str(common / "packed-refs"), str(common / "refs" / "**")]


class GitSensor:
    """Polls the git repository that holds the focus directory.

    Crate fields (all set in ``sensors.d/git.yaml``): `dirty_limit` (how many dirty paths a result
    lists, sorted by path; `dirty_count` always holds the full count), `commit_limit` (how many new
    commits one poll lists), `command_timeout` (seconds per git command).

    State between polls: the folder, branch and HEAD of the last poll, so `commits` lists only what is
    new. The store holds one state per sensor name, so a state from another folder (attend run in
    another project) is not compared with this one.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.dirty_limit: int = require(config, "dirty_limit", int)
        self.commit_limit: int = require(config, "commit_limit", int)
        self.command_timeout: float = require_seconds(config, "command_timeout")
        self._last_cwd: str | None = None
        self._last_branch: str | None = None
        self._last_head: str | None = None

    # --- state --------------------------------------------------------------------------------
    def export_state(self) -> dict[str, Any]:
        """The folder, branch and HEAD this sensor last saw."""
        return {"cwd": self._last_cwd, "branch": self._last_branch, "head": self._last_head}

    def import_state(self, state: Any) -> None:
        """Restore what `export_state` returned (ignored when it is not the expected shape)."""
        if isinstance(state, dict):
            cwd, branch, head = state.get("cwd"), state.get("branch"), state.get("head")
            self._last_cwd = cwd if isinstance(cwd, str) else None
            self._last_branch = branch if isinstance(branch, str) else None
            self._last_head = head if isinstance(head, str) else None

    # --- wake_on ------------------------------------------------------------------------------
    def wake_on(self, focus: Focus) -> list[str]:
        """The paths whose change polls this sensor at once (runtime/watching/wake.py): see `wake_paths`."""
        return wake_paths(focus.cwd)

    # --- poll ---------------------------------------------------------------------------------
    def poll(self, focus: Focus) -> dict[str, Any]:
        """One snapshot of the repository at `focus.cwd`.

        Raises:
            SensorUnavailable: git is not installed, or `focus.cwd` is not inside a work tree.
        """
        cwd = focus.cwd
        status = self._git(focus, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
        if status.returncode != 0:
            raise SensorUnavailable(f"no git work tree at {cwd}: {status.err_text.strip() or 'git status failed'}")
        snap = parse_porcelain_v2(status.out_text)

        upstream: list[dict[str, str]] = []
        if snap.upstream_name:
            found = self._git(focus, "rev-parse", "--verify", "--quiet", f"{snap.upstream_name}^{{commit}}")
            if found.returncode == 0 and found.out_text.strip():
                sha = found.out_text.strip()
                upstream.append({"name": snap.upstream_name, "head": sha, "short": sha[:7]})

        commits = self._new_commits(focus, snap) if self._last_cwd == str(cwd) else []
        self._last_cwd, self._last_branch, self._last_head = str(cwd), snap.branch, snap.head

        dirty = [
            {"path": path, "status": xy, "change": describe_change(xy)}
            for path, xy in snap.dirty[: self.dirty_limit]
        ]
        return {
            "branch": snap.branch,
            "head": snap.head,
            "upstream_name": snap.upstream_name,
            "upstream": upstream,
            "ahead": snap.ahead,
            "behind": snap.behind,
            "commits": commits,
            "dirty": dirty,
            "dirty_count": len(snap.dirty),
            "clean": not snap.dirty,
        }

    def _new_commits(self, focus: Focus, snap: StatusSnapshot) -> list[dict[str, str]]:
        """Commits reachable from HEAD and not from the last poll's HEAD, on the same branch.

        A branch switch, a first poll or a rewritten history (the old HEAD is no longer an ancestor)
        lists nothing: those are reported by other triggers, and listing the whole other branch as
        "new" would be a flood.
        """
        last = self._last_head
        if not last or not snap.head or last == snap.head or snap.branch != self._last_branch:
            return []
        if self._git(focus, "merge-base", "--is-ancestor", last, snap.head).returncode != 0:
            return []
        fmt = _UNIT_SEP.join(("%H", "%h", "%an", "%s"))
        log = self._git(focus, "log", f"--format={fmt}", f"-n{self.commit_limit}", f"{last}..{snap.head}")
        commits = []
        for line in log.out_text.splitlines():
            parts = line.split(_UNIT_SEP)
            if len(parts) == 4:
                commits.append(dict(zip(("sha", "short", "author", "subject"), parts, strict=True)))
        commits.reverse()  # oldest first, the order they were made
        return commits

    def _git(self, focus: Focus, *args: str) -> Finished:
        """`git ARGS` in the focus directory, in the poll's environment (`focus.env`) with GIT_ENV_OVERRIDES;
        past `command_timeout` its process group is ended (`attend.children.run`)."""
        env = {**focus.env, **GIT_ENV_OVERRIDES}
        try:
            return run(["git", *args], env=env, cwd=focus.cwd, timeout=self.command_timeout)
        except FileNotFoundError as exc:
            raise SensorUnavailable(f"git is not installed or {focus.cwd} does not exist: {exc.strerror}") from exc
        except ChildTimeout as exc:
            raise SensorUnavailable(f"git {args[0]} took longer than {self.command_timeout:g} s") from exc
