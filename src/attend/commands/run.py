"""`attend run`: the command around `runtime.serve` (signals, a closed stdout, exit codes)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, TextIO, cast

import trio

from attend.files import run_lock_path
from attend.peers.identity import Session, SessionError, resolve_session
from attend.runtime.serve import StreamClosed, serve_session
from attend.runtime.sessions.runlock import open_lock
from attend.runtime.sessions.runlog import RunLog, log_path
from attend.runtime.sessions.upkeep import Reexec, found, reexec_argv

if TYPE_CHECKING:
    from typing import Protocol

    from attend.commands import ProjectArgs

    class RunArgs(ProjectArgs, Protocol):
        session: str | None
        headless: bool


async def _serve_until_signalled(project_dir: str, session: Session, stderr: TextIO) -> None:
    await _until_signalled(partial(serve_session, project_dir, session, stderr=stderr))


async def _until_signalled(serve: Callable[..., Awaitable[None]]) -> None:
    """Run `serve` until it returns or SIGINT/SIGTERM arrives."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async def served(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
                task_status.started()
                await serve()
                nursery.cancel_scope.cancel()

            await nursery.start(served)

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(stop_on_signal)


def _closed_stream(exc: BaseException) -> bool:
    """True when `exc` (or every exception of a group) is a closed stream."""
    if isinstance(exc, StreamClosed | BrokenPipeError):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_closed_stream(inner) for inner in exc.exceptions)
    return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into a closed pipe says nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(args: RunArgs) -> int:
    """`attend run [--session ID]`: this session's Monitor stream; polls while it holds the project's lock.

    Exits 0 on SIGINT/SIGTERM and when stdout's reader goes away; 2 for an unusable session id (a
    project directory that does not exist is refused by `attend.cli.main`, for every command); 1 when the
    state store cannot be used.
    """
    from attend.commands import reports_refusals, unusable_store_line
    from attend.errors import EXIT_FAILED, EXIT_USAGE

    try:
        session = resolve_session(getattr(args, "session", None))
    except SessionError as exc:
        print(f"attend: {exc}", file=sys.stderr)
        return EXIT_USAGE

    @reports_refusals
    def check_store(_: RunArgs) -> int:
        # Checked before trio starts, so an unusable store is one clear line (not an exception group).
        from attend.runtime.store import open_project_store
        from attend.spec import layer_paths

        open_lock(run_lock_path(args.project_dir)).close()
        open_project_store(layer_paths(args.project_dir, os.environ)).close()
        return 0

    code = check_store(args)
    if code:
        return code
    from attend.runtime.store.location import on_notice

    # What it says on stderr nobody in Claude Code sees: the run log keeps it for doctor and SessionStart.
    stderr = cast("TextIO", RunLog(sys.stderr, log_path(args.project_dir)))  # a text stream by duck typing

    def say(message: str) -> None:
        stderr.write(f"attend: {message}\n")
        stderr.flush()

    on_notice(say)
    try:
        if getattr(args, "headless", False):
            from attend.runtime.headless import serve_headless

            _silence_stdout()  # a headless poller prints nothing, and never into a pipe someone left
            trio.run(_until_signalled, partial(serve_headless, args.project_dir, stderr=stderr))
            return 0
        trio.run(_serve_until_signalled, args.project_dir, session, stderr)
    except BaseException as exc:  # noqa: BLE001 - only a closed stream, a re-exec and an unusable store are handled
        again = found(exc, (Reexec,))
        if again is not None:
            _reexec(again, stderr)
        store = _store_failure(exc)
        if store is not None:
            # The store became unusable while running (deleted tables, a garbage page, a truncated file).
            stderr.write(f"attend: {unusable_store_line(args, store)}\n")
            stderr.flush()
            return EXIT_FAILED
        if not _closed_stream(exc):
            raise
        _silence_stdout()
    finally:
        on_notice(None)
    return 0


def _store_failure(exc: BaseException) -> BaseException | None:
    """The store error that ended the daemon (possibly inside an exception group), or None."""
    import sqlite3

    from attend.runtime.store import StoreUnavailable

    if isinstance(exc, StoreUnavailable | sqlite3.Error):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _store_failure(inner)
            if found is not None:
                return found
    return None


def _reexec(again: BaseException, stderr: TextIO) -> None:
    """Start this `attend run` again as itself (upkeep.py `Reexec`: `/clear`, a new plugin version)."""
    stderr.write(f"attend: {again}\n")
    stderr.flush()
    sys.stdout.flush()
    os.environ.update(getattr(again, "env", {}))
    argv = reexec_argv(sys.argv)
    os.execv(argv[0], argv)
