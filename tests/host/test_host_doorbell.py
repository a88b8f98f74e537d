"""The doorbell with the real Claude Code CLI: an idle interactive session whose lines the hooks carry (no Monitor
prints for it) is woken by the plugin's asyncRewake Stop hook, read from the requests it sends (host_rig.py)."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.host.test_hooks import watched_sensor
from tests.host.test_monitor import fire, items_sensor

from fake_api import bash, text, texts_of
from host_rig import polled, polls
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


def test_under_claude_p_a_line_that_comes_while_the_model_answers_gets_one_more_turn_with_it_once(
        claude_host, quiet_home):
    # claude -p waits for the doorbell (an asyncRewake hook runs in the foreground there): it looks once at
    # the stop, rings for the high line that came during the answer, and the run goes on for one turn.
    host, home = claude_host, quiet_home
    watched_sensor(home, magnitude=5)

    def a_line_during_the_answer() -> None:
        wait_until(lambda: polled(home, "items"), what="the headless poller's baseline poll of items")
        (home.project / "items.json").write_text(json.dumps([{"id": 1, "text": "rig-stop-line"}]))
        wait_until(lambda: "rig-stop-line" in json.dumps(polls(home, "items")), what="the line journaled")

    host.api.reply(replace(text("all done"), before=a_line_during_the_answer), text("noted"))
    done = host.headless("hello")
    assert done.returncode == 0, done.stderr
    turns = [r for r in host.api.requests if r.is_turn]
    assert len(turns) == 2, host.api.summary()  # the answer, then one more turn for the line; no third
    assert "rig-stop-line" not in turns[0].messages_text
    assert turns[1].count("rig-stop-line") == 1  # the doorbell's text goes in once
    assert "Stop hook feedback:" in turns[1].messages_text
    assert "[attend sensor=items priority=high] rig-stop-line" in turns[1].messages_text
    assert done.stdout == "noted\n"


#: A child of a session writing to its inbox socket (CLAUDE_CODE_MESSAGING_SOCKET): the frame 2.1.328 reads.
SEND = """\
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["CLAUDE_CODE_MESSAGING_SOCKET"])
frames = [{"type": "auth", "token": os.environ.get("CLAUDE_CODE_MESSAGING_TOKEN", "")},
          {"type": "user", "message": {"role": "user", "content": sys.argv[1]}}]
s.sendall(b"".join(json.dumps(f).encode() + b"\\n" for f in frames))
s.close()
"""


def test_claude_codes_messaging_socket_works_but_frames_the_text_as_a_teammates_request(claude_host, quiet_home):
    # Why attend does not use it as a conduit (docs/claude-code.md, section 3): its lines are observations,
    # and this framing tells the model to act on them.
    host, home = claude_host, quiet_home
    (home.project / "send.py").write_text(SEND)
    with host.session() as session:
        session.wait_ready()
        host.api.reply(bash("python3 send.py rig-socket-fact"), text("sent"), session=session.id)
        session.type("send it")
        woken = host.api.wait_for("rig-socket-fact\n", session=session.id)
        # (sent during the tool call: "... sent a message while you were working:"; to an idle session the
        # same text without "while you were working", and the session starts a turn for it)
        said = woken.messages_text[woken.messages_text.index("Another Claude session sent a message"):]
        assert said.split("\n")[1] == "rig-socket-fact"
        assert "Treat it as a teammate's request and act on it" in said
