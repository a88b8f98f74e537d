"""The one way attend starts a child process: the command kind's polls, its streams, and every program a
compiled sensor or a peer runs (git, gh).

Decisions:
- A child runs without a shell, with stdin closed, in its own session (so its own process group: ending
  the group ends whatever it started and did not move out of it).
- Its environment is the one its caller states (`env`, required): never the daemon's `os.environ` by
  omission. A sensor's programs get `focus.env`, the poll's environment.
- It dies with attend, even a SIGKILLed attend that runs no cleanup: on Linux the child asks the kernel
  for SIGKILL when its parent thread ends (`prctl(PR_SET_PDEATHSIG)`, between fork and exec; if attend
  died before the request, the child ends itself). The death signal follows the thread that forked, so
  every child is forked by one thread that lives as long as the process (`_spawner`, started on the first
  spawn), never by a passing worker thread (trio's end after 10 s idle, which would take their children
  with them) and never by the event loop's thread (the step before exec makes the spawn a fork, not a
  vfork: a few milliseconds the loop would stand still for). The death signal reaches that process only,
  not the ones it starts. Where there is no prctl (not Linux) a child outlives a killed attend.
- Waits are bounded: the synchronous face (`run`) takes a `timeout`; the trio face (`open_child`) ends
  with its caller's cancel scope. Either way the end is the group's: SIGTERM, up to `grace` seconds for
  the child to exit, then SIGKILL (`grace` 0: SIGKILL at once), and the child is always reaped.

Faces:
- `run(argv, env=, cwd=, timeout=)`: for a thread that may block (a compiled sensor's poll): the whole
  output once the child exits (`Finished`), `ChildTimeout` after the group was ended.
- `open_child(argv, env=, cwd=, stop_grace=)`: for trio: an async context manager giving a `Child` whose
  stdout and stderr are trio streams and whose exit is awaited on a pidfd; leaving the block (done,
  failed or cancelled) ends the group if the child still runs.
Both raise what keeps the program from starting (`OSError`: no such program or cwd; `ValueError`: a NUL
in an argument), as `subprocess.Popen` does.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence
    from concurrent.futures import Future, ThreadPoolExecutor
    from pathlib import Path

    import trio

__all__ = ["KILL_GRACE", "Child", "ChildTimeout", "Finished", "open_child", "run", "signal_group"]

#: Seconds between SIGTERM and SIGKILL when a child's wait runs out.
KILL_GRACE = 2.0


def signal_group(pid: int, sig: int) -> None:
    """Send `sig` to the process group led by `pid` (a child's own); nothing when the group is gone."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


# -- the one spawn ------------------------------------------------------------------------------------


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl (in the interpreter's own symbols), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """The child's step between fork and exec that makes the kernel SIGKILL it when the thread that
    forked it ends (Linux `prctl(PR_SET_PDEATHSIG)`); None where there is no prctl. Looked up before the
    fork, so the child only calls it."""
    prctl = _prctl()
    if prctl is None:
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # attend died before the request: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


_spawner_lock = threading.Lock()
_spawner: ThreadPoolExecutor | None = None


def _the_spawner() -> ThreadPoolExecutor:
    """The one thread that forks every child (see the module's decisions): a one-worker pool, whose worker
    waits for work until the interpreter exits."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from concurrent.futures import ThreadPoolExecutor

            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attend-spawner")
        return _spawner


def _popen(argv: Sequence[str], env: Mapping[str, str], cwd: str | None, stdout: int,
           stderr: int) -> subprocess.Popen[bytes]:
    """Start the child (run on the spawner thread)."""
    return subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=dict(env),
                            cwd=cwd, start_new_session=True, close_fds=True,
                            preexec_fn=_die_with_parent(os.getpid()))


def _spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path | str | None, stdout: int,
           stderr: int) -> Future[subprocess.Popen[bytes]]:
    return _the_spawner().submit(_popen, [str(a) for a in argv], env, None if cwd is None else str(cwd),
                                 stdout, stderr)


# -- the synchronous face -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finished:
    """A child that exited: its exit code (negative: the signal that ended it) and its whole output."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def out_text(self) -> str:
        """stdout as text (UTF-8, an undecodable byte replaced, line ends as `\\n`)."""
        return _text(self.stdout)

    @property
    def err_text(self) -> str:
        """stderr as text (UTF-8, an undecodable byte replaced, line ends as `\\n`)."""
        return _text(self.stderr)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


class ChildTimeout(Exception):
    """A child that had not finished within its timeout; its process group was ended. Not an `OSError` (as
    `TimeoutError` is), so a caller's handler for a child that cannot start never reads it as one."""

    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        super().__init__(f"{argv[0] if argv else ''} did not finish within {timeout:g} s")
        self.argv = list(argv)
        self.timeout = timeout


def run(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | str | None = None, timeout: float,
        kill_grace: float = KILL_GRACE) -> Finished:
    """Run `argv` to its end from a thread that may block, and return its exit code and whole output.

    Args:
        argv: the program and its arguments (no shell).
        env: the child's whole environment.
        cwd: its working directory (None: this process's).
        timeout: seconds it may take, until its output ends.
        kill_grace: seconds between SIGTERM and SIGKILL to its group once `timeout` passed.

    Raises:
        ChildTimeout: it ran past `timeout`; its group was ended and it was reaped.
        OSError: it could not start (no such program or working directory, not executable).
        ValueError: an argument or variable holds a NUL.
    """
    proc = _spawn(argv, env, cwd, subprocess.PIPE, subprocess.PIPE).result()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(proc, kill_grace)
        raise ChildTimeout(argv, timeout) from None
    except BaseException:
        _end(proc, 0)
        raise
    return Finished(proc.returncode, out, err)


def _end(proc: subprocess.Popen[bytes], grace: float) -> None:
    """End `proc`'s group (SIGTERM, `grace`, SIGKILL), reap it and close its pipes."""
    if grace > 0:
        signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    signal_group(proc.pid, signal.SIGKILL)
    proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


# -- the trio face --------------------------------------------------------------------------------------


class Child:
    """A running child as trio sees it: its pid, its stdout and stderr as trio streams, its exit."""

    def __init__(self, proc: subprocess.Popen[bytes], stdout: trio.lowlevel.FdStream,
                 stderr: trio.lowlevel.FdStream) -> None:
        self._proc = proc
        self.pid = proc.pid
        self.stdout = stdout
        self.stderr = stderr

    @property
    def returncode(self) -> int | None:
        """Its exit code once reaped (negative: the signal that ended it); None while it runs."""
        return self._proc.returncode

    def signal_group(self, sig: int) -> None:
        """Send `sig` to its process group."""
        signal_group(self.pid, sig)

    async def wait(self) -> int:
        """Wait for it to exit (on a pidfd; without one, a slow poll) and reap it; its exit code."""
        import trio

        proc = self._proc
        if proc.returncode is not None:
            return proc.returncode
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):  # no pidfd (older kernel, not Linux), or already reaped
            while (code := proc.poll()) is None:
                await trio.sleep(0.2)
            return code
        try:
            await trio.lowlevel.wait_readable(pidfd)
        finally:
            os.close(pidfd)
        return proc.wait()

    async def end(self, grace: float) -> int:
        """End its group: SIGTERM, up to `grace` seconds for it to exit, SIGKILL (`grace` 0: SIGKILL at once);
        its exit code once reaped."""
        import trio

        if grace > 0:
            self.signal_group(signal.SIGTERM)
            with trio.move_on_after(grace):
                await self.wait()
        self.signal_group(signal.SIGKILL)
        return await self.wait()


@asynccontextmanager
async def open_child(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | str | None = None,
                     stop_grace: float = KILL_GRACE) -> AsyncIterator[Child]:
    """Start `argv` and give it as a `Child`; leaving the block (done, failed or cancelled) ends its group
    if it still runs (`Child.end(stop_grace)`, shielded) and closes its pipes.

    Args:
        argv: the program and its arguments (no shell).
        env: the child's whole environment.
        cwd: its working directory (None: this process's).
        stop_grace: seconds between SIGTERM and SIGKILL when the block is left while it runs.

    Raises:
        OSError: it could not start (no such program or working directory, not executable).
        ValueError: an argument or variable holds a NUL.
    """
    import trio

    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        future = _spawn(argv, env, cwd, out_w, err_w)
        done = trio.Event()
        token = trio.lowlevel.current_trio_token()
        future.add_done_callback(lambda _: token.run_sync_soon(done.set))
        with trio.CancelScope(shield=True):  # a few milliseconds; a child started is always ended
            await done.wait()
        proc = future.result()
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    child = Child(proc, trio.lowlevel.FdStream(out_r), trio.lowlevel.FdStream(err_r))
    try:
        yield child
    finally:
        with trio.CancelScope(shield=True):
            if child.returncode is None:
                await child.end(stop_grace)
            await child.stdout.aclose()
            await child.stderr.aclose()
