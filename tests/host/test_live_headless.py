"""A `claude -p` session (no Monitor: plugin monitors arm only in interactive sessions) is a live session like
any other while its Claude Code process runs (DESIGN.md, "Sessions"; issue 34, item 1): `attend peers list`
lists it, `attend peers send --to` reaches it, and the context sensor polls for it. The real CLI against the
fake Messages API (host_rig.py); what the model is told is read from the requests it sends."""

from __future__ import annotations

import json

from fake_api import bash, text
from host_rig import polls
from waiting import PATIENCE, wait_until


def peers(home) -> dict[str, dict]:
    listed = home.attend("peers", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {row["session"]: row for row in json.loads(listed.stdout)}


def test_a_claude_p_session_is_a_live_peer_and_gets_its_own_context_line(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    # The shipped context sensor, on and polling every second (its shipped 30 s would make a slow test).
    home.write_user_sensor("context", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 1s\n")
    step, go = home.project / "step", home.project / "go"
    # The first turn reports 175,000 of the window's 200,000 tokens and runs a command that waits: the session
    # is live (a Bash tool call in progress), its hooks alone serve it.
    host.api.reply(bash(f"touch {step}; while [ ! -e {go} ]; do sleep 0.05; done; echo tool-done",
                        usage={"input_tokens": 175_000}), text("all done"))
    proc = host.start_headless("run the tool")
    try:
        wait_until(step.exists, what="the Bash tool call to start")
        session = host.api.requests[0].session
        listed = peers(home)
        assert listed[session]["conduit"] == "hooks" and listed[session]["pid"] is None, listed
        assert listed[session]["claude_pid"] == proc.pid, (listed, proc.pid)
        sent = home.attend("peers", "send", "--to", str(home.project), "the build is green")
        assert sent.returncode == 0, sent.stderr
        line = "[attend sensor=context priority=medium] context 87.5% used (175000 of 200000 tokens)"
        wait_until(lambda: "context 87.5% used" in json.dumps(polls(home, "context")),
                   what="the context line fired for the -p session")
        go.touch()
        out, err = proc.communicate(timeout=PATIENCE * 4)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == "all done\n"
    turns = [r for r in host.api.requests if r.is_turn]
    assert len(turns) == 2, host.api.summary()  # the tool call, then the answer after its result
    assert line in turns[1].messages_text and turns[1].count("context 87.5% used") == 1
    assert session not in peers(home)  # its process ended: no longer live
