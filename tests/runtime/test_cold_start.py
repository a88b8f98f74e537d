"""A session's cold start and the once-per-session rule for peer messages (DESIGN.md, "Peers").

A real store and a real peers folder in a temporary XDG home; the session's Monitor stream is its
`SessionPrinter`, its Stop hook the real `attend drain`. The sensor's fires are journaled as the daemon
journals them (a pending observation with the trigger's author, disclosed on the message lane).
"""

from __future__ import annotations

import io
import json
import time

import pytest

from attend.peers.identity import Session
from attend.peers.mailbox import Mailbox, Message, peers_dir
from attend.runtime.sessions.cold_start import COLD_START_WAIT, cold_start, message_sensors
from attend.runtime.sessions.printer import SessionPrinter
from attend.runtime.store import Observation, open_project_store
from attend.spec import layer_paths

NOW = 1_800_000_000.0


class World:
    """The home's project, its peers folder and store, and a clock the test moves."""

    def __init__(self, home) -> None:
        self.home = home
        self.env = home.env()
        self.mailbox = Mailbox(peers_dir(self.env))
        self.store = open_project_store(layer_paths(home.project, self.env), clock=self.clock)
        self.now = NOW
        self.n = 0

    def clock(self) -> float:
        return self.now

    def post(self, sender: str, text: str, *, age: float, addressed: bool = True, kind: str = "session") -> str:
        self.n += 1
        mid = f"{int((self.now - age) * 1000):013d}-{self.n:06x}"
        to = str(self.home.project.resolve()) if addressed else None
        self.mailbox.post(Message(mid, sender, kind, "/elsewhere", to, None if addressed else "open", None, text,
                                  self.now - age))
        return mid

    def printer(self, session: str = "b") -> tuple[SessionPrinter, io.StringIO]:
        out = io.StringIO()
        printer = SessionPrinter(self.store, Session(session, True, "flag"), stdout=out, stderr=io.StringIO(),
                                 clock=self.clock, project_dir=self.home.project, env=self.env)
        return printer, out

    def baseline(self) -> None:
        """The messages sensor's first poll has happened (its trigger state exists)."""
        self.store.put_trigger_states("messages", {"baseline": {}})

    def fire(self, mid: str, sender: str, text: str) -> None:
        """The messages sensor's fire for message `mid`, journaled as the daemon does it."""
        obs = Observation("addressed", 7.0, f"message {mid} from {sender} to this project: {text}", key=mid,
                          meta={"author": sender}, time=self.now)
        self.store.commit_poll("messages", states=None, observations=[obs], status={"state": "ok"})
        self.store.disclose("messages", self.store.pending("messages"), lane="message", priority="high",
                            time_=self.now)

    def drain(self, session: str):
        done = self.home.attend("drain", "--format", "hook", input=json.dumps({"session_id": session}))
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["reason"].splitlines()[1:] if done.stdout.strip() else []


@pytest.fixture
def world(home):
    w = World(home)
    yield w
    w.store.close()


def lines_of(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def test_a_new_session_is_handed_its_newest_50_addressed_and_recent_messages_and_one_line_for_the_rest(world) -> None:
    addressed = [world.post("a", f"note {n}", age=3000 - n) for n in range(60)]
    old_open = [world.post("c", f"old {n}", age=500 + n, addressed=False) for n in range(3)]
    recent_open = [world.post("c", f"fresh {n}", age=30 - n, addressed=False) for n in range(2)]
    world.post("b", "my own note", age=5)
    world.baseline()
    handed = cold_start(message_sensors(world.home.project, world.env), world.home.project, "b", seen=set(),
                        now=world.now, env=world.env)
    # The 52 handed over are more than the sensor's digest.over (8): one digest line stands for them.
    assert handed.lines[0].meta["keys"] == addressed[10:] + recent_open
    printer, out = world.printer()
    written = printer.print_new()
    lines = lines_of(out)
    assert written == 2
    assert lines == ["[attend sensor=messages priority=high] 52 new messages from a, c; attend peers inbox",
                     "[attend sensor=messages priority=medium] 13 earlier messages not shown; attend peers inbox"]
    assert not any(mid in out.getvalue() for mid in old_open + addressed[:10])


def test_a_new_session_gets_ten_waiting_messages_as_one_digest_line(world) -> None:
    ten = [world.post("a", f"note {n}", age=100 - n) for n in range(10)]
    world.baseline()
    printer, out = world.printer()
    assert printer.print_new() == 1
    assert lines_of(out) == ["[attend sensor=messages priority=high] 10 new messages from a; attend peers inbox"]
    assert {f"messages/{m}" for m in ten} <= world.store.seen_items("b")  # the digest showed them: never again
    world.fire(ten[-1], "a", "note 9")
    assert printer.print_new() == 0


def test_the_cold_start_waits_for_the_sensors_baseline_at_most_a_few_seconds(world) -> None:
    world.post("a", "hello", age=10)
    printer, out = world.printer()
    assert printer.print_new() == 0 and printer.cold_pending
    world.now += COLD_START_WAIT + 1
    assert printer.print_new() == 1 and not printer.cold_pending
    assert "hello" in out.getvalue()


def test_a_message_handed_over_is_not_shown_again_when_the_sensor_fires_it_later(world) -> None:
    world.baseline()
    mid = world.post("a", "rebase please", age=1)
    printer, out = world.printer()
    assert printer.print_new() == 1
    world.fire(mid, "a", "rebase please")  # the sensor's later poll sees the same message as new
    later = world.post("a", "and run the tests", age=0)
    world.fire(later, "a", "and run the tests")
    assert printer.print_new() == 1
    assert [line.split()[4] for line in lines_of(out)] == [mid, later]
    assert world.drain("b") == []  # the Stop hook hands over nothing the Monitor showed


def test_a_restarted_session_gets_no_second_cold_start_and_loses_nothing(world) -> None:
    world.baseline()
    first = world.post("a", "before the restart", age=1)
    printer, out = world.printer()
    assert printer.print_new() == 1
    world.now += 60
    while_down = world.post("a", "while b was down", age=0)
    world.fire(while_down, "a", "while b was down")
    again, out2 = world.printer()  # the same session id, restarted
    assert not again.cold_pending
    assert again.print_new() == 1
    assert lines_of(out2) == [f"[attend sensor=messages priority=high] message {while_down} from a to this project: "
                              "while b was down"]
    assert first not in out2.getvalue()


def test_a_session_is_never_shown_its_own_message_on_its_monitor_or_its_drain(world) -> None:
    world.baseline()
    printer, out = world.printer()
    printer.print_new()
    own = world.post("b", "note to my project", age=0)
    world.fire(own, "b", "note to my project")
    theirs = world.post("a", "hi b", age=0)
    world.fire(theirs, "a", "hi b")
    assert printer.print_new() == 1
    assert own not in out.getvalue() and theirs in out.getvalue()
    other, other_out = world.printer("c")  # another session of the project sees b's note
    world.fire(world.post("b", "second note", age=0), "b", "second note")
    other.print_new()
    assert "second note" in other_out.getvalue()
    assert not any("note" in line for line in world.drain("b"))


def test_a_session_whose_first_delivery_is_its_stop_hook_gets_the_cold_start_there_once(world) -> None:
    world.baseline()
    mid = world.post("a", "for whoever stops first", age=1)
    handed = world.drain("d")
    assert handed == [f"[attend sensor=messages priority=high] message {mid} [from_kind=session from_id=a "
                      f"to={world.home.project.resolve()}]: for whoever stops first "
                      f'(attend peers reply {mid} "..." answers it)']
    world.fire(mid, "a", "for whoever stops first")
    assert world.drain("d") == []
    printer, out = world.printer("d")  # its Monitor starts later: no second cold start, no repeat
    assert not printer.cold_pending
    printer.print_new()
    assert mid not in out.getvalue()


def test_more_than_eight_messages_from_the_session_itself_make_no_digest_line_for_it(world) -> None:
    world.baseline()
    printer, out = world.printer()
    printer.print_new()
    digest = Observation("digest", 7.0, "9 new messages from b; attend peers inbox",
                         meta={"authors": ["b"], "keys": [f"k{n}" for n in range(9)]}, time=world.now)
    world.store.commit_poll("messages", states=None, observations=[digest], status={"state": "ok"})
    world.store.disclose("messages", world.store.pending("messages"), lane="message", priority="high")
    assert printer.print_new() == 0
    other, other_out = world.printer("c")
    world.store.commit_poll("messages", states=None, observations=[digest], status={"state": "ok"})
    world.store.disclose("messages", world.store.pending("messages"), lane="message", priority="high")
    assert other.print_new() == 1 and "9 new messages from b" in other_out.getvalue()


@pytest.mark.parametrize("count", [3, 8, 9, 49, 50, 51])
def test_a_cold_start_shows_every_addressed_message_up_to_50_and_counts_only_those_it_passes_over(home, count) -> None:
    world = World(home)
    try:
        addressed = [world.post("a", f"note {n}", age=3000 - n) for n in range(count)]
        world.baseline()
        handed = cold_start(message_sensors(home.project, world.env), home.project, "b", seen=set(),
                            now=world.now, env=world.env)
        shown = addressed[-50:]
        lines = handed.lines
        if len(shown) > 8:  # the digest rule: one line stands for the messages handed over
            assert lines[0].meta["keys"] == shown and lines[0].description.startswith(f"{len(shown)} new messages")
        else:
            assert [line.key for line in lines[:len(shown)]] == shown
        rest = lines[1:] if len(shown) > 8 else lines[len(shown):]
        if count > 50:
            assert [(r.priority, r.description) for r in rest] == [
                ("high", f"{count - 50} earlier message not shown; attend peers inbox")]
        else:
            assert rest == []  # no summary: nothing was passed over
        # ... and that a was said how to answer: with the one line shown (a digest line says nothing of it).
        hinted = {":reply-hint:a"} if len(shown) <= 8 else set()
        assert set(handed.seen) == {f"messages/{m}" for m in addressed} | hinted
    finally:
        world.store.close()


def test_a_low_priority_message_printed_only_on_stderr_is_handed_over_once_by_the_stop_hook(world) -> None:
    world.baseline()
    printer, out = world.printer()
    printer.print_new()
    mid = world.post("c", "lunch?", age=0, addressed=False)
    obs = Observation("open", 2.0, f"message {mid} from c on the open channel: lunch?", key=mid,
                      meta={"author": "c"}, time=world.now)
    world.store.commit_poll("messages", states=None, observations=[obs], status={"state": "ok"})
    world.store.disclose("messages", world.store.pending("messages"), lane="message", priority="low", time_=world.now)
    printer.print_new()
    assert out.getvalue() == ""  # stderr only: the agent has not seen it
    # ... and so was the line telling it how to answer c: said with the line the hook hands over.
    assert world.drain("b") == [f"[attend sensor=messages priority=low] message {mid} from c on the open channel: lunch? "
                                f'(attend peers reply {mid} "..." answers it)']
    assert world.drain("b") == []


def test_the_stop_hook_counts_the_messages_it_shows_not_the_line_summing_up_those_passed_over(world) -> None:
    world.now = time.time()  # `attend drain` ages the messages by the wall clock: a day old is passed over
    mid = world.post("a", "the one addressed note", age=100)
    for n in range(3):
        world.post("c", f"old {n}", age=86_400 + n, addressed=False)
    world.baseline()
    done = world.home.attend("drain", "--format", "hook", input=json.dumps({"session_id": "d"}))
    header, *lines = json.loads(done.stdout)["reason"].splitlines()
    assert header == "attend: 1 message arrived while you worked:"
    assert lines == [f"[attend sensor=messages priority=high] message {mid} [from_kind=session from_id=a "
                     f"to={world.home.project.resolve()}]: the one addressed note "
                     f'(attend peers reply {mid} "..." answers it)',
                     "[attend sensor=messages priority=medium] 3 earlier messages not shown; attend peers inbox"]
