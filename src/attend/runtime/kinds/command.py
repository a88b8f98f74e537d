"""The command kind: one poll runs an argv without a shell (ADR-403 §1; DESIGN.md, Runtime).

Decisions:
- argv is executed directly, never through a shell; `{branch}` in it is the branch checked out in the project
  at each poll (`process.branch_argv`; a stream's argv does not take it: its process outlives a checkout);
  `env` is merged over the daemon's environment;
  `cwd` is relative to the project directory.
- The child runs in its own session (so its own process group). On timeout the whole group gets
  SIGTERM, then SIGKILL after `KILL_GRACE` seconds, so a script's own children die with it.
- stdout is capped (`max_output`, 1 MiB by default): more is a `malformed` failure, and the group is
  killed as soon as the cap is passed, so a flooding command costs no more than the cap. A JSON output
  holds at most one value or key per 16 bytes of the cap (`DATA_BYTES_PER_VALUE`), so its parsed form
  is bounded too (docs/runtime.md, "Memory per poll").
- stderr is kept (its last `STDERR_TAIL` bytes) for the failure message.
- The output is complete when the command exits: a child it left running that still holds its pipes
  gets `OUTPUT_DRAIN_GRACE` seconds, then the group is killed (it was the poll's, and would otherwise
  turn a finished poll into a `timeout`).
- Failure states: `timeout`, `exit` (non-zero, with the code and the stderr tail), `malformed`
  (invalid JSON, invalid UTF-8, over the cap, a `lines` output with lines of which none parses),
  `exec_failed` (no such program, not executable, no such cwd), `unavailable` (argv names `{branch}` and no
  branch is checked out: no repository, a detached HEAD). A failure never raises: it is a
  `PollOutcome` the caller records.
"""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from attend.runtime.kinds import PollContext, PollOutcome
from attend.runtime.kinds.process import (
    DEFAULT_TIMEOUT,
    STDERR_TAIL,
    branch_argv,
    command_settings,
    exec_failure,
    signal_group,
)
from attend.spec.schema import DEFAULT_MAX_OUTPUT

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor

__all__ = ["DEFAULT_TIMEOUT", "KILL_GRACE", "OUTPUT_DRAIN_GRACE", "STDERR_TAIL", "CommandRun", "poll", "run_command"]


#: Seconds between SIGTERM and SIGKILL for a command that timed out.
KILL_GRACE = 2.0


#: Seconds the pipes may stay open after the command exited (a child it left behind holding them)
#: before the poll's process group is killed and the output read so far is taken as complete.
OUTPUT_DRAIN_GRACE = 0.5

_READ_CHUNK = 65536


@dataclass(slots=True)
class CommandRun:
    """What running one argv produced. `state` is `ok` or a failure state name."""

    state: str
    stdout: bytes = b""
    stderr: str = ""
    returncode: int | None = None
    message: str = ""






async def run_command(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = DEFAULT_MAX_OUTPUT,
    kill_grace: float = KILL_GRACE,
) -> CommandRun:
    """Run `argv` once, capture its (capped) stdout and the tail of its stderr.

    Args:
        argv: the program and its arguments (no shell).
        env: the full environment of the child.
        cwd: the child's working directory.
        timeout: seconds before the child's process group is terminated.
        max_output: the most stdout bytes accepted.
        kill_grace: seconds between SIGTERM and SIGKILL.

    Returns:
        A `CommandRun`; never raises for a failing command.
    """
    if not argv:
        return CommandRun("exec_failed", message="empty argv")
    try:
        proc = await trio.lowlevel.open_process(
            [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(cwd) if cwd is not None else None,
            start_new_session=True,
        )
    except Exception as exc:  # noqa: BLE001 - whatever keeps it from starting is this sensor's failure
        return CommandRun("exec_failed", message=exec_failure(argv, cwd, exc))
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # both are pipes

    out = bytearray()
    err = bytearray()
    over_cap = False

    stdout_done, stderr_done = trio.Event(), trio.Event()

    async def read_stdout() -> None:
        nonlocal over_cap
        try:
            while chunk := await stdout.receive_some(_READ_CHUNK):
                out.extend(chunk)
                if len(out) > max_output:
                    over_cap = True
                    signal_group(proc.pid, signal.SIGKILL)
                    return
        finally:
            stdout_done.set()

    async def read_stderr() -> None:
        try:
            while chunk := await stderr.receive_some(_READ_CHUNK):
                err.extend(chunk)
                del err[:-STDERR_TAIL]
        finally:
            stderr_done.set()

    async def pipes_closed() -> None:
        await stdout_done.wait()
        await stderr_done.wait()

    timed_out = False
    try:
        with trio.move_on_after(timeout) as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_stdout)
                nursery.start_soon(read_stderr)
                await proc.wait()
                # The command has exited. A child it left behind (`job &`) may still hold its pipes
                # open, which would read as a timeout although the output is complete: after a short
                # grace the poll's process group is killed and what was read is the output.
                with trio.move_on_after(OUTPUT_DRAIN_GRACE) as drain:
                    await pipes_closed()
                if drain.cancelled_caught:
                    signal_group(proc.pid, signal.SIGKILL)
                    with trio.move_on_after(OUTPUT_DRAIN_GRACE):
                        await pipes_closed()
                    nursery.cancel_scope.cancel()  # a leftover in another session keeps them open
        if scope.cancelled_caught:
            timed_out = True
            signal_group(proc.pid, signal.SIGTERM)
            with trio.move_on_after(kill_grace):
                await proc.wait()
            signal_group(proc.pid, signal.SIGKILL)
            await proc.wait()
    finally:
        # Cancelled from outside (daemon shutdown, reload): the group dies with the poll.
        if proc.returncode is None:
            signal_group(proc.pid, signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await proc.wait()
        with trio.CancelScope(shield=True):
            await stdout.aclose()
            await stderr.aclose()

    stderr_tail = err.decode("utf-8", "replace").strip()
    if timed_out:
        return CommandRun("timeout", bytes(out), stderr_tail, proc.returncode, f"no result after {timeout:g} s; killed")
    if over_cap:
        return CommandRun(
            "malformed", b"", stderr_tail, proc.returncode, f"output larger than {max_output} bytes; killed"
        )
    returncode = proc.returncode
    assert returncode is not None  # waited for above
    if returncode != 0:
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        message = f"{how}: {stderr_tail.splitlines()[-1]}" if stderr_tail else how
        return CommandRun("exit", bytes(out), stderr_tail, proc.returncode, message)
    return CommandRun("ok", bytes(out), stderr_tail, 0)






async def poll(compiled: CompiledSensor, ctx: PollContext) -> PollOutcome:
    """Poll a command sensor once: run it and turn its stdout into a result (or a failure). A streaming
    command (`output: stream`) runs for `ctx.stream_for` seconds and its records are the result."""
    if compiled.output == "stream":
        from attend.runtime.kinds.stream import collect

        return await collect(compiled, ctx, ctx.stream_for)
    settings = command_settings(compiled, ctx)
    argv = branch_argv(settings["argv"], ctx.project_dir)  # `{branch}`: the checkout's, at each poll
    if isinstance(argv, str):
        return PollOutcome.failed("unavailable", argv)
    settings["argv"] = argv
    run = await run_command(**settings)
    if run.state != "ok":
        return PollOutcome.failed(run.state, run.message, returncode=run.returncode, stderr=run.stderr)
    try:
        text = run.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return PollOutcome.failed("malformed", f"output is not valid UTF-8 (byte {exc.start})")
    run.stdout = b""  # the bytes are not kept while the text is parsed (docs/runtime.md, Memory per poll)
    from attend.compiler import MalformedOutput

    try:
        result, line_errors = compiled.result_from_output(text, cap=settings["max_output"])
    except MalformedOutput as exc:
        # The reason alone: the output has no source file, so `str(exc)`'s `file:line:col` prefix would
        # only be noise (`<expr>:1:1: error: [malformed] ...`) in the sensor's state message.
        return PollOutcome.failed("malformed", exc.message)
    if line_errors and not result:
        # Lines, and not one of them parsed: an error message printed where the lines belong. Read as
        # an empty result it would fire every stored item as removed, so it is a failed poll.
        outcome = PollOutcome.failed("malformed", f"no output line parsed ({len(line_errors)} did not): {line_errors[0]}")
        outcome.line_errors = list(line_errors)
        return outcome
    return PollOutcome(result=result, line_errors=list(line_errors))
