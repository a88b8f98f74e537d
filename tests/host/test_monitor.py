"""What an interactive Claude Code session with the attend plugin receives through the plugin's Monitor, read
from the requests the real CLI sends to the fake Messages API (host_rig.py)."""

from __future__ import annotations

import json

from host_rig import polled
from waiting import wait_until

#: The line a test fire of the `items` sensor prints for an item whose text is {text}.
FIRED = "[attend sensor=items priority=medium] [test] {text}"


def items_sensor(home) -> None:
    """A user sensor `items` (a new item in items.json is a medium event line) that only test fires wake."""
    (home.project / "items.json").write_text("[]")
    home.write_user_sensor("items", json.dumps({
        "spec": 1, "name": "items", "kind": "command", "lane": "event", "interval": "1h", "threshold": 0,
        "command": {"argv": ["cat", "items.json"]},
        "triggers": {"new": {"path": "$[*]", "key": "id", "on": "added", "magnitude": 3, "description": "{text}"}},
    }))


def fire(home, text: str) -> None:
    (home.project / "fire.json").write_text(json.dumps([{"id": text, "text": text}]))
    done = home.attend("sensors", "fire", "items", "--input", "fire.json")
    assert (done.returncode, done.stdout) == (0, FIRED.format(text=text) + "\n"), done.stderr


def test_a_test_fire_reaches_an_idle_monitor_session_s_next_request_exactly_once(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    items_sensor(home)
    with host.session() as session:
        session.wait_ready()
        fire(home, "rig-fire-one")
        first = host.api.wait_for("rig-fire-one", session=session.id)
        # As Claude Code hands a monitor line to the model: a system reminder naming the monitor, the line
        # inside <event>...</event> (docs/claude-code.md).
        assert f"<event>{FIRED.format(text='rig-fire-one')}</event>" in first.messages_text
        assert first.count("rig-fire-one") == 1
        # The session caught up (a later line reached a later request); the first line is in the conversation
        # once (no second delivery by a hook, no repeat by the monitor).
        last = host.caught_up(session)
        assert last.number > first.number and last.count("rig-fire-one") == 1, host.api.summary()
        assert [r.number for r in host.api.of(session.id) if "rig-fire-one" in r.messages_text
                and "rig-fire-one" not in _before(host.api, r)] == [first.number]


def _before(api, request) -> str:
    """The messages text of the session's request before `request` ('' for its first)."""
    earlier = [r for r in api.of(request.session) if r.number < request.number]
    return earlier[-1].messages_text if earlier else ""


def test_a_peer_message_reaches_an_idle_monitor_session_s_next_request_exactly_once(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    items_sensor(home)
    home.write_user_sensor("messages", "spec: 1\nenabled: true\n")
    with host.session() as session:
        session.wait_ready()
        wait_until(lambda: polled(home, "messages"), what="the messages sensor's baseline")
        # a turn, and its end: the agent stopped once (the plugin's Stop hook, the doorbell, armed), as in any session
        session.wait_idle(host.caught_up(session).received)
        done = home.attend("peers", "send", "--to", str(home.project), "rig-peer-hello")
        assert done.returncode == 0, done.stderr
        first = host.api.wait_for("rig-peer-hello", session=session.id)
        assert first.count("rig-peer-hello") == 1
        last = host.caught_up(session)
        assert last.count("rig-peer-hello") == 1, host.api.summary()
