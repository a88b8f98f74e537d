"""A session's hooks register it (DESIGN.md, "Sessions": a session is live while its Claude Code process is).

Every hook (`attend drain --format hook`, commands/drain.py) ends with `register_hook`: the session's row
(store/session_rows.py `register_session`) names its Claude Code process, found by ancestry as the session id
of an `attend run` is (peers/identity.py `find_host`: pid and start time), and the transcript path the
hook's JSON gave; its presence for peers (peers/mailbox.py, `heartbeat/<session>`) names that process
too, so `attend peers list`, `peers send --to`, the `scope: session` sensors, `attend sensors` and doctor
count the session as live for as long as the process runs, between hooks as well.

Decisions implemented here:

- Cheap for a hook that has nothing to do (one runs after every tool call): the ancestry walk and the
  writes happen at a session's first hook, at `SessionStart` (`force`), when the transcript path
  changes, and otherwise at most every `HOOK_BEAT` seconds; every other hook only reads the row.
- A hook writes the session's presence only when it found the Claude Code process (without it, nothing
  could tell when the session ends), and never over the presence of the session's running `attend run`.
- The project's poller rewrites the presence of each live session its hooks alone serve as often as an
  `attend run` rewrites its own (`beat_for_hooks_sessions`): across machines a presence lives only while it
  is rewritten (the NATS bucket's TTL, peers/natslink.py), and such a session's hooks may be hours apart.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from attend.peers.mailbox import Mailbox
    from attend.runtime.store import Store

__all__ = ["HOOK_BEAT", "MAX_TRANSCRIPT_PATH", "beat_for_hooks_sessions", "register_hook"]

#: How often (seconds) a session's hooks register it again (its heartbeat, its presence, its process).
HOOK_BEAT = 30.0
#: The longest transcript path recorded (a path longer than Linux's PATH_MAX is not one).
MAX_TRANSCRIPT_PATH = 4096


def _transcript(value: Any) -> str | None:
    """The hook's `transcript_path` when it is an absolute path attend can record, else None."""
    if not isinstance(value, str) or not value.startswith("/") or len(value) > MAX_TRANSCRIPT_PATH or "\0" in value:
        return None
    return value


def register_hook(store: Store, session: str, *, project_dir: str, hook: Mapping[str, Any],
                  env: Mapping[str, str] | None = None, force: bool = False) -> None:
    """Record that `session` lives, as its hook `hook` (the hook's JSON) tells; see the module docstring.

    Args:
        store: the project's open store.
        session: the session id.
        project_dir: the project (its presence's).
        hook: the hook's JSON (`transcript_path` is read).
        env: the environment (Claude Code's session records, the peers folder); default `os.environ`.
        force: register now, whenever the last time was (`SessionStart`).
    """
    transcript = _transcript(hook.get("transcript_path"))
    row = store.session(session)
    now = store.now()
    if (not force and row is not None and row.claude_seen is not None and 0 <= now - row.claude_seen < HOOK_BEAT
            and (transcript is None or transcript == row.transcript)):
        return
    from attend.peers.identity import find_host

    env = os.environ if env is None else env
    # ATTEND_SESSION names the session, not the process: the ancestry walk never reads it.
    host = find_host(env)
    store.register_session(session, host=host, transcript=transcript)
    if host is None:
        return
    from attend.peers.mailbox import Mailbox, peers_dir

    started = row.started if row is not None and row.started is not None else now
    try:
        Mailbox(peers_dir(env)).beat(session, project_dir, pid=None, started=started, host=host)
    except OSError:
        pass  # an unwritable cache folder: peers do not see this session; it is served all the same


def beat_for_hooks_sessions(store: Store, mailbox: Mailbox, project_dir: str | Path) -> None:
    """Rewrite the presence of every live session of the project that its hooks alone serve (no `attend run`
    of it runs; its Claude Code process is known and runs): the poller's beat for them."""
    from attend.peers.mailbox import Unavailable
    from attend.runtime.sessions.status import live_sessions

    for live in live_sessions(store.sessions()):
        if live.pid is None and live.claude_pid is not None and live.claude_start is not None:
            try:
                mailbox.beat(live.session, project_dir, pid=None, started=live.started or store.now(),
                             host=(live.claude_pid, live.claude_start), conduit="hooks")
            except (OSError, Unavailable):
                pass  # an unwritable cache folder, an unreachable server: the next beat tries again
