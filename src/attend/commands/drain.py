"""`attend drain [--format hook|plain]`: the message-lane notifications a session has not been handed yet.

Decisions implemented here:

- Per session (DESIGN.md, "Sessions"): the session is `--session`, else the `session_id` of the
  Stop-hook JSON Claude Code writes on stdin (`--format hook`), else `resolve_session` ($ATTEND_SESSION,
  Claude Code's session record, ...). A resolved session is handed what its own Monitor did not show
  and its earlier drains did not hand over (store/sessions.py). An unresolved one (`pid-<pid>`) gets
  what no conduit delivered yet, as before sessions existed.
- A Stop hook must never trap the agent: nothing new prints nothing and exits 0, whatever
  `stop_hook_active` says, so a hook that already blocked once lets the agent stop; a stdin that is
  not the hook's JSON is ignored; no problem of attend's ever exits 2 (which would block).
- Printed first, recorded after: a crash in between hands the rows over again rather than never.
- A resolved session is never handed its own message, nor one it was already shown (runtime/sessions/seen.py);
  when its cold start (runtime/sessions/cold_start.py) is not done yet, this drain does it, its lines first.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from attend.commands import reports_unusable_store

__all__ = ["hook_input", "main"]

#: The most of stdin read for the hook's JSON (Claude Code sends well under a kilobyte).
HOOK_INPUT_LIMIT = 1 << 20


def hook_input(text: str) -> dict[str, Any]:
    """The Stop hook's JSON object from `text`, or {} for anything else (empty, not JSON, not an object)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _read_hook_stdin() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        return hook_input(sys.stdin.read(HOOK_INPUT_LIMIT))
    except (OSError, UnicodeDecodeError):
        return {}


def _session_id(args: Any, hook: dict[str, Any]) -> str | None:
    """The resolved session to drain for, or None (unresolved: drain what no conduit delivered)."""
    from attend.peers.identity import SessionError, resolve_session, validate_session_id

    explicit = getattr(args, "session", None)
    if explicit is None and isinstance(hook.get("session_id"), str):
        try:
            return validate_session_id(hook["session_id"])
        except SessionError as exc:
            print(f"attend: the hook's {exc}; draining for no session", file=sys.stderr)
            return None
    try:
        session = resolve_session(explicit)
    except SessionError as exc:
        print(f"attend: {exc}; draining for no session", file=sys.stderr)
        return None
    return session.id if session.resolved else None


def _arrived(count: int) -> str:
    """`N messages arrived`, counting the messages shown (a cold start's summary line is not one)."""
    if count == 0:  # only the summary of messages passed over
        return "messages arrived"
    return f"{count} message{'s' if count != 1 else ''} arrived"


@reports_unusable_store
def main(args: Any) -> int:
    """`attend drain`: print the undelivered message-lane notifications of this session, then record them."""
    from attend.runtime.delivery import format_line
    from attend.runtime.sessions.cold_start import cold_start, message_sensors
    from attend.runtime.sessions.seen import for_session
    from attend.runtime.store import open_project_store
    from attend.runtime.store.sessions import COLD_START
    from attend.spec import layer_paths

    hook = _read_hook_stdin() if args.format == "hook" else {}
    session = _session_id(args, hook)
    with open_project_store(layer_paths(args.project_dir, os.environ)) as store:
        seen: list[str] = []
        lines: list[str] = []
        summaries = 0  # lines standing for messages passed over, not messages themselves
        if session is None:
            entries, upto = store.undrained("message"), 0
        else:
            entries, upto = store.drain_backlog(session)
            already = store.seen_items(session)
            entries, seen = for_session(entries, session, already)
            if not store.cold_start_done(session):
                handed = cold_start(message_sensors(args.project_dir, os.environ), args.project_dir, session,
                                    seen=already | set(seen), now=time.time())
                lines = [format_line(line.sensor, line.priority, line.description) for line in handed.lines]
                summaries = sum(line.summary for line in handed.lines)
                seen += [*handed.seen, COLD_START]
        lines += [format_line(e.sensor, e.priority, e.description, test=e.test, key=e.key, meta=e.meta)
                  for e in entries]
        if lines:
            if args.format == "hook":
                reason = f"attend: {_arrived(len(lines) - summaries)} while you worked:\n" + "\n".join(lines)
                print(json.dumps({"decision": "block", "reason": reason}))
            else:
                print("\n".join(lines))
            sys.stdout.flush()
        # Recorded after printing: a crash in between hands the rows over again rather than never.
        if session is None:
            store.mark_drained(e.id for e in entries)
        else:
            store.claim_drained(session, entries, upto, seen)
    return 0
