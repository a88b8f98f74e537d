"""The hooks' test rig: a hook run as Claude Code runs it, the project's poller, a session started by its hooks.

The `hooks_home` fixture (tests/runtime/conftest.py) is a home with a high-magnitude items sensor whose
headless pollers are killed at the end.
"""

from __future__ import annotations

import json

from daemon_rig import sensors_json, wait_until

from attend.files import run_lock_holder, run_lock_path

#: The poll interval of the tests' sensor (seconds).
INTERVAL = 1.0
HIGH_ITEM = {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 5, "description": "new item {id}"}


def hook(home, event: str, session: str, **extra) -> dict:
    """Run the hook for `event` as Claude Code would (its arguments, stdin, environment and folder); its JSON
    answer ({} for none). In-process: the command's process boundary is pinned by
    test_two_sessions_starting_at_the_same_moment_start_one_poller and tests/cli/test_entry_point.py."""
    from tests.conftest import run_in_process

    payload = {"session_id": session, "hook_event_name": event, "cwd": str(home.project),
               "transcript_path": str(home.root / f"{session}.jsonl"), **extra}
    done = run_in_process(["drain", "--format", "hook", "--project", str(home.project)], input=json.dumps(payload),
                          env=home.env(ATTEND_HEADLESS_IDLE=home.idle), cwd=home.project)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def context(answer: dict) -> list[str]:
    """The notification lines of a hook's additionalContext (or a Stop hook's reason)."""
    text = answer.get("hookSpecificOutput", {}).get("additionalContext") or answer.get("reason") or ""
    return [line for line in text.splitlines() if line.startswith("[attend ")]


def poller(home) -> int | None:
    return run_lock_holder(run_lock_path(home.project, home.env()))


def start_session(home, session: str) -> int:
    """The session's SessionStart hook; waits until the headless poller it started took its baseline."""
    answer = hook(home, "SessionStart", session, source="startup")
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    wait_until(lambda: poller(home) is not None, what="a headless poller")
    pid = poller(home)
    home.track(pid)
    wait_until(lambda: (sensors_json(home).get("items") or {}).get("last_poll") is not None, what="the first poll")
    return pid
