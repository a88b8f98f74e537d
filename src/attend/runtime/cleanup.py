"""`attend cleanup`: the state of projects whose folder is gone (upstream `cleanup`; docs/runtime.md, Cleanup).

What attend keeps about a project, all of it in attend's own folders:

- rows of the store (`$XDG_STATE_HOME/attend/attend.db`) under the project's scope: trigger state, sensor
  status, pending accumulations, the journal, crate state, session records and what each session saw,
  shelves and the poll history (store/tables.py `PROJECT_TABLES`), and the hash remembered for it;
- files in the state folder named by the project's hash: its run lock `run-<hash>.lock`, its run log
  `run-<hash>.log`, its sessions' doorbell locks `doorbell-<hash>-<session>.lock`;
- its peers tray `$XDG_CACHE_HOME/attend/peers/p-<hash>/` (mail sent to it), whose `.project` names it.

Decisions implemented here:

- Never by age. A project is **gone** when its folder is not a folder any more (a folder that cannot be
  seen, such as one on a drive that is not mounted, counts as gone: `--dry-run` shows what would go). It is
  **running** while its run lock is held (an `attend run` or a headless poller polls it) or one of its
  sessions is live (its `attend run`, its Claude Code process, or a doorbell it holds runs), and
  **stopped** otherwise (its folder is there and nothing of attend runs for it).
- `cleanup` removes the state of gone projects; `--all` the state of stopped ones too, except their peers
  tray: mail sent to a stopped project waits for its next session (DESIGN.md, Peers: nothing expires), so
  only a gone project's tray goes. A running project is never touched, gone or not (its `attend run` ends
  by itself once its folder is gone; run cleanup again after).
- While a project's state is removed its run lock is held (taken without waiting), so no poller starts
  for it meanwhile; a project whose lock is taken in between is running and left.
- Only what attend wrote goes, and never through a link: a file is removed only when it is a regular file
  with one of the names above directly in the state folder (`lstat`: a symlink there, wherever it points,
  is left, and so is a lock file that is one); a tray only as `Mailbox.gone_trays` allows. The state folder
  and the peers folder are read, never walked into any other folder. Probe records (a sensor's, not a
  project's) and the MCP server logs (a server's) stay.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attend.files import project_hash, run_lock_holder, state_folder

__all__ = ["ProjectState", "clean", "survey"]

#: The state-folder files named by a project's hash: its run lock and log, its sessions' doorbell locks.
HASH_FILE_RE = re.compile(r"(?:run-(?P<run>[0-9a-f]{16})\.(?:lock|log)|doorbell-(?P<bell>[0-9a-f]{16})-[^/]+\.lock)\Z")


@dataclass(slots=True)
class ProjectState:
    """What attend keeps about one project, and whether it may go."""

    project: str
    status: str  # gone | stopped | running
    rows: dict[str, int] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    #: The project's peers tray when it goes with the state: (folder, message file names).
    tray: tuple[Path, list[str]] | None = None
    removed: bool = False
    #: Why a project that was to go was left ("" when it was not).
    left: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "status": self.status, "rows": self.rows,
                "files": [str(p) for p in self.files],
                "tray": None if self.tray is None else {"folder": str(self.tray[0]), "messages": len(self.tray[1])},
                "removed": self.removed, "left": self.left}


def _hash_files(folder: Path) -> dict[str, list[Path]]:
    """The state folder's regular files named by a project hash (never a symlink), by hash."""
    found: dict[str, list[Path]] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                match = HASH_FILE_RE.fullmatch(entry.name)
                if match is None or not entry.is_file(follow_symlinks=False):
                    continue
                found.setdefault(match.group("run") or match.group("bell"), []).append(Path(entry.path))
    except OSError:
        return {}
    return {hashed: sorted(paths) for hashed, paths in found.items()}


def _running(project: str, store_path: Path, files: list[Path]) -> bool:
    """Whether anything of attend runs for `project`: its run lock or a doorbell lock held, a session live."""
    if any(run_lock_holder(path) is not None for path in files if path.suffix == ".lock"):
        return True
    if not store_path.is_file():
        return False
    from attend.runtime.sessions.status import live_sessions
    from attend.runtime.store import Store

    with Store(store_path, scope=project) as store:
        return bool(live_sessions(store.sessions()))


def survey(env: Mapping[str, str]) -> list[ProjectState]:
    """Every project attend keeps state about in this home (sorted by path), with its status, its rows and
    files, and a gone project's tray."""
    from attend.peers.mailbox import Mailbox, peers_dir
    from attend.runtime.store import Store, default_db_path

    folder = state_folder(env)
    store_path = default_db_path(folder)
    rows: dict[str, dict[str, int]] = {}
    if store_path.is_file():
        with Store(store_path) as store:
            rows = store.project_rows()
    rows.pop("", None)  # rows of no project (an in-process daemon's): nobody's folder to be gone
    files = _hash_files(folder)
    trays = {project: (tray, names) for tray, project, names in Mailbox(peers_dir(env)).gone_trays()}
    out = []
    for project in sorted(set(rows) | set(trays)):
        mine = files.get(project_hash(project), [])
        status = "running" if _running(project, store_path, mine) else "stopped" if os.path.isdir(project) else "gone"
        state = ProjectState(project, status, rows.get(project, {}), mine)
        if status == "gone":
            state.tray = trays.get(project)
        out.append(state)
    return out


@contextlib.contextmanager
def _held(path: Path) -> Any:
    """The run lock at `path`, taken without waiting and never through a symlink: yields True when held,
    False when another process holds it (the project runs)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _remove_file(path: Path) -> None:
    """Remove `path` when it is still a regular file (checked with `lstat` just before)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)


def clean(states: list[ProjectState], env: Mapping[str, str], *, include_stopped: bool = False) -> None:
    """Remove the state of the gone projects among `states` (with `include_stopped`, the stopped ones' too; their
    trays stay), holding each one's run lock meanwhile; each removed state is marked `removed`, each left one
    says why in `left`."""
    from attend.peers.mailbox import Mailbox
    from attend.runtime.store import Store, default_db_path, make_state_folder

    folder = state_folder(env)
    store_path = default_db_path(folder)
    for state in states:
        if state.status != "gone" and not (include_stopped and state.status == "stopped"):
            continue
        lock = folder / f"run-{project_hash(state.project)}.lock"
        try:
            make_state_folder(folder)
            with _held(lock) as held:
                if not held:
                    state.left = "a poller took its run lock meanwhile"
                    continue
                if state.rows:
                    with Store(store_path, scope=state.project) as store:
                        store.remove_project(state.project)
                for path in state.files:
                    if run_lock_holder(path) is None or path == lock:
                        _remove_file(path)
                _remove_file(lock)  # still held: a poller that starts now takes a new file
                if state.tray is not None:
                    Mailbox.remove_tray(*state.tray)
                state.removed = True
        except OSError as exc:  # the lock is a symlink (ELOOP), or the folder is not writable
            state.left = f"its run lock {lock} cannot be taken: {exc.strerror or exc}"
