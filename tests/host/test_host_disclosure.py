"""The disclosure sensor (ADR-400) in a real interactive Claude Code session with the attend plugin's Monitor:
what the model is told, read from the requests the real CLI sends to the fake Messages API (host_rig.py), and
the session's own transcript, which Claude Code writes and the sensor reads."""

from __future__ import annotations

import json

from tests.runtime.daemon_rig import journal_rows, query

from fake_api import bash, text
from host_rig import polled
from waiting import wait_until

#: How the shipped line starts (sensors.d/disclosure.yaml).
LINE = "[attend sensor=disclosure priority=medium] peers messaging: `attend peers send TEXT`"


def ledger(home, session: str) -> dict:
    """The sensor's reading of `session`'s transcript as the poller stored it after its last poll ({} before one)."""
    rows = query(home, "SELECT state FROM crate_state WHERE sensor = ?", f"disclosure@{session}")
    return json.loads(rows[0][0]) if rows else {}


def test_a_working_session_is_told_the_commands_once_and_the_line_it_received_restarts_the_count(
        claude_host, quiet_home):
    host, home = claude_host, quiet_home
    home.write_user_sensor("disclosure", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 1s\n")
    step, go = home.project / "step", home.project / "go"

    def held_tool(n: int) -> str:
        """A Bash command that marks it started and waits for the test's go, then says which turn it was."""
        return f"touch {step}; while [ ! -e {go} ]; do sleep 0.05; done; rm {go}; echo tool-done-{n}"

    with host.session() as session:
        session.wait_ready()
        host.api.reply(text("first answer", usage={"input_tokens": 20_000}), session=session.id)
        session.type("first prompt")
        wait_until(lambda: polled(home, "disclosure", session.id), what="the disclosure sensor's first reading")
        session.wait_idle()
        # A turn whose tool call holds 75,000 tokens: 55,000 since the first turn, past a quarter of the window.
        host.api.reply(bash(held_tool(2), usage={"input_tokens": 75_000}),
                       text("second answer", usage={"input_tokens": 76_000}), session=session.id)
        session.type("second prompt")
        wait_until(lambda: any(r["sensor"] == "disclosure" for r in journal_rows(home)),
                   what="the disclosure line journaled while the tool runs")
        go.touch()
        # The line reaches the model with the tool's result, or (when the Monitor prints it as the turn's last
        # request goes out) in a turn Claude Code starts for it, which the fake answers at the context the
        # session was at (fake_api: a context does not shrink without a compaction).
        told = host.api.wait_for("peers messaging: `attend peers send TEXT`", session=session.id)
        assert f"<event>{LINE}" in told.messages_text and told.count("peers messaging:") == 1
        session.wait_idle()
        # The line is in the session's transcript: the count starts again there. A third turn at 122,000 tokens
        # (a second quarter since the first turn, under one since the line) tells nothing.
        wait_until(lambda: ledger(home, session.id).get("sightings", 0) >= 1, what="the line read back from the transcript")
        step.unlink()
        host.api.reply(bash(held_tool(3), usage={"input_tokens": 122_000}),
                       text("third answer", usage={"input_tokens": 123_000}), session=session.id)
        session.type("third prompt")
        wait_until(step.exists, what="the third turn's tool call")
        wait_until(lambda: ledger(home, session.id).get("tokens") == 122_000 and ledger(home, session.id)["working"],
                   what="a poll of the working third turn")
        go.touch()
        last = host.api.wait_for("tool-done-3", session=session.id, after=told.number)
        assert last.count("peers messaging:") == 1  # the one line, once, in the conversation so far
        assert len([r for r in journal_rows(home) if r["sensor"] == "disclosure"]) == 1
        assert query(home, "SELECT description FROM pending WHERE sensor LIKE 'disclosure%'") == []
