"""The hooks hand over news, not backlog (DESIGN.md, "Delivery"; runtime/sessions/news.py), with real hooks.

A session with no Monitor stream gets its lines through its hooks; what they hand over follows the
stream's rules: event lines older than `attend.delivery.stale_after` are one summary line. The journal's
rows are written through the store with its clock set back (the age of a line is its journal time),
and each hook is `attend drain --format hook` in its own process, as Claude Code runs it.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from attend.files import run_lock_path
from attend.runtime.store import Observation, Store, scope_for
from attend.runtime.store.location import default_db_path

HOUR = 3600.0


@pytest.fixture
def polled(quiet_home) -> Iterator:
    """A home whose project has a live poller (its run lock held here), so no hook starts one."""
    path = run_lock_path(quiet_home.project, quiet_home.env())
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield quiet_home


def journal(home, description: str, *, age: float, magnitude: float = 5.0) -> None:
    """One event-lane line the poller journaled `age` seconds ago."""
    store = Store(default_db_path(run_lock_path(home.project, home.env()).parent), scope=scope_for(home.project),
                  clock=lambda: time.time() - age)
    try:
        store.commit_poll("items", states={}, observations=[Observation("new", magnitude, description)])
        prio = "high" if magnitude >= 5 else "medium" if magnitude >= 3 else "low"
        store.disclose("items", store.pending("items"), lane="event", priority=prio)
    finally:
        store.close()


def hook(home, event: str, session: str, **extra) -> list[str]:
    """The lines a hook for `event` hands over (its additionalContext, or the Stop hook's reason)."""
    payload = {"session_id": session, "hook_event_name": event, "cwd": str(home.project), **extra}
    done = subprocess.run([sys.executable, "-m", "attend", "drain", "--format", "hook", "--project", str(home.project)],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60, env=home.env(),
                          cwd=home.project)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout) if done.stdout.strip() else {}
    text = answer.get("hookSpecificOutput", {}).get("additionalContext") or answer.get("reason") or ""
    return [line for line in text.splitlines() if line.startswith("[attend ")]


def test_a_sessions_first_hook_after_a_backlog_gets_the_summary_not_the_backlog(polled) -> None:
    for n in range(1, 4):
        journal(polled, f"old item {n}", age=2 * HOUR)
    journal(polled, "new item 4", age=5)
    assert hook(polled, "PostToolUse", "s1", tool_name="Bash") == [
        "[attend sensor=attend priority=medium] 3 notifications while this session was away; attend sensors history",
        "[attend sensor=items priority=high] new item 4",
    ]
    assert hook(polled, "PostToolUse", "s1", tool_name="Bash") == []
    assert hook(polled, "Stop", "s1", stop_hook_active=False) == []  # every row was handled, once


def test_the_stop_hook_never_asks_for_a_turn_for_low_lines_old_or_new(polled) -> None:
    # issue 33, item 5: it asked for one ("attend: 5 notifications arrived while you worked: ... priority=low")
    journal(polled, "old low 1", age=2 * HOUR, magnitude=1.0)
    journal(polled, "old low 2", age=2 * HOUR, magnitude=1.0)
    journal(polled, "old high", age=2 * HOUR)
    assert hook(polled, "UserPromptSubmit", "s1", prompt="hi") == [
        "[attend sensor=attend priority=medium] 1 notification while this session was away; attend sensors history"]
    journal(polled, "new low", age=1, magnitude=1.0)
    assert hook(polled, "Stop", "s1", stop_hook_active=False) == []
    assert hook(polled, "PostToolUse", "s1", tool_name="Bash") == []  # the low lines stay in the history


def test_the_stop_hook_asks_for_one_turn_per_stop_and_what_came_since_waits_for_the_next_hook(polled) -> None:
    journal(polled, "first", age=1)
    assert hook(polled, "Stop", "s1", stop_hook_active=False) == ["[attend sensor=items priority=high] first"]
    journal(polled, "second", age=1)
    assert hook(polled, "Stop", "s1", stop_hook_active=True) == []  # it asked for this stop's turn already
    assert hook(polled, "PostToolUse", "s1", tool_name="Bash") == ["[attend sensor=items priority=high] second"]
    assert hook(polled, "Stop", "s1", stop_hook_active=False) == []


def test_a_shorter_stale_after_in_the_config_is_what_the_hooks_use(polled) -> None:
    polled.config_file.parent.mkdir(parents=True, exist_ok=True)
    polled.config_file.write_text("delivery: {stale_after: 1m}\n")
    journal(polled, "five minutes old", age=300)
    journal(polled, "just now", age=1)
    assert hook(polled, "Stop", "s1", stop_hook_active=False) == [
        "[attend sensor=attend priority=medium] 1 notification while this session was away; attend sensors history",
        "[attend sensor=items priority=high] just now",
    ]
