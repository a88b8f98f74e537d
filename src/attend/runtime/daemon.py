"""`attend run`: the trio daemon (DESIGN.md, Runtime).

Decisions:
- One task per running sensor, each in its own cancel scope, so a slow or hanging poll never delays
  another sensor, and a reload restarts only the sensors whose merged document changed.
- One discloser task (pipeline.Discloser): engagement, governor, delivery and the printing of every
  journal entry still unprinted (crash recovery and `sensors fire` test lines from other processes).
- One wake task (watching/wake.py): a change to a path a sensor declares in `wake_on` (or its crate
  object declares) polls it at once, no sooner than its `min_interval`; `interval` stays the fallback,
  and a pattern that cannot be watched is recorded in the sensor's status (`wake_error`).
- One reload task (watching/reload.py): a changed layer file or config file reloads the set. A sensor whose
  file stops validating keeps its last good version running and records the error (`file_error`); a
  sensor that becomes `refused` (its project lost trust) stops at once, its running command killed.
- On start the shipped files are projected read-only to `$XDG_DATA_HOME/agent-ways/attend/sensors/`.
- Invalid and refused sensors get their state recorded and never poll. A message-lane file without
  `author` runs on the event lane; the reason is logged once on stderr and shown by `attend sensors`.
- One poller per project: the `attend run` holding the flock on `$XDG_STATE_HOME/attend/run-<hash>.lock`
  runs this daemon; the others attach and print the journal (sessions.py) until one takes over.
- The daemon never prints itself: it journals, and the session's `SessionPrinter` prints every row
  (sessions.py), the same way in the poller and in the attached sessions.
- SIGINT/SIGTERM cancel everything: each running command's process group is killed (kinds/command.py),
  the store is closed after its last transaction, and the exit code is 0.
- Test lines written by `sensors fire` before the daemon starts are marked printed without printing:
  `sensors fire` already showed them to the person who ran it, and a test belongs to the session that
  ran it (only a fire made while the daemon runs shows on its stdout).
- At start, journal rows older than `JOURNAL_RETENTION` that were delivered (printed, and drained on
  the message lane) are deleted, so the store does not grow without bound; so are the per-session
  trigger and crate states (`name@session`) of sessions gone for good (neither written nor beating for
  as long).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import trio

from attend import redact
from attend.errors import reason
from attend.files import remove_file, write_atomically
from attend.runtime import kinds
from attend.runtime.cadence import Cadence, CadenceParams, poll_on_cadence
from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.engagement import EngagementParams
from attend.runtime.governor import governor_params
from attend.runtime.kinds import PollContext, PollOutcome
from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
from attend.runtime.runnable import compiled_or_error, first_error, runnable
from attend.runtime.sessions.printer import STALE_TEST_FIRE, Printer, SessionPrinter
from attend.runtime.sessions.status import session_foci
from attend.runtime.store import open_project_store
from attend.runtime.store.sensor_status import LOAD_STATE, POLL_STATE
from attend.runtime.watching.reload import watch
from attend.runtime.watching.wake import WakeHub
from attend.text import printable, printable_path

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor
    from attend.spec.loaded import MergedSensor

__all__ = ["STALE_TEST_FIRE", "Daemon", "project_shipped", "run"]

#: The status message of a `scope: session` sensor while the project has no live session to poll it for.
NO_LIVE_SESSION = "no live session of the project to poll for (scope: session)"

#: Delivered journal rows older than this (seconds) are deleted when the daemon starts.
JOURNAL_RETENTION = 30 * 24 * 3600.0


def project_shipped(shipped: Path, projection: Path) -> None:
    """Copy the shipped sensor files to `projection`, read-only, removing files no longer shipped.

    Each copy is written atomically (attend.files), so a reader never sees half a file and a symlink
    planted in the projection is replaced, never written through.
    """
    projection.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in sorted(shipped.glob("*.yaml"))} if shipped.is_dir() else {}
    for existing in projection.glob("*.yaml"):
        if existing.name not in wanted:
            remove_file(existing)
    for name, source in wanted.items():
        target = projection / name
        data = source.read_bytes()
        if not target.is_symlink() and target.exists() and target.read_bytes() == data:
            continue
        write_atomically(target, data, mode=stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def _fingerprint(sensor: MergedSensor) -> str:
    # the whole document as written (not its fields): any change to the file is a change to run
    return hashlib.sha256(json.dumps(sensor.data, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(slots=True)
class RunningSensor:
    """A sensor the daemon polls: its compiled form, its task's cancel scope and its fingerprint."""

    compiled: CompiledSensor
    fingerprint: str
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    #: A poll found the sensor `invalid` (a crate source this environment cannot load, say): it polls no
    #: more; the next reload starts it again (a changed file, or a package installed since).
    invalid: bool = False

    @property
    def terms(self) -> SensorTerms:
        """The sensor's effective lane and emission threshold, for the discloser."""
        return SensorTerms.of(self.compiled.lane, self.compiled.sensor.ir)


class Daemon:
    """The state of one running `attend run`.

    Args:
        project_dir: the project directory.
        env: the environment (XDG variables, and what commands inherit).
        stdout: the Monitor stream.
        stderr: low-priority lines and the daemon's own log.
        clock: wall-clock seconds (stored times, engagement and governor).
        printer: the session's printer (sessions.py), run by the caller; without one the daemon runs
            its own for a session that keeps no position.
    """

    def __init__(
        self,
        project_dir: Path,
        *,
        env: Mapping[str, str],
        stdout: TextIO,
        stderr: TextIO,
        clock: Clock = WALL_CLOCK,
        printer: Printer | None = None,
    ) -> None:
        from attend.spec import layer_paths

        self.project_dir = Path(project_dir)
        self.env = dict(env)
        self.stdout = stdout
        self.stderr = stderr
        self.clock = clock
        self.paths = layer_paths(self.project_dir, self.env)
        self.store = open_project_store(self.paths, clock=clock)
        self.ctx = PollContext(project_dir=self.project_dir, env=self.env, paths=self.paths, store=self.store)
        self.running: dict[str, RunningSensor] = {}
        self.known: dict[str, MergedSensor] = {}  # every loaded sensor by name (terms for pending observations)
        self.lane_notes_logged: set[tuple[str, str]] = set()
        self.config_problems_logged: list[str] = []
        self.file_errors_logged: dict[str, str] = {}  # sensor name → the file error last logged
        self._own_printer = printer is None
        self.printer = printer or SessionPrinter(self.store, None, stdout=stdout, stderr=stderr, clock=clock)
        self.discloser = Discloser(self.store, self._terms, printer=self.printer, clock=clock)
        self.wakes = WakeHub(self.project_dir, self.env, self.log, on_error=self._record_wake_error)
        self._nursery: trio.Nursery | None = None
        self._mcp_started = False

    def log(self, message: str) -> None:
        """One line of the daemon's own log on stderr, redacted and escaped (attend.text): the run log keeps
        it and a session's SessionStart status repeats it."""
        self.stderr.write(f"attend: {printable(message, one_line=True)}\n")
        self.stderr.flush()

    def _terms(self, name: str) -> SensorTerms | None:
        running = self.running.get(name)
        if running is not None:
            return running.terms
        sensor = self.known.get(name)
        if sensor is None or not runnable(sensor):
            return None
        # A sensor that does not run now (disabled, with observations still pending) discloses on the
        # lane it would run on: the compiler's effective lane, not the one its file declares.
        compiled, _ = compiled_or_error(sensor)
        return None if compiled is None else SensorTerms.of(compiled.lane, sensor.ir)

    # -- start-up and reload -------------------------------------------------------------------------

    def _configure(self) -> None:
        from attend.spec import load_config

        config = load_config(self.paths)
        # A config.yaml the daemon cannot use (not a mapping, a wrong type, an unknown key) would
        # otherwise leave the defaults in force without a word; each problem is logged once per
        # change of the set, not on every reload.
        problems = [str(d) for d in config.diagnostics]
        if problems != self.config_problems_logged:
            self.config_problems_logged = problems
            for problem in problems:
                self.log(f"config: {problem}")
        try:
            engagement = EngagementParams.from_config(config.engagement)
            governors = governor_params(config.governor)
        except (TypeError, ValueError) as exc:
            self.log(f"config.yaml: engagement/governor ignored: {exc}")
            return
        self.discloser.configure(engagement=engagement, governors=governors)

    async def reload(self) -> None:
        """Load every layer and bring the running sensors in line with it."""
        from attend.spec import load_set

        self._configure()
        sensor_set = load_set(self.project_dir, self.env)
        for name in list(self.running):
            sensor = sensor_set.sensors.get(name)
            if sensor is None or (runnable(sensor) and not sensor.enabled):
                self._stop(name)
                if sensor is None:
                    self.store.forget_sensor(name)
                else:
                    self.store.update_status(name, next_poll=None, message="disabled")
        self.known = dict(sensor_set.sensors)
        for name in set(self.file_errors_logged) - set(sensor_set.sensors):
            del self.file_errors_logged[name]
        for name, sensor in sensor_set.sensors.items():
            try:
                await self._bring_in_line(name, sensor)
            except sqlite3.OperationalError:
                raise  # the store, not this sensor: the whole reload is retried
            except Exception as exc:  # noqa: BLE001 - the last-resort guard: this sensor invalid, the rest go on
                self._stop(name)
                self._keep_or_record(name, "invalid", f"attend failed loading this sensor ({type(exc).__name__}: "
                                     f"{exc}); this is a bug in attend, please report it")
        if self.ctx.mcp_pool is not None:
            self.ctx.mcp_pool.retain(set(self.running))  # an MCP server no running sensor uses stops
        self.discloser.wake()

    async def _bring_in_line(self, name: str, sensor: MergedSensor) -> None:
        """Start, keep, restart or record one loaded sensor."""
        if not runnable(sensor):
            if sensor.status == "refused":
                # Trust is a security decision: it takes effect at once. The last good version keeps
                # running only for a file that stops validating, never for one that lost its trust.
                self._stop(name)
            self._keep_or_record(name, sensor.status, first_error(sensor))
            return
        if not sensor.enabled:
            return
        compiled, compile_error = compiled_or_error(sensor)
        if compiled is None:
            self._keep_or_record(name, "invalid", compile_error)
            return
        CadenceParams.of(compiled.sensor.ir)  # raises here, not in the sensor's task
        if self.file_errors_logged.pop(name, None) is not None:  # valid again: said, and a later error is news
            self.log(f"sensor {name} is valid again")
        fingerprint = _fingerprint(sensor)
        current = self.running.get(name)
        if current is not None and current.fingerprint == fingerprint and not current.invalid:
            self.store.update_status(name, file_error="")
            return
        if current is not None:
            self._stop(name)
        await self._start(RunningSensor(compiled, fingerprint))

    def _record_wake_error(self, name: str, error: str) -> None:
        """Store why sensor `name`'s wake_on is not watched ("" once it is), for `attend sensors`."""
        if name not in self.running:
            return  # stopped or removed: its status row is not this watcher's to make
        try:
            self.store.update_status(name, wake_error=error)
        except Exception as exc:  # noqa: BLE001 - a locked store loses the note, never the daemon
            self.log(f"sensor {name}: could not record its wake_on state: {reason(exc)}")

    async def _reload_logged(self) -> None:
        # A reload that fails (a store locked past its timeout, a bug) must not stop the sensors that run.
        try:
            await self.reload()
        except Exception as exc:  # noqa: BLE001 - logged; the last good set keeps running
            self.log(f"reload failed, the running sensors stay as they were: {type(exc).__name__}: {exc}")

    def _keep_or_record(self, name: str, state: str, message: str) -> None:
        if self.file_errors_logged.get(name) != message:
            # Said once per error (not on every reload), so a user who runs `attend run` learns that a
            # file is broken without having to ask `attend sensors`.
            self.file_errors_logged[name] = message
            kept = "; the last good version keeps running" if name in self.running else ""
            self.log(f"sensor {name} is {state}: {message}{kept}")
        if name in self.running:
            # The last good version keeps running; the file's error stays visible beside it.
            self.store.update_status(name, file_error=message)
            return
        self.store.update_status(name, state=state, message=message, next_poll=None, file_error="",
                                 state_source=LOAD_STATE)

    def _stop(self, name: str) -> None:
        running = self.running.pop(name, None)
        if running is not None:
            running.scope.cancel()
            self.wakes.forget(name)

    async def _start(self, running: RunningSensor) -> None:
        compiled = running.compiled
        self.running[compiled.name] = running
        status = self.store.status(compiled.name)
        # A state recorded at load (`invalid`, `refused`) no longer holds once the sensor runs: until its
        # first poll it shows what a sensor that never polled shows.
        stale = {"state": "ok", "message": "", "state_source": POLL_STATE} if (
            status is not None and status.state_source == LOAD_STATE) else {}
        self.store.update_status(
            compiled.name, lane=compiled.lane, lane_note=compiled.lane_note or "", file_error="",
            wake_error=self.wakes.errors.get(compiled.name, ""), **stale
        )
        # Say why only when the file's lane was not honoured; the shipped keepwarm exception keeps its
        # lane, and its note stays visible in `attend sensors` without a line at every start.
        demoted = compiled.lane != compiled.sensor.ir.lane
        if demoted and compiled.lane_note and (compiled.name, compiled.lane_note) not in self.lane_notes_logged:
            self.lane_notes_logged.add((compiled.name, compiled.lane_note))
            self.log(f"sensor {compiled.name}: {compiled.lane_note}")
        if compiled.kind == "mcp":
            await self._ensure_mcp_pool()
        assert self._nursery is not None
        self._nursery.start_soon(self._sensor_loop, running)

    async def _ensure_mcp_pool(self) -> None:
        if self._mcp_started:
            return
        from attend.runtime.kinds.mcp import McpPool

        pool = McpPool(self.ctx, clock=self.clock)
        pool.on_update = self._resource_changed
        assert self._nursery is not None
        await self._nursery.start(pool.run)
        self.ctx.mcp_pool = pool
        self._mcp_started = True

    def _resource_changed(self, name: str) -> None:
        """A resource sensor `name` subscribed to changed, or its subscription was lost: poll it now (no
        sooner than its min_interval), unless it stopped meanwhile."""
        if name in self.running:
            self.wakes.signal(name).set()

    # -- polling -------------------------------------------------------------------------------------

    async def _sensor_loop(self, running: RunningSensor) -> None:
        compiled = running.compiled
        params = CadenceParams.of(compiled.sensor.ir)
        if compiled.output == "stream":
            with running.scope:
                await self._stream_loop(compiled, params)
            return

        due: list[float | None] = [None]  # when a pending `for:` of this sensor will have held long enough
        wake = self.wakes.signal(compiled.name)

        def until_due() -> float | None:
            # Past due only after failed polls (an ok poll fires what is due): then the cadence's
            # backoff decides, never back-to-back polls of a failing sensor.
            left = None if due[0] is None else due[0] - self.clock()
            return left if left is not None and left > 0 else None

        async def poll(cadence: Cadence) -> Cadence:
            if compiled.scope != "session":
                return await poll_for(cadence, None, self.ctx)
            # Once per live session of the project, each with that session as its focus; the cadence
            # follows the busiest of them (a session's change halves the interval for all).
            sessions = session_foci(self.store)
            if not sessions:
                self.store.update_status(compiled.name, message=NO_LIVE_SESSION, last_poll=self.clock(),
                                         next_poll=self.clock() + cadence.interval)
                return cadence
            after = [await poll_for(cadence, s.session, replace(self.ctx, session=s.session, transcript=s.transcript))
                     for s in sessions]
            return min(after, key=lambda c: c.interval)

        async def poll_for(cadence: Cadence, session: str | None, ctx: PollContext) -> Cadence:
            started = self.clock()
            try:
                outcome = await kinds.poll(compiled, ctx)
            except Exception as exc:  # noqa: BLE001 - a kind's bug must not stop the daemon
                outcome = PollOutcome.failed("unavailable", f"the poll raised {type(exc).__name__}: {exc}")
            now = self.clock()
            woken_at = wake.woken_at  # when the change this poll sees was seen (None: not woken)
            woken = None if woken_at is None else now - (trio.current_time() - woken_at)
            try:
                record = record_poll(
                    self.store, compiled, outcome, now=now, cadence_params=params, cadence=cadence,
                    session=session, woken=woken, took=now - started,
                )
            except sqlite3.OperationalError as exc:
                # The store was locked past busy_timeout (or the disk is full): nothing of this poll was
                # committed, so the next poll simply evaluates against the same stored state again.
                self.log(f"sensor {compiled.name}: poll not stored: {exc}")
                self._forget_crate_memory(ctx.state_key(compiled.name))
                return cadence
            if outcome.ok and record.state != "ok":
                # Evaluated but not stored: a crate sensor's in-memory state moved on without its
                # trigger states, so rebuild it from the store before the next poll.
                self._forget_crate_memory(ctx.state_key(compiled.name))
            if outcome.state == "invalid":
                # An invalid sensor never polls (docs/runtime.md): say so once, keep the state and stop.
                running.invalid = True
                self.store.update_status(compiled.name, next_poll=None)
                self.log(f"sensor {compiled.name} is invalid: {outcome.message}; it polls no more until its "
                         "file changes or the daemon restarts")
                running.scope.cancel()
                return cadence
            if record.step is not None and record.state == "ok":
                due[0] = record.step.due
            if record.observations:
                self.discloser.wake()
            self.wakes.declare(compiled, ctx)
            return record.cadence or cadence

        with running.scope:
            self._arm_wake_on(compiled)
            await poll_on_cadence(params, poll, wake=wake, until_due=until_due)

    def _arm_wake_on(self, compiled: CompiledSensor) -> None:
        """Watch a sensor's `wake_on` paths from before its first poll, and wake it once that watch has started:
        a change made before then (while the first poll ran) is polled once more instead of waiting out the
        interval. The first poll does not wait for the watch (a tree that cannot be watched takes seconds to
        fail, and what is there when the sensor starts is its baseline); the cost is one more poll of a
        sensor whose watch started after its first poll did."""
        self.wakes.declare(compiled, self.ctx)
        self.wakes.wake_when_watched(compiled.name)

    async def _stream_loop(self, compiled: CompiledSensor, params: CadenceParams) -> None:
        """A streaming command (kinds/stream.py): its supervised process, its records evaluated at most
        every `min_interval` through the same `record_poll` as a poll."""
        from attend.runtime.kinds.stream import StreamSupervisor

        async def evaluate(outcome: PollOutcome) -> None:
            try:
                record = record_poll(self.store, compiled, outcome, now=self.clock())
            except sqlite3.OperationalError as exc:
                self.log(f"sensor {compiled.name}: records not stored: {exc}")
                return
            if record.observations:
                self.discloser.wake()

        def status(**fields: Any) -> None:
            try:
                self.store.update_status(compiled.name, state_source=POLL_STATE, **fields)
            except sqlite3.OperationalError as exc:
                self.log(f"sensor {compiled.name}: status not stored: {exc}")

        supervisor = StreamSupervisor(compiled, self.ctx)
        await supervisor.supervise(evaluate, status, min_interval=params.min_interval)

    def _forget_crate_memory(self, name: str) -> None:
        """Drop a crate sensor's object, so its next poll starts from the state the store holds."""
        self.ctx.crate_instances.pop(name, None)

    # -- the whole daemon ----------------------------------------------------------------------------

    def _drop_stale_test_fires(self) -> None:
        horizon = self.clock() - STALE_TEST_FIRE
        stale = [e.id for e in self.store.unprinted(test=True) if e.time <= horizon]
        if stale:
            self.store.mark_printed(stale)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled; `task_status.started()` once every sensor has been started."""
        try:
            project_shipped(self.paths.shipped, self.paths.shipped_projection)
        except OSError as exc:
            self.log(f"cannot project the shipped sensors to {self.paths.shipped_projection}: {reason(exc)}")
        self._drop_stale_test_fires()
        self.store.prune_journal(self.clock() - JOURNAL_RETENTION)
        self.store.prune_session_states(self.clock() - JOURNAL_RETENTION)
        # A user's or a project's `attend.redact` pattern that runs past its timeout is taken out of force;
        # the run log says which, and the SessionStart status repeats it (attend.redact).
        redact.on_stall(self.log)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if self._own_printer:
                    await nursery.start(self.printer.run)
                await nursery.start(self.discloser.run)
                await nursery.start(self.wakes.run)
                folders = [self.paths.shipped, self.paths.user, self.paths.project]
                files = [self.paths.config_file, self.paths.project_config_file]
                # Watching before the first load: a file edited while it ran is reloaded, not missed.
                await nursery.start(partial(watch, folders, files, self._reload_logged, log=self.log))
                await self.reload()
                self.log(f"{len(self.running)} sensor(s) running for {printable_path(self.project_dir)}")
                task_status.started()
        finally:
            redact.on_stall(None)
            self._nursery = None
            self.store.close()


async def run(
    project_dir: Path | str,
    *,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the daemon for `project_dir` until cancelled.

    Args:
        project_dir: the project directory.
        env: the environment (default: os.environ).
        stdout: the Monitor stream (default: sys.stdout).
        stderr: low-priority lines and the log (default: sys.stderr).
        task_status: `started()` is called once every sensor has been loaded and started.
    """
    daemon = Daemon(
        Path(project_dir),
        env=os.environ if env is None else env,
        stdout=stdout or sys.stdout,
        stderr=stderr or sys.stderr,
    )
    await daemon.run(task_status=task_status)
