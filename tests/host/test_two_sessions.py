"""Two interactive Claude Code sessions in one project, each with the attend plugin's Monitor: what each
one's model is told, read from the requests the real CLI sends (host_rig.py)."""

from __future__ import annotations

import itertools
import re
import subprocess

from fake_api import bash, text
from host_rig import MARKER_RETRY, polled
from waiting import PATIENCE, wait_until


def test_two_sessions_each_get_their_own_context_line_and_not_the_other_s(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    # The shipped context sensor, on and polling every second (its shipped 30 s would make a slow test).
    home.write_user_sensor("context", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 1s\n")
    with host.session() as a, host.session() as b:
        a.wait_ready()
        b.wait_ready()
        # A first turn each at 10 % of the sensor's 200,000-token window: the sensor's first reading of a
        # session is its baseline. Then A's next turn reports 85 % (the `high` tier: a medium line), B's 91 %
        # (`critical`: a high line).
        for session in (a, b):
            host.api.reply(text("first answer", usage={"input_tokens": 20_000}), session=session.id)
            session.type("first prompt")
        for session in (a, b):
            wait_until(lambda s=session: polled(home, "context", s.id), what=f"the context sensor's baseline of {session.id}")
            session.wait_idle(host.api.wait_for("first prompt", session=session.id).received)
        host.api.reply(text("A's answer", usage={"input_tokens": 170_000}), session=a.id)
        host.api.reply(text("B's answer", usage={"input_tokens": 182_000}), session=b.id)
        a.type("second prompt of session A")
        b.type("second prompt of session B")
        line_a = host.api.wait_for("context 85.0% used", session=a.id)
        line_b = host.api.wait_for("context 91.0% used", session=b.id)
        assert "<event>[attend sensor=context priority=medium] context 85.0% used (170000 of 200000 tokens)</event>" \
            in line_a.messages_text
        # Both sessions caught up (a marker line reached each after its context line), and neither was told
        # the other's use.
        last_a, last_b = host.caught_up(a), host.caught_up(b)
        assert last_a.number > line_a.number and last_b.number > line_b.number
        assert (last_a.count("context 85.0% used"), last_a.count("context 91.0%")) == (1, 0)
        assert (last_b.count("context 91.0% used"), last_b.count("context 85.0%")) == (1, 0)


#: A notification line of the processes sensor as the model reads it (a Monitor event or hook context).
PROCESS_LINE = re.compile(r"\[attend sensor=processes priority=\w+\][^\n<]*")


def test_a_session_is_never_told_of_another_session_s_tool_calls(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    # The shipped processes sensor, on and polling every second, each start a medium line (a user who turned
    # it up), so whatever it reports reaches both sessions at once.
    home.write_user_sensor("processes", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 1s\n"
                                        "triggers:\n  started:\n    magnitude: 5\n")
    step, go, build = home.project / "step", home.project / "go", home.project / "long-build"
    # A build that runs until the test's go file exists. Its only argument says whose it is, and its command
    # line (`/bin/sh <project>/long-build --of-...`) stays within the sensor's 160-character cut, so a line
    # about it says whose it is: a longer one would be cut before the tag, and neither the line the test
    # waits for nor the one it must never see could be told.
    build.write_text(f"#!/bin/sh\nwhile [ ! -e '{go}' ]; do sleep 0.05; done\n")
    build.chmod(0o755)
    with host.session() as a, host.session() as b:
        a.wait_ready()
        b.wait_ready()
        # B's tool call: a build that runs until the test says go, long past the sensor's minimum lifetime.
        host.api.reply(bash(f"touch {step}; {build} --of-session-b"), text("B's build is done"), session=b.id)
        b.type("run the build")
        wait_until(step.exists, what="B's tool call running")
        # A build nobody's session started, begun while B's runs: the sensor reports it, and idle A is told at
        # once (its line comes from the polls that saw B's build alive). B is told only once its turn goes on:
        # Claude Code sends no request while B's tool call runs, so the build is let finish first.
        # Claude Code 2.1.328 drops a Monitor line that reaches it just as a turn ends (docs/claude-code.md), so
        # as the rig's marker does, another such build (a new process, a new line) starts while none arrived.
        outside: list[subprocess.Popen[bytes]] = []
        try:
            for attempt in itertools.count(1):
                outside.append(subprocess.Popen([str(build), f"--of-nobody-{attempt}"], cwd=home.project,
                                                env=host.env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL))
                try:
                    host.api.wait_for("--of-nobody", session=a.id, timeout=MARKER_RETRY * 2)
                    break
                except AssertionError:
                    if attempt * MARKER_RETRY * 2 >= PATIENCE * 2:
                        raise
        finally:
            go.touch()
            for proc in outside:
                proc.wait(timeout=PATIENCE)
        host.api.wait_for("--of-nobody", session=b.id, timeout=PATIENCE * 2)
        b.wait_idle()  # B's tool call ended and its turn with it
        # Both sessions caught up after B's build ended (its exit polled too): the build nobody started reached
        # each as a processes line, B's tool call in no processes line of any request of either session.
        for session in (a, b):
            host.caught_up(session)
            told = [line for request in host.api.of(session.id) for line in PROCESS_LINE.findall(request.messages_text)]
            assert any("--of-nobody" in line for line in told), told
            assert not any("--of-session-b" in line for line in told), told
