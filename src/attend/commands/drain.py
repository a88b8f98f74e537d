"""`attend drain [--format hook|plain]`: the message-lane notifications a session has not been handed yet.

Decisions implemented here:

- Per session (DESIGN.md, "Sessions"): the session is `--session`, else the `session_id` of the
  Stop-hook JSON Claude Code writes on stdin (`--format hook`), else `resolve_session` ($ATTEND_SESSION,
  Claude Code's session record, ...). A resolved session is handed what its own Monitor did not show
  and its earlier drains did not hand over (store/session_rows.py). An unresolved one (`pid-<pid>`) gets
  what no conduit delivered yet, as before sessions existed.
- A Stop hook must never trap the agent: nothing new prints nothing and exits 0, whatever
  `stop_hook_active` says, so a hook that already blocked once lets the agent stop; a stdin that is
  not the hook's JSON is ignored; no problem of attend's ever exits 2 (which would block).
- Printed first, recorded after: a crash in between hands the rows over again rather than never.
- A resolved session is never handed its own message, nor one it was already shown (runtime/sessions/seen.py);
  when its cold start (runtime/sessions/cold_start.py) is not done yet, this drain does it, its lines first.
- The hooks are a conduit too (DESIGN.md, "Delivery": Conduits; runtime/sessions/handover.py): the hook's
  `hook_event_name` picks the answer. `UserPromptSubmit` and `PostToolUse` hand over, as the event's
  `hookSpecificOutput.additionalContext`, this session's lines worth a turn (messages, high and medium
  lines) while its Monitor is not live, and print nothing while it is; `Stop` asks for another turn for
  them (`decision: block`) when no Monitor is live (else for the message lane, as before), never for low
  lines and never twice for one stop (`stop_hook_active`); `SessionStart` answers with a short status
  (`_status`) and starts a headless poller when none is live. Any other event is answered with nothing.
  A hook with nothing to hand over reads the store and nothing else: no sensor is loaded, trio is never
  imported. What a hook reads is bounded (`HANDOVER_ROWS` rows), however long the journal.
- `--format doorbell` is the plugin's Stop hook, declared `asyncRewake` (runtime/sessions/doorbell.py):
  it waits in the background until the session has a line worth a turn, writes it on stderr and exits 2
  (Claude Code wakes the model with it); it exits 0 without a word otherwise. Its text goes into the
  model's request once, where a `decision: block` answer goes in twice (Claude Code 2.1.328 adds the
  reason as "Stop hook feedback" and again as a system "Stop hook blocking error").
- Read, printed and recorded holding the store's write lock (`Store.exclusive`): two conduits of one
  session (a prompt hook, the doorbell) never hand over the same line.
- What a hook hands over is written as facts, never as orders, and stays under `CONTEXT_LIMIT`
  characters (Claude Code cuts hook output past 10,000). A Stop hook (and the doorbell) lists at most
  `STOP_LINES` (10) lines, a message's parts being one, then `(+N more; attend peers inbox shows them)`.
"""

from __future__ import annotations

import json
import os
import sys
import time

from attend.commands import reports_refusals

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Protocol

    from attend.commands import ProjectArgs
    from attend.runtime.sessions.handover import Handover
    from attend.runtime.store import Store

    class DrainArgs(ProjectArgs, Protocol):
        format: str  # plain, hook, doorbell
        session: str | None

    #: A hook's JSON object as Claude Code sends it on stdin (untrusted: each value is checked where read).
    Hook = dict[str, object]

__all__ = ["hook_input", "main"]

#: The most of stdin read for the hook's JSON (Claude Code sends well under a kilobyte).
HOOK_INPUT_LIMIT = 1 << 20
#: The most characters a hook's context holds (Claude Code cuts hook output past 10,000).
CONTEXT_LIMIT = 9000
#: What shows the messages a Stop hook's answer counts but does not list.
INBOX = "attend peers inbox"
#: The hook events answered with this session's lines while its Monitor is not live.
PROMPT_EVENTS = ("UserPromptSubmit", "PostToolUse")


def hook_input(text: str) -> Hook:
    """The Stop hook's JSON object from `text`, or {} for anything else (empty, not JSON, not an object)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit: not the hook's JSON
        return {}
    return data if isinstance(data, dict) else {}


def _read_hook_stdin() -> Hook:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        return hook_input(sys.stdin.read(HOOK_INPUT_LIMIT))
    except (OSError, UnicodeDecodeError):
        return {}


def _session_id(args: DrainArgs, hook: Hook) -> str | None:
    """The resolved session to drain for, or None (unresolved: drain what no conduit delivered)."""
    from attend.peers.identity import SessionError, resolve_session, validate_session_id

    explicit = getattr(args, "session", None)
    hooked = hook.get("session_id")
    if explicit is None and isinstance(hooked, str):
        try:
            return validate_session_id(hooked)
        except SessionError as exc:
            print(f"attend: the hook's {exc}; draining for no session", file=sys.stderr)
            return None
    try:
        session = resolve_session(explicit)
    except SessionError as exc:
        print(f"attend: {exc}; draining for no session", file=sys.stderr)
        return None
    return session.id if session.resolved else None


def _arrived(count: int, noun: str = "message") -> str:
    """`N messages arrived`, counting the messages shown (a cold start's summary line is not one)."""
    if count == 0:  # only the summary of messages passed over
        return f"{noun}s arrived"
    return f"{count} {noun}{'s' if count != 1 else ''} arrived"


#: The most lines (messages, notifications) a Stop hook's answer lists; the rest are counted (`(+N more)`).
STOP_LINES = 10


def capped(head: str, lines: list[str], limit: int = CONTEXT_LIMIT, *, more: int = 0, most: int | None = None,
           where: str = "attend sensors history") -> str:
    """`head` and as many of `lines` as fit in `limit` characters (and at most `most` of them), then one line
    saying how many did not, `(+N more; WHERE shows them)` (`more`: lines not even read, counted with them).
    A line may hold several (a long message's parts): it is listed whole or counted."""
    if most is not None and len(lines) > most:
        more += len(lines) - most
        lines = lines[:most]
    out, size = [head], len(head)
    for n, line in enumerate(lines):
        tail = f"(+{len(lines) - n + more} more; {where} shows them)"
        if size + len(line) + 1 + len(tail) + 1 > limit:
            out.append(tail)
            return "\n".join(out)
        out.append(line)
        size += len(line) + 1
    if more:
        out.append(f"(+{more} more; {where} shows them)")
    return "\n".join(out)


def _answer(answer: dict[str, object]) -> None:
    """Print a hook's JSON answer, redacted as every text attend shows (`text.json_text`; attend.redact)."""
    from attend.text import json_text

    print(json_text(answer, ensure_ascii=True))


def _context(event: str, text: str) -> None:
    """Print `text` as the hook event's `hookSpecificOutput.additionalContext`."""
    _answer({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    sys.stdout.flush()


@reports_refusals
def main(args: DrainArgs) -> int:
    """`attend drain`: print the undelivered message-lane notifications of this session, then record them."""
    if args.format == "doorbell":
        return _doorbell(args)
    if sys.stdout is None:
        # stdout closed before attend started: nobody can be handed anything, so nothing is drained (a
        # hook must never break a turn: exit 0, no output).
        return 0
    hook = _read_hook_stdin() if args.format == "hook" else {}
    event = hook.get("hook_event_name") if args.format == "hook" else None
    if event in PROMPT_EVENTS:
        return _prompt_hook(args, hook, event)
    if event == "SessionStart":
        return _session_start(args, hook)
    if event not in (None, "Stop"):
        return 0  # an event attend has nothing to say on
    if hook.get("stop_hook_active") is True:
        return 0  # once per stop: the Stop hook asked for a turn already; what came since waits for the next
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    session = _session_id(args, hook)
    with open_project_store(layer_paths(args.project_dir, os.environ)) as store:
        try:
            return _stop(args, store, session)
        finally:
            if session is not None and args.format == "hook":
                _register(store, session, args.project_dir, hook)


def _stop(args: DrainArgs, store: Store, session: str | None) -> int:
    """The Stop hook (`--format hook`) and `attend drain` outside a hook: what this session has not been
    handed yet."""
    from attend.runtime.delivery import format_line
    from attend.runtime.sessions.handover import HANDOVER_ROWS

    if session is not None and args.format == "hook" and _hooks_carry(store, session, args.project_dir):
        return _hand_over(store, session, "Stop", args.project_dir)
    with store.exclusive():
        seen: list[str] = []
        lines: list[str] = []
        summaries = 0  # lines standing for messages passed over, not messages themselves
        if session is None:
            entries, upto = store.undrained("message", limit=HANDOVER_ROWS), 0
        else:
            from attend.runtime.sessions.handover import monitor_live
            from attend.runtime.sessions.seen import for_session

            # A live Monitor prints the high and medium rows itself, perhaps a moment from now: never these.
            entries, upto = store.drain_backlog(session, limit=HANDOVER_ROWS, low_only=monitor_live(store, session))
            already = store.seen_items(session)
            entries, seen = for_session(entries, session, already)
            lines, summaries, cold = _cold_start(store, session, args.project_dir, already | set(seen))
            seen += cold
        lines += [format_line(e.sensor, e.priority, e.description, test=e.test, key=e.key, meta=e.meta, lane=e.lane)
                  for e in entries]
        if lines:
            if args.format == "hook":
                head = f"attend: {_arrived(len(lines) - summaries)} while you worked:"
                _answer({"decision": "block", "reason": capped(head, lines, most=STOP_LINES, where=INBOX)})
            else:
                print("\n".join(lines))
            sys.stdout.flush()
        # Recorded after printing: a crash in between hands the rows over again rather than never.
        if session is None:
            store.mark_drained(e.id for e in entries)
        else:
            store.claim_drained(session, entries, upto, seen)
    return 0


def _cold_start(store: Store, session: str, project_dir: str, seen: set[str]) -> tuple[list[str], int, list[str]]:
    """`session`'s cold start (runtime/sessions/cold_start.py) when it is not done yet: its lines, how many
    of them stand for messages passed over, and the items to record as seen (with `COLD_START`)."""
    if store.cold_start_done(session):
        return [], 0, []
    from attend.runtime.sessions.cold_start import cold_start, message_sensors
    from attend.runtime.store.session_rows import COLD_START

    handed = cold_start(message_sensors(project_dir, os.environ), project_dir, session, seen=seen, now=time.time())
    lines = [line.text() for line in handed.lines]
    return lines, sum(line.summary for line in handed.lines), [*handed.seen, COLD_START]


def _hooks_carry(store: Store, session: str, project_dir: str) -> bool:
    """Whether the hooks carry `session`'s lines now: no live Monitor for it (`conduits: auto`), or
    `conduits: hooks`; never with `conduits: monitor`."""
    from attend.runtime.sessions.handover import conduits, monitor_live

    chosen = conduits(project_dir)
    if chosen == "monitor":
        return False
    return chosen == "hooks" or not monitor_live(store, session)


def _handed_text(store: Store, session: str, project_dir: str, handover: Handover, *, cold: bool, head: str,
                 most: int | None = None) -> str:
    """What a hook hands `session` as one text (the cold start's lines first, when `cold` and it is not done
    yet), or "" for nothing; the cold start's items join the handover's, to be recorded with it."""
    from attend.runtime.delivery import format_line

    lines: list[str] = []
    summaries = 0
    if cold:
        lines, summaries, items = _cold_start(store, session, project_dir, store.seen_items(session) | set(handover.items))
        handover.items += items
    lines += [format_line(e.sensor, e.priority, e.description, test=e.test, key=e.key, meta=e.meta, lane=e.lane)
              for e in handover.entries]
    if not lines:
        return ""
    only_messages = all(e.lane == "message" for e in handover.entries)
    arrived = _arrived(len(lines) - summaries + handover.more, "message" if only_messages else "notification")
    return capped(head.format(arrived=arrived), lines, more=handover.more, most=most,
                  where=INBOX if only_messages else "attend sensors history")


def _hand_over(store: Store, session: str, event: str, project_dir: str, handover: Handover | None = None,
               note: tuple[str, str] | None = None) -> int:
    """Hand `session` its lines worth a turn, as the hook `event` answers: a Stop hook asks for another turn
    for them (and does the session's cold start when it is not done), a prompt hook adds them as context.
    `note`, the line saying the session's stream stopped (`stream_note`), goes first when there are lines.

    Looked for without the lock (most hooks have nothing); read, printed and recorded holding it.
    """
    from attend.runtime.sessions.handover import hook_handover

    stop = event == "Stop"
    if handover is None:
        handover = hook_handover(store, session, project_dir=project_dir)
    if not handover.entries and not (stop and not store.cold_start_done(session)):
        if handover.upto > handover.since:
            handover.record(store, session)  # only low lines came: passed over, they stay in the history
        return 0
    with store.exclusive():
        handover = hook_handover(store, session, project_dir=project_dir)
        text = _handed_text(store, session, project_dir, handover, cold=stop,
                            head="attend: {arrived} while you worked:" if stop else "attend: {arrived}:",
                            most=STOP_LINES if stop else None)
        if text and note is not None:
            text = f"{note[0]}\n{text}"
            handover.items.append(note[1])
        if text and stop:
            _answer({"decision": "block", "reason": text})
            sys.stdout.flush()
        elif text:
            _context(event, text)
        handover.record(store, session)
    return 0


def _register(store: Store, session: str, project_dir: str, hook: Hook, *, force: bool = False) -> None:
    """Record that `session` lives (runtime/sessions/register.py); a store too busy to write it is no
    reason to fail the hook: its next one records it."""
    import sqlite3

    from attend.runtime.sessions.register import register_hook

    try:
        register_hook(store, session, project_dir=project_dir, hook=hook, force=force)
    except sqlite3.OperationalError as exc:
        print(f"attend: session {session} not registered this time: {exc}", file=sys.stderr)


def _prompt_hook(args: DrainArgs, hook: Hook, event: str) -> int:
    """`UserPromptSubmit`, `PostToolUse`: this session's lines worth a turn while its Monitor is not live,
    and once, the line saying its Monitor stream stopped (`stream_note`).

    The cheap path: with nothing to hand over, it reads the store and answers nothing.
    """
    from attend.runtime.sessions.handover import hook_handover, stream_note
    from attend.runtime.store import open_project_store
    from attend.spec.folders import layer_paths

    session = _session_id(args, hook)
    if session is None:
        return 0
    with open_project_store(layer_paths(args.project_dir, os.environ)) as store:
        _keep_a_poller(args.project_dir, store)
        note = stream_note(store, session, args.project_dir)
        handover = hook_handover(store, session, project_dir=args.project_dir)
        if (handover.entries or handover.upto > handover.since) and _hooks_carry(store, session, args.project_dir):
            _hand_over(store, session, event, args.project_dir, handover, note)
            if note is not None and note[1] in store.seen_items(session):
                note = None  # said with the lines it handed over
        if note is not None:
            _context(event, note[0])
            store.mark_seen(session, [note[1]])
        _register(store, session, args.project_dir, hook)
    return 0


def _doorbell(args: DrainArgs) -> int:
    """`--format doorbell`: the plugin's Stop hook, run in the background (`asyncRewake`). It waits until the
    session has lines worth a turn (runtime/sessions/doorbell.py), writes them on stderr and exits 2, so
    Claude Code wakes the model with them; everything else (nothing came, the session ended, a Monitor
    took over, another doorbell waits already, a problem of attend's) ends it with exit 0 and no word."""
    hook = _read_hook_stdin()
    from attend.runtime.sessions.doorbell import runs_in_foreground

    foreground = runs_in_foreground(os.environ)
    if foreground and hook.get("stop_hook_active") is True:
        return 0  # claude -p waits for this hook: one extra turn per stop at most
    session = _session_id(args, hook)
    if session is None or sys.stderr is None:
        return 0
    try:
        return _ring(args, session, foreground, hook)
    except Exception:  # noqa: BLE001 - exit 2 would wake the model with attend's own trouble: never
        return 0


def _ring(args: DrainArgs, session: str, foreground: bool, hook: Hook) -> int:
    import gc

    from attend.files import doorbell_lock_path, state_folder
    from attend.runtime.sessions.doorbell import Claude, ring
    from attend.runtime.sessions.runlock import open_lock, try_lock
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    rang: list[str] = []
    with open_project_store(layer_paths(args.project_dir, os.environ)) as store:
        # The session's row first (made at the journal's end when it has none): a line that comes once the
        # doorbell is armed is after its position, whichever process journals or prints it.
        _register(store, session, args.project_dir, hook)
        path = doorbell_lock_path(state_folder(os.environ), store.project_hash(), session)
        with open_lock(path) as lock:
            if not try_lock(lock):
                return 0  # this session's doorbell is armed already; Claude Code wakes the model when it rings
            try:
                if not foreground:
                    gc.enable()  # a wait of hours: cycles are collected (a hook runs without the collector)

                def show(handover: Handover) -> None:
                    from attend.runtime.sessions.handover import stream_note

                    text = _handed_text(store, session, args.project_dir, handover, cold=False,
                                        head="attend: {arrived}:", most=STOP_LINES)
                    note = stream_note(store, session, args.project_dir) if text else None
                    if note is not None:  # said with the lines it rings for, recorded with them
                        text = f"{note[0]}\n{text}"
                        handover.items.append(note[1])
                    if text:
                        sys.stderr.write(text + "\n")
                        sys.stderr.flush()
                        rang.append(text)

                def keep_polled() -> None:
                    _keep_a_poller(args.project_dir, store)

                def carried() -> bool:
                    return _hooks_carry(store, session, args.project_dir)

                if carried() and not store.cold_start_done(session):
                    _ring_cold_start(store, session, args.project_dir, rang)
                if not rang:
                    ring(store, session, project_dir=args.project_dir, claude=Claude.of_hook(os.environ), show=show,
                         foreground=foreground, carried=carried, keep_polled=keep_polled)
            finally:
                path.unlink(missing_ok=True)  # still held: a doorbell armed meanwhile takes a new file
    return 2 if rang else 0


def _ring_cold_start(store: Store, session: str, project_dir: str, rang: list[str]) -> None:
    """The doorbell's first look at a new session: its cold start (the addressed messages waiting for it),
    written on stderr when it has lines (then appended to `rang`), recorded either way."""
    with store.exclusive():
        lines, summaries, items = _cold_start(store, session, project_dir, store.seen_items(session))
        if lines:
            sys.stderr.write(capped(f"attend: {_arrived(len(lines) - summaries)}:", lines, most=STOP_LINES,
                                    where=INBOX) + "\n")
            sys.stderr.flush()
            rang.append("\n".join(lines))
        store.record_cold_start(session, items)


#: The recent past (seconds) whose run-log lines a SessionStart status repeats.
LOG_RECENT = 3600.0
#: The most run-log lines a SessionStart status repeats.
LOG_LINES = 5


def _session_start(args: DrainArgs, hook: Hook) -> int:
    """`SessionStart`: a short status as additionalContext; a headless poller started when none is live."""
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    session = _session_id(args, hook)
    with open_project_store(layer_paths(args.project_dir, os.environ)) as store:
        if session is not None:
            _follow_clear(store, session, hook.get("source"))
            _register(store, session, args.project_dir, hook, force=True)
        started, problem = _keep_a_poller(args.project_dir, store)
        _context("SessionStart", _status(store, args.project_dir, session, started, problem))
    return 0


def _follow_clear(store: Store, session: str, source: object) -> None:
    """After `/clear` (`source: clear`) the new id inherits the position and seen items of the previous
    session of the same Claude Code process (found by ancestry: peers/identity.py `find_host`)."""
    if source != "clear":
        return
    from attend.peers.identity import find_host

    host = find_host()
    if host is None:
        return
    old = store.session_of_claude_pid(host[0], other_than=session, start=host[1])
    if old is not None:
        store.inherit_session(old, session)


def _keep_a_poller(project_dir: str, store: Store) -> tuple[int | None, str]:
    """Start a headless poller when none polls the project (not with `conduits: monitor`).

    Returns the pid started (None when one polls already) and a problem starting one ("" for none).
    """
    from attend.files import run_lock_holder, run_lock_path

    if run_lock_holder(run_lock_path(project_dir, known_hash=store.project_hash())) is not None:
        return None, ""
    from attend.runtime.sessions.handover import conduits
    from attend.runtime.sessions.status import live_sessions

    if conduits(project_dir) == "monitor":
        return None, ""
    if any(s.pid is not None for s in live_sessions(store.sessions())):
        return None, ""  # an `attend run` of the project takes the lock (one attached, one starting again as itself)
    from attend.runtime.headless import ensure_poller

    try:
        return ensure_poller(project_dir), ""
    except OSError as exc:
        return None, f"no poller could be started: {exc.strerror or exc}"


def _enabled_sensors(project_dir: str) -> int:
    """How many sensors a poller starting now runs: the enabled ones the runtime may run."""
    from attend.runtime.runnable import runnable
    from attend.spec import load_set

    return sum(runnable(s) and s.enabled for s in load_set(project_dir, os.environ).sensors.values())


def _status(store: Store, project_dir: str, session: str | None, started: int | None, problem: str) -> str:
    """The SessionStart status: sensors running, who polls, how this session's lines reach it, what
    `attend run` logged lately.

    Said as it is at that moment: a poller that just started has recorded no sensor yet, so its count is
    the sensors it starts; right after `/clear`, the session's `attend run` still serves the old id for a
    moment, and is named as this session's (status.py); the lines said to wait are those its hooks hand
    over, and only while they carry its lines.
    """
    from attend.runtime.sessions.handover import conduits, hook_handover, monitor_live, stream_note
    from attend.runtime.sessions.runlog import log_path, read_log
    from attend.runtime.sessions.status import project_sessions
    from attend.text import printable_path

    chosen = conduits(project_dir)
    sessions = project_sessions(project_dir, store=store, conduits=chosen)
    statuses = store.statuses().values()
    polled = sum(status.next_poll is not None for status in statuses)
    # A streaming command never has a next poll: it is one a daemon started (its lane recorded) and
    # that neither stopped (invalid, refused) nor was turned off. `attend run` counts both as running.
    streaming = sum(status.next_poll is None and status.lane is not None and status.message != "disabled"
                    and status.state not in ("invalid", "refused") for status in statuses)
    running = polled + streaming
    split = f" ({polled} polled, {streaming} streaming)" if streaming else ""
    where = printable_path(project_dir)
    if started is not None or sessions.lock_pid is None or running == 0:
        # Nothing polls, or the poller has not recorded its sensors yet: what it runs is what is enabled.
        enabled = _enabled_sensors(project_dir)
        verb = "start" if started is not None or sessions.lock_pid is not None else "enabled"
        parts = [f"attend: {enabled} sensor{'s' if enabled != 1 else ''} {verb} for {where}."]
    else:
        parts = [f"attend: {running} sensor{'s' if running != 1 else ''} running for {where}{split}."]
    if started is not None:
        parts.append(f"No poller was running; a headless poller started (pid {started}).")
    elif problem:
        parts.append(problem[0].upper() + problem[1:] + ".")
    elif sessions.poller is None and sessions.lock_pid is not None:
        parts.append(f"A headless poller (pid {sessions.lock_pid}) polls{sessions.others(say_none=False)}.")
    else:
        parts.append(sessions.describe()[0].upper() + sessions.describe()[1:] + ".")
    if session is not None:
        note = stream_note(store, session, project_dir)
        if note is not None:
            parts.append(note[0])
            store.mark_seen(session, [note[1]])
        if chosen != "monitor" and (chosen == "hooks" or not monitor_live(store, session)):
            handover = hook_handover(store, session, project_dir=project_dir)
            waiting = len(handover.entries) + handover.more
            parts.append(f"{waiting} line{'s wait' if waiting != 1 else ' waits'} for this session.")
        elif chosen != "monitor" or monitor_live(store, session):
            parts.append("This session's attend stream (its Monitor) carries its lines.")
        else:
            parts.append("No attend stream carries this session's lines yet (attend.delivery.conduits is monitor).")
    logged = read_log(log_path(project_dir), since=time.time() - LOG_RECENT)[-LOG_LINES:]
    if logged:
        parts.append("attend run logged: " + "; ".join(
            f"{time.strftime('%H:%M:%S', time.localtime(when))} {text}" for when, _, text in logged))
    return capped(parts[0], parts[1:])
