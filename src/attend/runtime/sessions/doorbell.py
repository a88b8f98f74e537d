"""The doorbell: an idle session without a Monitor woken for a line worth a turn (DESIGN.md, "Delivery").

Claude Code runs a hook declared with `"asyncRewake": true` in the background; when it exits 2 the model is
woken with its stderr, as an automated background-task event. The plugin's Stop hook is such a hook
(hooks/hooks.json): `attend drain --format doorbell` (commands/drain.py prints and picks the exit code;
this module decides when). Armed each time the agent stops, it waits here until its session has a line
worth a turn (handover.py `worth_a_turn`: a message, a high or medium line) that no conduit handed it yet,
and then hands it over: read, shown and recorded in one store transaction (`Store.exclusive`), so the
line is marked shown once whichever conduit (the doorbell, a prompt hook, a Monitor taking over) shows it.

Decisions implemented here:

- What it waits on: its bell (store/bell.py `doorbell_address`), which the connection that commits journal
  rows rings for every session of the project that beat lately, as it rings the printers'; then a cheap
  look at the store: SQLite's `PRAGMA data_version`, which changes only when another connection committed,
  read from the open connection's shared memory (no file read, no query); only then is the journal asked
  whether a line waits (one row of the `journal_turn` index). It looks once a second besides (its liveness
  check), so a bell that never rings delays a line by that and loses none; without a bell (none could be
  bound: not Linux) it looks every `DOORBELL_CHECK` seconds (0.2 s), as it did before it had one (issue 39:
  about 100 ms of a line's way, and five wakes a second at rest). A file watch on the database was the
  alternative: the poller commits at every poll (its status rows), so a watch would wake as often, with a
  thread and an inotify descriptor per idle session besides.
- When it ends without a word (exit 0): the session's Claude Code process ended (`claude_pid`, from
  `$CLAUDE_PID` that Claude Code gives its hooks, else the session record's owner, else the parent); a
  Monitor became live for the session (it carries the lines now), or the hooks do not carry them
  (`attend.delivery.conduits: monitor`); another doorbell of the session is armed (a lock per session:
  the first one keeps waiting, and Claude Code still wakes the model when it rings); `DOORBELL_CEILING`
  (8 hours) passed, below the hook's `timeout` in hooks/hooks.json, so Claude Code never kills it. After
  the ceiling the session's lines wait in the journal: its next prompt's hook hands them over, and its
  next stop arms the doorbell again.
- With a Monitor live at the stop, it hands over once what the Monitor left to the Stop hook, the message
  lane's low lines, which went to its stderr (store/session_rows.py `drain_backlog`), then ends. Never a high
  or medium line, which the Monitor prints itself, perhaps a moment later: seen with the real CLI, a
  message handed over by a doorbell armed as it arrived reached the session twice. A Monitor that takes
  the session over while the doorbell waits is seen within `LIVENESS_CHECK`, and at once when a line
  worth a turn comes: the doorbell asks again holding the store's lock before it hands one over.
- In the foreground (`claude -p` runs an asyncRewake hook as a plain Stop hook and waits for it:
  `runs_in_foreground`), it looks once and never waits; and never rings twice for one stop
  (`stop_hook_active`), so `claude -p` gets one extra turn for lines worth one and none for low lines.
- Bounded: one handover is what a hook hands over (`HANDOVER_ROWS` rows read at most); the process
  keeps one store connection and no growing state; it beats for its session every `BEAT` seconds, so
  the project's headless poller (which ends once no session has been live for 10 minutes) keeps polling
  while the session is idle, and it starts one within a second when none polls.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:

    import socket

    from attend.runtime.sessions.handover import Handover
    from attend.runtime.store import Store

__all__ = ["DOORBELL_CEILING", "DOORBELL_CHECK", "LIVENESS_CHECK", "Claude", "ring",
           "runs_in_foreground"]

#: Seconds between two looks at the store (`PRAGMA data_version`) of a doorbell without a bell.
DOORBELL_CHECK = 0.2
#: Seconds between two checks that the session's Claude Code process runs and no Monitor took over.
LIVENESS_CHECK = 1.0
#: The longest a doorbell waits (seconds); the Stop hook's `timeout` in hooks/hooks.json is above it.
DOORBELL_CEILING = 8 * 3600.0
#: Seconds between two beats for the session (`Store.register_session`; sessions/register.py HOOK_BEAT).
BEAT = 30.0


def runs_in_foreground(env: Mapping[str, str]) -> bool:
    """Whether Claude Code waits for this hook: `claude -p` (`CLAUDE_CODE_ENTRYPOINT=sdk-cli`) runs an
    asyncRewake hook as a plain one (seen with 2.1.328: the run waited for it, and its exit 2 continued
    the turn). An interactive session (`cli`) and the SDK's streaming sessions run it in the background."""
    return env.get("CLAUDE_CODE_ENTRYPOINT") == "sdk-cli"


class Claude:
    """The session's Claude Code process, told apart from a later process with the same pid (its start time,
    `peers.identity.process_start`)."""

    def __init__(self, pid: int | None) -> None:
        from attend.peers.identity import process_start

        self.pid = pid
        self._started = process_start(pid) if pid is not None else None

    def runs(self) -> bool:
        """Whether the process still runs (True when there is none to watch: the ceiling bounds the wait)."""
        if self.pid is None:
            return True
        from attend.peers.identity import host_runs

        return host_runs(self.pid, self._started)

    @classmethod
    def of_hook(cls, env: Mapping[str, str]) -> Claude:
        """The Claude Code process of the running hook: `$CLAUDE_PID`, else the nearest ancestor with a
        session record (`peers.identity.find_host`), else the hook's parent."""
        pid = env.get("CLAUDE_PID", "")
        if pid.isdigit() and int(pid) > 0:
            return cls(int(pid))
        from attend.peers.identity import find_host

        try:
            host = find_host(env)
        except Exception:  # noqa: BLE001 - no session record to go by: the parent then
            host = None
        return cls(host[0] if host is not None else os.getppid())


def _bind_bell(address: bytes) -> socket.socket:
    """`store.bell.bind_bell`, imported when a doorbell waits (its socket module stays off the hooks' start)."""
    from attend.runtime.store.bell import bind_bell

    return bind_bell(address)


def ring(
    store: Store,
    session: str,
    *,
    project_dir: str,
    claude: Claude,
    show: Callable[[Handover], None],
    foreground: bool,
    carried: Callable[[], bool],
    keep_polled: Callable[[], None] = lambda: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    ceiling: float = DOORBELL_CEILING,
    env: Mapping[str, str] | None = None,
    open_bell: Callable[[bytes], socket.socket] | None = _bind_bell,
    between: float = LIVENESS_CHECK,
) -> str:
    """Wait until `session` has lines worth a turn and hand them over through `show`; return why it ended.

    Args:
        store: the project's store (one connection, kept for the wait).
        session: the session id; it has a row already (its position: what comes later is after it,
            whichever process journals or prints it).
        project_dir: the project (its `stale_after` and digest rules shape the lines).
        claude: the session's Claude Code process; the wait ends when it does.
        show: shows a `Handover` (handover.py) to the session; called inside the store transaction that
            records it, so a crash in between hands the lines over again, and no other conduit of the
            session hands them over too.
        foreground: look once, never wait (`runs_in_foreground`).
        carried: whether the hooks carry the session's lines now (no live Monitor, conduits allow it).
        keep_polled: called every `LIVENESS_CHECK` seconds: starts a poller when none polls.
        clock, sleep: monotonic seconds and the wait between looks without a bell (tests pass their own).
        ceiling: the longest wait (seconds).
        env: the environment naming the layers (default `os.environ`).
        open_bell: binds the doorbell's bell at an address (`store.bell.bind_bell`); None: no bell, a look
            every `DOORBELL_CHECK` seconds through `sleep`.
        between: with a bell, the longest wait between two looks (`LIVENESS_CHECK`; a test makes it long to
            show that the bell, not the timer, brings a line).

    Returns:
        "rang" (lines handed over), "monitor" (a Monitor carries the session's lines), "gone" (its Claude
        Code process ended), "ceiling" (waited `ceiling` seconds) or "nothing" (in the foreground: no line).
    """
    started = clock()
    if not carried():
        return "rang" if _drain_messages(store, session, show) else "monitor"
    bell = None
    if open_bell is not None and not foreground:
        from attend.runtime.store.bell import doorbell_address

        try:  # bound before the first look: a line committed after it rings
            bell = open_bell(doorbell_address(store.scope, session))
        except OSError:
            bell = None
    try:
        return _wait(store, session, project_dir, claude, show, foreground, carried, keep_polled, clock, sleep,
                     ceiling, env, bell, between, started)
    finally:
        if bell is not None:
            bell.close()


def _wait(store: Store, session: str, project_dir: str, claude: Claude, show: Callable[[Handover], None],
          foreground: bool, carried: Callable[[], bool], keep_polled: Callable[[], None],
          clock: Callable[[], float], sleep: Callable[[float], None], ceiling: float,
          env: Mapping[str, str] | None, bell: socket.socket | None, between: float, started: float) -> str:
    """`ring`'s wait: look, then wait for the bell (or `DOORBELL_CHECK` without one), until a reason to end."""
    from attend.runtime.sessions.handover import hook_handover
    from attend.runtime.store.bell import wait_rung

    version: int | None = None
    checked = beat = looked = started
    rung = True  # the first look is made at once
    while True:
        now = clock()
        if bell is None or rung or now - looked >= between:
            looked = now
            current = store.data_version()
            if current != version:
                version = current
                handed = _hand_over(store, session, project_dir, show, env, hook_handover, carried)
                if handed is not None:
                    return handed
        if foreground:
            return "nothing"
        if now - checked >= LIVENESS_CHECK:
            checked = now
            store.follow_file(restore=False)  # a store replaced under it: read the new one (the poller's)
            if not claude.runs():
                return "gone"
            if not carried():
                return "monitor"
            keep_polled()
        if now - beat >= BEAT:
            beat = now
            store.register_session(session)
        if now - started >= ceiling:
            return "ceiling"
        if bell is None:
            sleep(DOORBELL_CHECK)
        else:
            rung = wait_rung(bell, min(checked + LIVENESS_CHECK, looked + between, started + ceiling) - clock())


def _hand_over(store: Store, session: str, project_dir: str, show: Callable[[Handover], None],
               env: Mapping[str, str] | None, hook_handover: Callable[..., Handover],
               carried: Callable[[], bool]) -> str | None:
    """Hand `session` its lines worth a turn, if any: looked for without the lock (the cheap, common case),
    then read, shown and recorded holding it (another conduit may have taken them meanwhile); "rang" when
    it did, "monitor" when a Monitor took the session over, None when there was nothing. Lines that are not
    worth a turn move the session's position past them (as a prompt hook passes them over).

    Whether the hooks still carry the session is asked again holding the lock: a Monitor that attached since
    the last liveness check (`LIVENESS_CHECK`, a second) prints these lines itself, and a line journaled in
    that second reached the session twice, rung by the doorbell and printed by the Monitor. Holding the
    lock, the answer stands: a Monitor attaching now commits after this transaction, and its printer then
    reads what it recorded (the items shown)."""
    first = hook_handover(store, session, project_dir=project_dir, env=env)
    if not first.entries:
        if first.upto > first.since:
            first.record(store, session)
        return None
    with store.exclusive():
        if not carried():
            return "monitor"
        handover = hook_handover(store, session, project_dir=project_dir, env=env)
        if not handover.entries:
            return None
        show(handover)
        handover.record(store, session)
    return "rang"


def _drain_messages(store: Store, session: str, show: Callable[[Handover], None]) -> bool:
    """With a Monitor carrying the session: hand over once what it left to the Stop hook (the message lane's
    low lines, which went to its stderr)."""
    from attend.runtime.sessions.handover import HANDOVER_ROWS, Handover, monitor_live

    with store.exclusive():
        # A live Monitor prints the high and medium rows itself, perhaps a moment from now: never these.
        entries, upto = store.drain_backlog(session, limit=HANDOVER_ROWS, low_only=monitor_live(store, session))
        if not entries:
            return False
        from attend.runtime.sessions.seen import for_session

        shown, items = for_session(entries, session, store.seen_items(session))
        if shown:
            show(Handover(entries=shown, items=items))
        store.claim_drained(session, entries, upto, items)
    return bool(shown)
