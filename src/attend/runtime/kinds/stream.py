"""Streaming commands (`command.output: stream`): one supervised long-running process per sensor
(DESIGN.md, Push sensing: streams and subscriptions).

Decisions:
- The process is started by the daemon as every child is (`attend.children`): without a shell, in its
  own session (so its own process group), and ended with the sensor: on cancel (daemon stop, reload,
  the sensor turned off) the group gets SIGTERM, then SIGKILL after `STOP_GRACE` seconds.
- It dies with the daemon, even a SIGKILLed one that runs no cleanup: on Linux the kernel SIGKILLs it
  when the daemon ends (`PR_SET_PDEATHSIG`, asked for by `attend.children`), so no orphan outlives the
  daemon and a restarted daemon never runs a second child beside it. The child's exit is awaited on a
  pidfd. The death signal reaches that process only, not the ones it starts (a pipeline's
  members): so each stream's environment carries `ATTEND_STREAM_OWNER` (the daemon's pid and start
  time), which whatever it starts inherits, and a daemon's first stream ends, once, every process of
  this user marked with an owner that no longer runs and still in its stream's process group
  (`sweep_orphans`). Without prctl the stream's own process ends at its next write to the closed pipe.
- Framing: stdout is split on `\\n`; a line longer than `max_line` bytes (at most `MAX_LINE_BYTES`) is
  cut to its first `max_line` bytes and counted (`cut`), the rest of it is skipped. Blank lines are
  ignored. Each line is one record: a JSON value (`stream_format: json`, at most one value or key per
  `DATA_BYTES_PER_VALUE` bytes of `max_line`) or `{"line": TEXT}` (`lines`). A line that does not read is
  a line error (counted, the last one's reason shown in the status), never a failed evaluation.
- Pressure: the lines waiting for the next evaluation are bounded (`BUFFER_LINES` lines and
  `BUFFER_BYTES` bytes, and a line is at most `max_line` <= `BUFFER_BYTES`). A full buffer coalesces: the
  oldest waiting lines are dropped and counted (`coalesced`), so a flood never blocks the daemon and
  never grows its memory. Memory per stream sensor (docs/runtime.md, "Memory per stream"): reading
  `max_line` + `READ_CHUNK` + `STDERR_TAIL`, waiting `BUFFER_BYTES`, evaluating those lines parsed (about
  24 times their bytes at JSON's densest), and each keyed trigger's kept records (`STREAM_KEPT_BYTES` of
  JSON, read back at each evaluation): under 96 MiB for the whole daemon, whatever the process prints.
- Evaluation: the records since the last evaluation as `{"items": [...]}`, at most every
  `min_interval` (`evaluate` is the daemon's `record_poll`, the one evaluation path).
- Restart: a process that exits (whatever its code) or cannot start is started again after
  `cadence.backoff(RESTART_INITIAL, failures - 1, factor=2, limit=RESTART_LIMIT)` seconds, jittered
  by ±25 %; a run that lasted `HEALTHY_RUN` seconds resets the count. The restarts, the last exit and
  the tail of stderr are in the sensor's status (`attend sensors`).
- Cursor (`cursor: FIELD`): the FIELD of the last record read is kept in memory for a restart, and the
  FIELD of the last record evaluated is stored with that evaluation (the sensor's memory in the store,
  one transaction with its trigger states), for the next daemon. An argv element with `{cursor}` gets
  the cursor; while none is known the element is left out. So a restart neither repeats nor skips.
  A cursor is the stream's data: one that cannot be an argument (a NUL, more than `MAX_CURSOR_BYTES`)
  is refused at its record (`cursor_refusal`), neither kept nor stored, and said in the status; the last
  good one stays. Anything raised starting the process is this sensor's `exec_failed`, never the daemon's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from attend.bounds import MAX_CURSOR_BYTES, STREAM_BUFFER_BYTES, STREAM_BUFFER_LINES
from attend.children import open_child
from attend.compiler.sensors import Framer
from attend.runtime.cadence import backoff
from attend.runtime.kinds import PollContext, PollOutcome
from attend.runtime.kinds.process import STDERR_TAIL, exec_failure
from attend.spec.schema import CURSOR_PLACEHOLDER

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.vocab import FailureState

__all__ = [
    "BUFFER_BYTES",
    "BUFFER_LINES",
    "HEALTHY_RUN",
    "RESTART_INITIAL",
    "RESTART_LIMIT",
    "LineBuffer",
    "OWNER_VAR",
    "StreamSupervisor",
    "collect",
    "cursor_refusal",
    "stream_argv",
    "sweep_orphans",
]

#: The most lines (and bytes of lines) waiting for the next evaluation; more coalesce (attend.bounds).
BUFFER_LINES = STREAM_BUFFER_LINES
BUFFER_BYTES = STREAM_BUFFER_BYTES
#: Bytes read from the process's stdout at a time.
READ_CHUNK = 65536
#: Seconds before the first restart of a process that exited.
RESTART_INITIAL = 1.0
#: The longest wait before a restart, in seconds.
RESTART_LIMIT = 60.0
#: A run this long (seconds) was healthy: the restart backoff starts over.
HEALTHY_RUN = 60.0
#: Seconds between SIGTERM and SIGKILL when a stream's process is stopped.
STOP_GRACE = 1.0


class LineBuffer:
    """The framed lines waiting for the next evaluation, bounded (`BUFFER_LINES`, `BUFFER_BYTES`)."""

    def __init__(self, *, max_lines: int = BUFFER_LINES, max_bytes: int = BUFFER_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.lines: deque[bytes] = deque()
        self.size = 0
        #: Lines dropped since the last `take` because the buffer was full.
        self.coalesced = 0
        self.ready = trio.Event()

    def push(self, line: bytes) -> None:
        """Add one line; the oldest waiting lines make room (counted in `coalesced`)."""
        self.lines.append(line)
        self.size += len(line)
        while len(self.lines) > self.max_lines or (self.size > self.max_bytes and len(self.lines) > 1):
            self.size -= len(self.lines.popleft())
            self.coalesced += 1
        self.ready.set()

    def take(self) -> tuple[list[bytes], int]:
        """Every waiting line (oldest first) and how many were coalesced since the last take."""
        lines, coalesced = list(self.lines), self.coalesced
        self.lines.clear()
        self.size = 0
        self.coalesced = 0
        self.ready = trio.Event()
        return lines, coalesced


#: The environment variable marking a stream's processes, and whatever they start, with the daemon that owns them.
OWNER_VAR = "ATTEND_STREAM_OWNER"


def _owner_tag(pid: int) -> str | None:
    """`PID@START` of a running process (its start time, `identity.process_start`, tells a reused pid
    apart); None once it is gone."""
    from attend.peers.identity import process_start

    start = process_start(pid)
    return None if start is None else f"{pid}@{start}"


_swept = False


def sweep_orphans() -> list[int]:
    """End (SIGKILL) what a killed daemon's streams left behind: every process of this user whose
    `ATTEND_STREAM_OWNER` names a daemon that no longer runs and that is still in its stream's process
    group (the one a normal stop signals: a member of a session it does not lead, in the session's
    group). One that left it on purpose (an agent a command started, which leads its own session or
    group, as gpg-agent does) is not the stream's to end. Once per process (the first stream's start);
    returns the pids ended."""
    global _swept
    if _swept:
        return []
    _swept = True
    import psutil

    ended, owners = [], {}
    for proc in psutil.process_iter(["uids"]):
        try:
            if proc.info["uids"] is None or proc.info["uids"].real != os.getuid():
                continue
            tag = proc.environ().get(OWNER_VAR)
            if not tag:
                continue
            if tag not in owners:
                pid = tag.partition("@")[0]
                owners[tag] = pid.isdigit() and _owner_tag(int(pid)) == tag
            if owners[tag]:
                continue
            session = os.getsid(proc.pid)
            if session != proc.pid and os.getpgid(proc.pid) == session:
                proc.kill()
                ended.append(proc.pid)
        except (psutil.Error, OSError):
            continue  # gone meanwhile, a zombie, or not ours to read
    return ended


def stream_argv(argv: list[str], cursor: str | None) -> list[str]:
    """`argv` with `{cursor}` replaced by the cursor; an element holding it is left out while none is known."""
    if cursor is None:
        return [a for a in argv if CURSOR_PLACEHOLDER not in a]
    return [a.replace(CURSOR_PLACEHOLDER, cursor) for a in argv]


def _cursor_of(record: Any, fields: tuple[str, ...]) -> str | None:
    from attend.compiler.ops import MISSING, get_dotted

    value = get_dotted(record, fields)
    if value is MISSING or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def cursor_refusal(cursor: str) -> str | None:
    """Why `cursor` cannot be the next start's argument (None when it can): a NUL, which no argument
    holds, or more than `MAX_CURSOR_BYTES` bytes."""
    if "\0" in cursor:
        return "it holds a NUL byte, which no argument can"
    size = len(cursor.encode("utf-8", "surrogatepass"))
    if size > MAX_CURSOR_BYTES:
        return f"it is {size:,} bytes long: at most {MAX_CURSOR_BYTES:,} are allowed"
    return None


@dataclass(slots=True)
class StreamState:
    """What the supervisor knows about its process, for the status and `sensors poll`."""

    restarts: int = 0
    cut: int = 0
    coalesced: int = 0
    line_errors: int = 0
    last_exit: str = ""
    stderr: bytearray = field(default_factory=bytearray)
    #: The last cursor refused (`cursor_refusal`) and why, said in the status.
    cursor_refused: str = ""
    #: Why the last line that did not read did not (with `line_errors`, said in the status).
    last_line_error: str = ""

    def notes(self, cut_now: int = 0) -> list[str]:
        """The stream's facts as status notes (empty while there is nothing to say); `cut_now`: the lines cut
        so far by the running process's framer (added to `cut` when it ends)."""
        out = []
        if self.cursor_refused:
            out.append(f"{self.cursor_refused}; the last good cursor is kept")
        if self.restarts:
            out.append(f"stream restarted {self.restarts} time(s); last: {self.last_exit}")
        if self.cut + cut_now:
            out.append(f"{self.cut + cut_now} line(s) longer than max_line were cut")
        if self.line_errors:
            out.append(f"{self.line_errors} line(s) did not read so far; the last: {self.last_line_error}")
        if self.coalesced:
            out.append(f"{self.coalesced} record(s) coalesced under pressure (dropped, oldest first)")
        tail = self.stderr_tail()
        if tail:
            out.append(f"stderr: {tail.splitlines()[-1]}")
        return out

    def stderr_tail(self) -> str:
        return self.stderr.decode("utf-8", "replace").strip()


class StreamSupervisor:
    """One streaming command sensor's process, framing, buffer and cursor.

    Args:
        compiled: the compiled sensor (`command.output: stream`).
        ctx: the poll context (environment, project directory, store).
    """

    def __init__(self, compiled: CompiledSensor, ctx: PollContext) -> None:
        from attend.runtime.kinds.process import command_settings

        self.compiled = compiled
        self.settings = command_settings(compiled, ctx)
        block = compiled.sensor.ir.command
        self.max_line = compiled.max_line
        self.stream_format = compiled.stream_format or "json"
        cursor_field = block.cursor if block is not None else None
        self.cursor_fields: tuple[str, ...] | None = tuple(cursor_field.split(".")) if cursor_field else None
        self.cursor: str | None = None
        self.state = StreamState()
        if self.cursor_fields is not None and ctx.store is not None:
            remembered = ctx.store.get_crate_state(compiled.name)
            cursor = remembered.get("cursor") if isinstance(remembered, dict) else None
            if isinstance(cursor, str):
                self._take_cursor(cursor, "the stored cursor")
        self.buffer = LineBuffer()
        self.last_line: bytes | None = None
        self.pid: int | None = None
        #: The running process's framer (its cuts are said while it runs).
        self.framer: Framer | None = None

    # -- one run of the process -------------------------------------------------------------------

    def _push(self, line: bytes) -> None:
        self.last_line = line
        self.buffer.push(line)

    async def run_once(self, on_start: Callable[[int], None] | None = None) -> tuple[FailureState, str]:
        """Start the process and frame its stdout into the buffer until it exits; returns (state, message):
        `exit` with the code or signal and the stderr tail, or `exec_failed`. Cancelling kills its group.

        Args:
            on_start: called with the process id once it runs.
        """
        argv = stream_argv([str(a) for a in self.settings["argv"]], self.cursor)
        cwd = self.settings["cwd"]
        if not argv:
            return "exec_failed", "empty argv"
        env = {**self.settings["env"], OWNER_VAR: _owner_tag(os.getpid()) or str(os.getpid())}
        async with AsyncExitStack() as stack:
            try:
                # Leaving the block with the process running (cancelled: daemon stop, reload, the sensor
                # turned off) ends its group: SIGTERM, then SIGKILL after STOP_GRACE seconds.
                child = await stack.enter_async_context(open_child(argv, env=env, cwd=str(cwd), stop_grace=STOP_GRACE))
            except Exception as exc:  # noqa: BLE001 - whatever keeps it from starting is this sensor's failure
                return "exec_failed", exec_failure(argv, cwd, exc)
            self.pid = child.pid
            self.state.stderr.clear()
            if on_start is not None:
                on_start(child.pid)
            framer = self.framer = Framer(self.max_line, self._push)
            stdout_done, stderr_done = trio.Event(), trio.Event()

            async def read_stdout() -> None:
                try:
                    while chunk := await child.stdout.receive_some(READ_CHUNK):
                        framer.feed(chunk)
                    framer.close()
                finally:
                    stdout_done.set()

            async def read_stderr() -> None:
                try:
                    while chunk := await child.stderr.receive_some(READ_CHUNK):
                        self.state.stderr.extend(chunk)
                        del self.state.stderr[:-STDERR_TAIL]
                finally:
                    stderr_done.set()

            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(read_stdout)
                    nursery.start_soon(read_stderr)
                    await child.wait()
                    # What it printed before it exited is still read; a child it left behind holding the
                    # pipes gets a short grace, then the group (the stream's own) is killed.
                    with trio.move_on_after(0.5):
                        await stdout_done.wait()
                        await stderr_done.wait()
                    child.signal_group(signal.SIGKILL)
                    nursery.cancel_scope.cancel()
            finally:
                self.state.cut += framer.cut
                self.framer = None
                await stack.aclose()  # the group ended if the process still runs, and the pipes closed
                self.pid = None
                self._advance_cursor()
        code = child.returncode if child.returncode is not None else -signal.SIGKILL
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        tail = self.state.stderr_tail()
        return "exit", f"{how}: {tail.splitlines()[-1]}" if tail else how

    def _advance_cursor(self) -> None:
        """The cursor for the next start: the FIELD of the last line read (when it reads)."""
        if self.cursor_fields is None or self.last_line is None:
            return
        try:
            from attend.compiler.sensors import read_record

            record = read_record(self.last_line.decode("utf-8"), self.stream_format, self.max_line)
            cursor = _cursor_of(record, self.cursor_fields)
        except Exception:  # noqa: BLE001 - an unreadable last line keeps the cursor known before it
            return
        if cursor is not None:
            self._take_cursor(cursor, "the last record's cursor")

    def _take_cursor(self, cursor: str, what: str) -> bool:
        """Make `cursor` the next start's, unless it cannot be an argument: then the one known before
        stays and the status says why. Whether it was taken."""
        why = cursor_refusal(cursor)
        if why is not None:
            self.state.cursor_refused = f"{what} was refused: {why}"
            return False
        self.cursor = cursor
        return True

    # -- the records --------------------------------------------------------------------------------

    def records(self) -> PollOutcome:
        """The records waiting since the last call as an outcome: `{"items": [...]}`, the line errors,
        the cursor of the last record (stored with the evaluation) and the stream's notes."""
        from attend.compiler import MalformedOutput
        from attend.compiler.sensors import read_record

        lines, coalesced = self.buffer.take()
        self.state.coalesced += coalesced
        items: list[Any] = []
        errors: list[str] = []
        for line in lines:
            try:
                items.append(read_record(line.decode("utf-8"), self.stream_format, self.max_line))
            except UnicodeDecodeError as exc:
                errors.append(f"a record is not valid UTF-8 (byte {exc.start}): {line[:60]!r}")
            except MalformedOutput as exc:
                errors.append(f"{exc.message}: {line[:80].decode('utf-8', 'replace')!r}")
        self.state.line_errors += len(errors)
        if errors:
            self.state.last_line_error = errors[-1]
        outcome = PollOutcome(result={"items": items}, line_errors=errors)
        if self.cursor_fields is not None:
            # The newest cursor that can be an argument is stored and kept for a restart; a refused one never is.
            for record in reversed(items):
                cursor = _cursor_of(record, self.cursor_fields)
                if cursor is None:
                    continue
                if self._take_cursor(cursor, "a record's cursor"):
                    outcome.crate_state = {"cursor": cursor}
                    break
        # An evaluation's notes become the status message: a running process stays said (docs/runtime.md)
        running = [f"stream running (pid {self.pid})"] if self.pid is not None else []
        outcome.notes = [*running, *self.state.notes(self.framer.cut if self.framer is not None else 0)]
        return outcome

    # -- the daemon's loop --------------------------------------------------------------------------

    async def supervise(
        self,
        evaluate: Callable[[PollOutcome], Awaitable[None]],
        status: Callable[..., None],
        *,
        min_interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Run the process (restarting it) and evaluate its records at most every `min_interval`, until cancelled.

        Args:
            evaluate: records one outcome (the daemon's `record_poll`).
            status: updates the sensor's status fields (`state`, `message`).
            min_interval: the shortest gap between two evaluations, in seconds.
            clock: monotonic seconds (for the healthy-run reset).
        """
        await trio.to_thread.run_sync(sweep_orphans)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._evaluations, evaluate, min_interval)
            failures = 0
            while True:
                started = clock()

                def running(pid: int) -> None:
                    note = f"stream running (pid {pid})"
                    if self.state.restarts:
                        note += f"; restarted {self.state.restarts} time(s), last: {self.state.last_exit}"
                    status(state="ok", message=note)

                state, message = await self.run_once(running)
                failures = 1 if clock() - started >= HEALTHY_RUN else failures + 1
                delay = backoff(RESTART_INITIAL, failures - 1, factor=2.0, limit=RESTART_LIMIT)
                delay *= random.uniform(0.75, 1.25)
                self.state.restarts += 1
                self.state.last_exit = message
                status(state=state, message=f"{message}; restarting in {delay:.1f} s (restart {self.state.restarts})")
                await trio.sleep(delay)

    async def _evaluations(self, evaluate: Callable[[PollOutcome], Awaitable[None]], min_interval: float) -> None:
        last = -float("inf")
        while True:
            await self.buffer.ready.wait()
            await trio.sleep_until(max(trio.current_time(), last + min_interval))
            last = trio.current_time()
            await evaluate(self.records())


async def collect(compiled: CompiledSensor, ctx: PollContext, seconds: float) -> PollOutcome:
    """`attend sensors poll` on a stream sensor: run the process once for at most `seconds` (no restart)
    and return what it printed as one outcome. A process that failed before printing a record is a
    failed poll (`exit`, `exec_failed`)."""
    supervisor = StreamSupervisor(compiled, ctx)
    ended: list[tuple[FailureState, str]] = []
    with trio.move_on_after(seconds):
        ended.append(await supervisor.run_once())
    outcome = supervisor.records()
    items = outcome.result["items"]
    if ended and not items and not outcome.line_errors:
        state, message = ended[0]
        if state == "exec_failed" or not message.startswith("exit code 0"):
            return PollOutcome.failed(state, message)
    if ended:  # it printed records, then ended before the time was up: said, with how (its code, stderr)
        outcome.notes = [f"the process ended before {seconds:g} s: {ended[0][1]}",
                         *(n for n in outcome.notes if not n.startswith("stderr: "))]
    outcome.collected_for = seconds
    return outcome
