"""The command kind: one poll runs an argv without a shell (ADR-403 §1; DESIGN.md, Runtime).

Decisions:
- argv is executed directly, never through a shell; `{branch}` in it is the branch checked out in the project
  at each poll (`process.branch_argv`; a stream's argv does not take it: its process outlives a checkout);
  `env` is merged over the daemon's environment;
  `cwd` is relative to the project directory.
- The child is started as every child is (`attend.children`): in its own session (so its own process
  group), with the environment stated here, and killed by the kernel if the daemon dies. On timeout the
  whole group gets SIGTERM, then SIGKILL after `KILL_GRACE` seconds, so a script's own children die with
  it; a poll cancelled from outside (daemon stop, reload) kills the group at once.
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
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from attend.children import KILL_GRACE, open_child
from attend.runtime.kinds import PollContext, PollOutcome
from attend.runtime.kinds.process import (
    DEFAULT_TIMEOUT,
    STDERR_TAIL,
    branch_argv,
    command_settings,
    exec_failure,
)
from attend.spec.schema import DEFAULT_MAX_OUTPUT

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.vocab import SensorState

__all__ = ["DEFAULT_TIMEOUT", "KILL_GRACE", "OUTPUT_DRAIN_GRACE", "STDERR_TAIL", "CommandRun", "poll", "run_command"]


#: Seconds the pipes may stay open after the command exited (a child it left behind holding them)
#: before the poll's process group is killed and the output read so far is taken as complete.
OUTPUT_DRAIN_GRACE = 0.5

_READ_CHUNK = 65536


@dataclass(slots=True)
class CommandRun:
    """What running one argv produced. `state` is `ok` or a failure state name."""

    state: SensorState
    stdout: bytes = b""
    stderr: str = ""
    returncode: int | None = None
    message: str = ""






async def run_command(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = DEFAULT_MAX_OUTPUT,
    kill_grace: float = KILL_GRACE,
) -> CommandRun:
    """Run `argv` once, capture its (capped) stdout and the tail of its stderr.

    Args:
        argv: the program and its arguments (no shell).
        env: the child's whole environment (never the daemon's by omission).
        cwd: the child's working directory.
        timeout: seconds before the child's process group is terminated.
        max_output: the most stdout bytes accepted.
        kill_grace: seconds between SIGTERM and SIGKILL.

    Returns:
        A `CommandRun`; never raises for a failing command.
    """
    if not argv:
        return CommandRun("exec_failed", message="empty argv")
    out = bytearray()
    err = bytearray()
    over_cap = False
    timed_out = False
    async with AsyncExitStack() as stack:
        try:
            # Leaving the block with the child running (a poll cancelled from outside: daemon shutdown,
            # reload) kills its group at once.
            child = await stack.enter_async_context(open_child(argv, env=env, cwd=cwd, stop_grace=0))
        except Exception as exc:  # noqa: BLE001 - whatever keeps it from starting is this sensor's failure
            return CommandRun("exec_failed", message=exec_failure(argv, cwd, exc))
        stdout, stderr = child.stdout, child.stderr
        stdout_done, stderr_done = trio.Event(), trio.Event()

        async def read_stdout() -> None:
            nonlocal over_cap
            try:
                while chunk := await stdout.receive_some(_READ_CHUNK):
                    out.extend(chunk)
                    if len(out) > max_output:
                        over_cap = True
                        child.signal_group(signal.SIGKILL)
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

        with trio.move_on_after(timeout) as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_stdout)
                nursery.start_soon(read_stderr)
                await child.wait()
                # The command has exited. A child it left behind (`job &`) may still hold its pipes
                # open, which would read as a timeout although the output is complete: after a short
                # grace the poll's process group is killed and what was read is the output.
                with trio.move_on_after(OUTPUT_DRAIN_GRACE) as drain:
                    await pipes_closed()
                if drain.cancelled_caught:
                    child.signal_group(signal.SIGKILL)
                    with trio.move_on_after(OUTPUT_DRAIN_GRACE):
                        await pipes_closed()
                    nursery.cancel_scope.cancel()  # a leftover in another session keeps them open
        if scope.cancelled_caught:
            timed_out = True
            await child.end(kill_grace)
        returncode = child.returncode

    stderr_tail = err.decode("utf-8", "replace").strip()
    if timed_out:
        return CommandRun("timeout", bytes(out), stderr_tail, returncode, f"no result after {timeout:g} s; killed")
    if over_cap:
        return CommandRun("malformed", b"", stderr_tail, returncode, f"output larger than {max_output} bytes; killed")
    assert returncode is not None  # waited for above
    if returncode != 0:
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        message = f"{how}: {stderr_tail.splitlines()[-1]}" if stderr_tail else how
        return CommandRun("exit", bytes(out), stderr_tail, returncode, message)
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
        return PollOutcome.failed(run.state, run.message)
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
