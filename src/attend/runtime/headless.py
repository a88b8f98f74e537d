"""`attend run --headless`: a poller no session's Monitor prints for (DESIGN.md, "Delivery": Conduits).

Where a session has no Monitor stream (a host without the Monitor tool, a monitor that exited), its
hooks carry its lines (runtime/sessions/handover.py), but something must still poll and journal.

Decisions implemented here:

- A session's hook starts one (`ensure_poller`) when no process holds the project's run lock:
  detached (its own session, stdin and stdout on /dev/null), so it outlives the hook. Two hooks at the
  same moment may both start one; the run lock lets one poll, and the other ends at once, quietly.
- It polls and journals like any poller (the `Daemon`), and prints nothing: it serves no session, so it
  neither moves a session's position nor marks a row printed (`MutePrinter`); each session's conduits
  hand the rows over.
- It ends itself once no session of the project has been live for `idle_limit()` seconds (10 minutes;
  `ATTEND_HEADLESS_IDLE` sets another, for tests): a session is live while its Claude Code process
  runs (runtime/sessions/status.py `live_sessions`: a session its hooks alone serve is live between its
  hooks, however far apart they are), while its `attend run` runs, and, for a session whose Claude Code
  process is not known, while its hooks register it (sessions/register.py, every `HOOK_BEAT` seconds).
  Its own start counts as a beat. Meanwhile it rewrites the presence of each session its hooks alone
  serve, as an `attend run` rewrites its own (sessions/register.py `beat_for_hooks_sessions`).
- A later `attend run` (a Monitor) attaches to it and takes over once it ends, as with any poller.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.faults import env_seconds

__all__ = ["IDLE_LIMIT", "MutePrinter", "ensure_poller", "idle_limit", "serve_headless"]

#: How long a headless poller runs without a live session of its project (seconds).
IDLE_LIMIT = 600.0
#: The environment variable that sets another idle limit (seconds; tests use a short one).
IDLE_VARIABLE = "ATTEND_HEADLESS_IDLE"


def idle_limit(env: Mapping[str, str] | None = None) -> float:
    """The idle limit: `ATTEND_HEADLESS_IDLE` seconds when it is a positive number, else `IDLE_LIMIT`."""
    return env_seconds(IDLE_VARIABLE, IDLE_LIMIT, env)


def ensure_poller(project_dir: Path | str, env: Mapping[str, str] | None = None) -> int | None:
    """Start a detached `attend run --headless` for `project_dir` when no process polls it; its pid, or None.

    Raises:
        OSError: the interpreter could not be started.
    """
    from attend.files import run_lock_holder, run_lock_path

    env = os.environ if env is None else env
    if run_lock_holder(run_lock_path(project_dir, env)) is not None:
        return None
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "attend", "run", "--headless", "--project", str(project_dir)],
        cwd=str(project_dir), env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
    )
    return proc.pid


class MutePrinter:
    """The printer of a poller that serves no session: it prints nothing and records nothing."""

    def __init__(self, stderr: TextIO) -> None:
        self.stderr = stderr

    def wake(self) -> None:
        """Nothing to print."""

    def print_new(self) -> int:
        """Nothing printed."""
        return 0

    async def run(self, *, task_status: Any = None) -> None:
        """Started, and nothing more to do."""
        if task_status is not None:
            task_status.started()


async def serve_headless(
    project_dir: Path | str,
    *,
    env: Mapping[str, str] | None = None,
    stderr: TextIO | None = None,
    clock: Clock = WALL_CLOCK,
) -> None:
    """Poll `project_dir` without printing until no session has been live for `idle_limit()` seconds.

    Ends at once when another process polls the project already.
    """
    import trio

    from attend.files import run_lock_path
    from attend.peers.transport import open_mailbox
    from attend.runtime.daemon import Daemon
    from attend.runtime.sessions.register import beat_for_hooks_sessions
    from attend.runtime.sessions.runlock import holder_pid, open_lock, try_lock
    from attend.runtime.sessions.status import live_sessions
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths
    from attend.text import printable_path

    env = dict(os.environ if env is None else env)
    stderr = stderr or sys.stderr
    project_dir = Path(project_dir)
    limit = idle_limit(env)
    lock = open_lock(run_lock_path(project_dir, env))
    try:
        if not try_lock(lock):
            stderr.write(f"attend: pid {holder_pid(lock)} polls {printable_path(project_dir)} already; "
                         "this headless poller ends\n")
            return
        stderr.write(f"attend: headless poller (pid {os.getpid()}) polls {printable_path(project_dir)}; it ends "
                     f"once no session has been live for {limit:g} s\n")
        stderr.flush()
        store = open_project_store(layer_paths(project_dir, env), clock=clock)
        mailbox = open_mailbox(env, clock)  # the presence of the sessions its hooks alone serve (register.py)
        seen_live = clock()  # its own start counts as a session seen live
        with open(os.devnull, "w") as devnull:
            try:
                daemon = Daemon(project_dir, env=env, stdout=devnull, stderr=stderr, clock=clock,
                                printer=MutePrinter(stderr))
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(daemon.run)
                    while True:
                        await trio.sleep(min(5.0, limit / 4))
                        if live_sessions(store.sessions()):
                            seen_live = clock()  # a live session: the idle time starts again from now
                            beat_for_hooks_sessions(store, mailbox, project_dir)
                        last = max(seen_live, store.last_heartbeat() or 0.0)
                        if clock() - last > limit:
                            stderr.write(f"attend: no session of {printable_path(project_dir)} has been live "
                                         f"for {limit:g} s; the headless poller ends\n")
                            stderr.flush()
                            nursery.cancel_scope.cancel()
            finally:
                store.close()
    finally:
        lock.close()
