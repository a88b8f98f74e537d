"""Two interactive Claude Code sessions in one project, each with the attend plugin's Monitor: what each
one's model is told, read from the requests the real CLI sends (host_rig.py)."""

from __future__ import annotations

from fake_api import text
from host_rig import polled
from waiting import wait_until


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
