"""The doorbell with the real Claude Code CLI: an idle interactive session whose lines the hooks carry (no Monitor
prints for it) is woken by the plugin's asyncRewake Stop hook, read from the requests it sends (host_rig.py)."""

from __future__ import annotations

from tests.host.test_monitor import fire, items_sensor

from fake_api import texts_of
from waiting import wait_until

#: The line a test fire of the `items` sensor makes for an item whose text is {text}.
FIRED = "[attend sensor=items priority=medium] [test] {text}"


def test_an_idle_session_without_a_monitor_is_woken_by_the_doorbell_with_the_line_once(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    items_sensor(home)
    done = home.attend("settings", "set", "attend.delivery.conduits", "hooks")  # the Monitor prints nothing
    assert done.returncode == 0, done.stderr
    with host.session() as session:
        session.wait_ready()
        session.type("hello")  # one turn: the doorbell is armed when the agent stops
        host.api.wait_for("hello", session=session.id)
        session.wait_idle()
        wait_until(session.doorbell_armed, what="the doorbell armed at the stop")
        fire(home, "rig-bell-one")
        woken = host.api.wait_for("rig-bell-one", session=session.id)
        # No prompt was typed: the doorbell's exit 2 started the turn, as Claude Code hands an asyncRewake
        # hook's stderr to the model (docs/claude-code.md, section 3).
        assert woken.count("rig-bell-one") == 1
        assert f'Stop hook blocking error from command "Stop": attend: 1 notification arrived:\n' \
               f'{FIRED.format(text="rig-bell-one")}' in woken.messages_text
        assert "[SYSTEM NOTIFICATION - NOT USER INPUT]" in woken.messages_text
        typed = [t for m in woken.messages if m["role"] == "user" for t in texts_of(m["content"])
                 if not t.startswith("<system-reminder>")]
        assert typed == ["hello"]
        # Armed again at the next stop: a second line wakes it again, and the first is not repeated.
        session.wait_idle()
        wait_until(session.doorbell_armed, what="the doorbell armed again")
        fire(home, "rig-bell-two")
        again = host.api.wait_for("rig-bell-two", session=session.id, after=woken.number + 1)
        assert (again.count("rig-bell-one"), again.count("rig-bell-two")) == (1, 1)
