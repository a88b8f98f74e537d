"""`claude -p` with the attend plugin: no Monitor (plugin monitors arm only in interactive sessions), so the
hooks are the conduit. What the model is told, read from the requests the real CLI sends (host_rig.py)."""

from __future__ import annotations

import json

from fake_api import bash, text
from host_rig import polled, polls
from waiting import PATIENCE, wait_until


def watched_sensor(home, magnitude: float) -> None:
    """A user sensor `items` polled on every change of items.json: each new item is a line of `magnitude`."""
    (home.project / "items.json").write_text("[]")
    home.write_user_sensor("items", json.dumps({
        "spec": 1, "name": "items", "kind": "command", "lane": "event", "interval": "1h", "min_interval": "0.1s",
        "threshold": 0, "wake_on": [str(home.project / "items.json")], "command": {"argv": ["cat", "items.json"]},
        "triggers": {"new": {"path": "$[*]", "key": "id", "on": "added", "magnitude": magnitude,
                             "description": "{text}"}},
    }))


def run_with_a_line_during_a_tool_call(host, home, text_: str) -> tuple[list, str]:
    """`claude -p`: the model's first turn runs a Bash command that waits; meanwhile a new item makes the
    attend daemon (the headless poller the SessionStart hook started) journal a line; then the command ends,
    the model answers, the run ends. The requests of the run, and what it printed."""
    step, go = home.project / "step", home.project / "go"
    host.api.reply(bash(f"touch {step}; while [ ! -e {go} ]; do sleep 0.05; done; echo tool-done"), text("all done"))
    proc = host.start_headless("run the tool")
    try:
        wait_until(step.exists, what="the Bash tool call to start")
        wait_until(lambda: polled(home, "items"), what="the headless poller's baseline poll of items")
        (home.project / "items.json").write_text(json.dumps([{"id": 1, "text": text_}]))
        wait_until(lambda: text_ in json.dumps(polls(home, "items")), what="the line journaled")
        go.touch()
        out, err = proc.communicate(timeout=PATIENCE * 4)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    return host.api.requests, out


def test_a_medium_line_during_a_tool_call_reaches_the_next_request_through_the_post_tool_use_hook(
        claude_host, quiet_home):
    host, home = claude_host, quiet_home
    watched_sensor(home, magnitude=3)
    requests, out = run_with_a_line_during_a_tool_call(host, home, "rig-medium-line")
    turns = [r for r in requests if r.is_turn]
    assert len(turns) == 2, host.api.summary()  # the tool call, then the answer after its result
    assert out == "all done\n"
    line = "[attend sensor=items priority=medium] rig-medium-line"
    assert line in turns[1].messages_text and turns[1].count("rig-medium-line") == 1
    assert "rig-medium-line" not in turns[0].messages_text
    # How Claude Code hands a hook's additionalContext to the model (docs/claude-code.md): a message of role
    # `system` after the tool result.
    assert {"type": "text", "text": "PostToolUse:Bash hook additional context: attend: 1 notification arrived:\n"
            + line, "cache_control": {"type": "ephemeral"}} in turns[1].messages[-1]["content"]


def test_the_stop_hook_adds_no_turn_for_a_low_line_in_claude_p(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    watched_sensor(home, magnitude=1)
    requests, out = run_with_a_line_during_a_tool_call(host, home, "rig-low-line")
    turns = [r for r in requests if r.is_turn]
    assert len(turns) == 2, host.api.summary()  # the tool call and the answer; no turn forced by the Stop hook
    assert out == "all done\n"
    assert not [r for r in requests if "rig-low-line" in r.messages_text]
