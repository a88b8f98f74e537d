"""`attend run` stays up (DESIGN.md, "Delivery": Staying up).

`attend run` ends only when told (a signal), when its stdout is closed, or when its project is gone.
Everything else that used to end it, or to leave it running deaf, is noticed here, logged (the run log
keeps it: runtime/sessions/runlog.py; `attend doctor` lists the lines saying `recovered`), and
recovered from in place:

- A failure of its own polling loop (`keep_polling`): logged with its cause; the loop starts again
  after a short backoff. The trigger state lives in the store, so nothing re-baselines.
- The state folder removed, or the store file replaced, under it (`Upkeep.check`): the poller writes
  the store again from the connection it still has to the old file (`StoreConnection.follow_file`:
  every row, so nothing re-baselines and no journal id is reused) and takes its run lock again; every
  other session reopens the file the poller wrote. A poll made meanwhile went into the old file and is
  in the copy, so no later line is lost.
- Claude Code's `/clear` gives the session a new id: its record `~/.claude/sessions/<pid>.json`
  names the new one. The new id inherits the old one's position and seen items (store/session_rows.py
  `inherit_session`) and the process starts again as itself (`Reexec`), serving the new id.
- A new plugin version installed under it (`bin/attend` names its virtualenv and version in
  `ATTEND_PLUGIN_VENV`, `ATTEND_PLUGIN_VERSION`): the virtualenv's version stamp changed, so the
  process starts again as itself (`Reexec`) on the new code: the files it would import later are gone.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import IO, Any

import trio

from attend.files import run_lock_path
from attend.peers.identity import Session, claude_record
from attend.runtime.sessions.runlock import open_lock, try_lock
from attend.runtime.sessions.runlog import RECOVERED

__all__ = ["UPKEEP", "Reexec", "Upkeep", "found", "keep_polling", "reexec_argv"]

#: How often `attend run` checks its store, its session id and its plugin version (seconds).
UPKEEP = 1.0
#: The longest wait (seconds) before a failed polling loop starts again.
RESTART_BACKOFF = 30.0
#: The plugin virtualenv's version stamp (bin/attend writes it).
STAMP = ".attend-plugin-version"


class Reexec(Exception):
    """`attend run` starts again as itself: `env` holds what changes in its environment."""

    def __init__(self, reason: str, env: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.env = dict(env or {})


def reexec_argv(argv: list[str]) -> list[str]:
    """The command line that starts this `attend run` again: the same interpreter and arguments."""
    import sys

    return [sys.executable, "-P", "-m", "attend", *argv[1:]]


def found(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of one of `kinds` in `exc` or in its group, or None."""
    if isinstance(exc, kinds):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            hit = found(inner, kinds)
            if hit is not None:
                return hit
    return None


async def keep_polling(run: Callable[[], Awaitable[None]], log: Callable[[str], None], *,
                       ends: tuple[type[BaseException], ...]) -> None:
    """Run the polling loop `run` again whenever it fails; an exception of `ends` (anywhere in a group) ends it."""
    failures = 0
    while True:
        try:
            await run()
            return
        except Exception as exc:  # noqa: BLE001 - logged and recovered; only `ends` end attend run
            if found(exc, ends) is not None:
                raise
            failures += 1
            wait = min(RESTART_BACKOFF, 2.0 ** failures)
            cause = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1 else exc
            log(f"the polling loop failed ({type(cause).__name__}: {cause}); {RECOVERED} in place: it starts "
                f"again in {wait:g} s (failure {failures})")
            await trio.sleep(wait)


class Upkeep:
    """What keeps one `attend run` serving: its store files, run lock, session id and plugin version.

    Args:
        project_dir: the project.
        env: the environment.
        session: the session served.
        stores: the process's open stores (the daemon's is added when it starts polling).
        polling: whether this process holds the run lock now.
        log: one line of the process's log.
        lock: the run lock file this process holds or waits on.
        on_conduits: told `attend.delivery.conduits` whenever its config files changed.
    """

    def __init__(self, project_dir: Path, env: Mapping[str, str], session: Session, stores: list[Any],
                 polling: Callable[[], bool], log: Callable[[str], None], lock: IO[str],
                 on_conduits: Callable[[str], None] | None = None) -> None:
        self.project_dir = project_dir
        self.env = env
        self.session = session
        self.stores = stores
        self.polling = polling
        self.log = log
        self.lock = lock
        self.on_conduits = on_conduits
        self._config_seen: tuple[Any, ...] | None = None
        #: The two config files (where they are depends only on the project and the environment: found once)
        self._config_files: tuple[Path, Path] | None = None
        self.version = env.get("ATTEND_PLUGIN_VERSION")
        self.venv = env.get("ATTEND_PLUGIN_VENV")
        try:
            # The id this process served before it started again as itself (`/clear`) is served no more.
            stores[0].release_moved(session.id, os.getpid())
            if session.owner_pid is not None and session.owner_start is not None:
                stores[0].register_session(session.id, host=(session.owner_pid, session.owner_start))
        except Exception:  # noqa: BLE001 - without it, /clear starts the new id afresh
            pass

    async def run(self) -> None:
        """Check every `UPKEEP` seconds; `Reexec` ends the serving for a new start."""
        while True:
            await trio.sleep(UPKEEP)
            try:
                self.check()
            except Reexec:
                raise
            except Exception as exc:  # noqa: BLE001 - the next round tries again
                self.log(f"upkeep failed ({type(exc).__name__}: {exc}); it tries again in {UPKEEP:g} s")

    def check(self) -> None:
        """One round: the store and lock, then `/clear`, then the plugin version, then the conduits."""
        self._store()
        self._cleared()
        self._plugin()
        self._conduits()

    def _store(self) -> None:
        poller = self.polling()
        for store in self.stores:
            done = store.follow_file(restore=poller)
            if done == "restored":
                self.log(f"the state store {store.path} was removed or replaced; {RECOVERED} in place: "
                         "written again from this poller's copy (trigger state and journal kept)")
            elif done == "reopened" and store is self.stores[0] and not poller:
                self.log(f"the state store {store.path} was replaced; reopened it")
        if poller:
            path = run_lock_path(self.project_dir, self.env)
            try:
                same = os.fstat(self.lock.fileno()).st_ino == os.stat(path).st_ino
            except OSError:
                same = False
            if not same:
                lock = open_lock(path)
                if try_lock(lock):
                    self.lock.close()
                    self.lock = lock
                    self.log(f"the run lock {path} was removed; {RECOVERED} in place: taken again")
                else:
                    lock.close()

    def _cleared(self) -> None:
        owner = self.session.owner_pid
        if owner is None:
            return
        now = claude_record(owner, self.env)
        if now is None or now == self.session.id:
            return
        self.stores[0].inherit_session(self.session.id, now)
        raise Reexec(f"Claude Code's session {self.session.id} is {now} now (/clear); it keeps the old one's "
                     "position; attend run starts again for it")

    def _conduits(self) -> None:
        """`attend.delivery.conduits`, read again when a config file changed (its size, time or inode)."""
        if self.on_conduits is None:
            return
        from attend.runtime.sessions.handover import conduits

        if self._config_files is None:
            from attend.spec import layer_paths

            paths = layer_paths(self.project_dir, self.env)
            self._config_files = (paths.config_file, paths.project_config_file)
        seen = tuple(_file_version(p) for p in self._config_files)
        if seen == self._config_seen:
            return
        self._config_seen = seen
        self.on_conduits(conduits(self.project_dir, self.env))

    def _plugin(self) -> None:
        if not self.venv or not self.version:
            return
        try:
            installed = (Path(self.venv) / STAMP).read_text().strip()
        except OSError:
            return  # mid-install: the next round looks again
        if installed and installed != self.version:
            raise Reexec(f"attend {installed} was installed under this attend run ({self.version}); "
                         f"{RECOVERED} in place: it starts again on the new version",
                         {"ATTEND_PLUGIN_VERSION": installed})


def _file_version(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed file apart: its inode, size and modification time (None: no such file)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns
