"""`attend drain`: undelivered message-lane notifications, as a Stop-hook decision or plain lines."""

from __future__ import annotations

import json

from attend.runtime.store import Observation, Store, scope_for


def _store(home) -> Store:
    return Store(home.state / "attend" / "attend.db", scope=scope_for(home.project))


def _disclose(home, lane: str, *descriptions: str) -> None:
    with _store(home) as store:
        store.commit_poll("chat", states={}, observations=[Observation("msg", 1.0, d) for d in descriptions])
        store.disclose("chat", store.pending("chat"), lane=lane, priority="low")


def test_drain_with_nothing_undelivered_prints_nothing_and_exits_0(home) -> None:
    out = home.attend("drain", "--format", "hook")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_drain_hook_prints_a_stop_hook_block_decision_once(home) -> None:
    _disclose(home, "message", "ann: lunch?", "bob: build is red\nsee #ci")
    _disclose(home, "event", "disk 91% full")
    out = home.attend("drain", "--format", "hook")
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert decision["decision"] == "block"
    assert decision["reason"].splitlines() == [
        "attend: 2 messages arrived while you worked:",
        "[attend sensor=chat priority=low] ann: lunch?",
        "[attend sensor=chat priority=low] bob: build is red see #ci",
    ]
    again = home.attend("drain", "--format", "hook")
    assert (again.returncode, again.stdout) == (0, "")
    with _store(home) as store:
        assert [e.description for e in store.undrained("event")] == ["disk 91% full"]


def test_drain_plain_prints_one_line_per_notification(home) -> None:
    _disclose(home, "message", "ann: hi")
    out = home.attend("drain")
    assert out.stdout == "[attend sensor=chat priority=low] ann: hi\n"
    assert home.attend("drain").stdout == ""
