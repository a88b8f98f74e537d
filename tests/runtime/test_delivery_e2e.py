"""Delivery precision end to end (issue 22; DESIGN.md, "Delivery: the right line, to the right session, in
time, once"): real `attend run --session NAME` processes in one project, one test per thing a user hit.

A negative ("B is never told") is proven by a caught-up signal, never by a sleep (`daemon_rig.caught_up`:
one more poll, then the session's `printed_upto` in the store reached the journal's end).
"""

from __future__ import annotations

import re
import time

import pytest
from daemon_rig import caught_up, journal_rows, query, scalar, wait_until
from tests.sensors.sensor_material import Transcripts

pytestmark = pytest.mark.slow

#: The items sensor's trigger, at high magnitude (6: a `high` line).
HIGH_ITEM = {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 6, "description": "urgent item {id}"}


def running(d) -> None:
    wait_until(lambda: any("sensor(s) running" in line or "attached to" in line for line in d.stderr),
               what="the session to print")


def polling(d) -> None:
    wait_until(lambda: any("sensor(s) running" in line for line in d.stderr), what="the session to poll")


def polled(home, sensor: str) -> None:
    """Wait for `sensor`'s first poll (its baseline: what it reports then never fires)."""
    wait_until(lambda: query(home, "SELECT 1 FROM poll_history WHERE sensor = ?", sensor), what=f"{sensor}'s baseline")


def config(home, text: str) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(text)


# -- presence starves real lines ----------------------------------------------------------------------------

#: Every presence line fires (no refractory); the event lane's window holds 3 disclosures per 120 s, its
#: cooldown is 2 s (the shipped window, a short cooldown so the test is quick).
PRESENCE_CONFIG = """\
engagement:
  absolute_refractory: 0
  relative_after: 1000
governor:
  event: {cooldown: 2, limit: 3, window: 120}
"""


def test_sessions_joining_and_leaving_never_hold_a_high_line_past_the_cooldown(quiet_home, daemon, items_sensor):
    config(quiet_home, PRESENCE_CONFIG)
    (quiet_home.user_sensors / "peers.yaml").unlink()  # the shipped presence sensor runs
    items = items_sensor(trigger=HIGH_ITEM)
    a = daemon("--session", "a")
    polled(quiet_home, "items")
    for name in ("b", "c"):
        other = daemon("--session", name)
        wait_until(lambda name=name: any(r["key"] == name for r in journal_rows(quiet_home, sensor="peers")),
                   what=f"{name}'s start journaled")
    assert other.stop() == 0  # c exits: a low line
    wait_until(lambda: len(journal_rows(quiet_home, sensor="peers")) == 3, what="c's exit journaled")
    fired = time.monotonic()
    items.set([{"id": 1}])
    a.wait_for(lambda lines: "[attend sensor=items priority=high] urgent item 1" in lines, timeout=30)
    # Within the cooldown (2 s) + the poll interval (1 s) + a loaded machine's slack; the presence lines
    # filling the rate window would have held it for the window's 120 s.
    assert time.monotonic() - fired < 15


# -- the wrong session is told ------------------------------------------------------------------------------

def fast_context(home) -> Transcripts:
    """The shipped context sensor on (polled every 0.3 s), and the project's transcripts folder."""
    home.write_user_sensor("context", "spec: 1\ninterval: 0.3s\nmin_interval: 0.1s\n")
    return Transcripts(home.root / ".claude" / "projects", home.project.resolve())


def context_lines(lines: list[str]) -> list[str]:
    """The context sensor's tier lines (`context N% used`; a fast climb's line is another finding)."""
    return [line for line in lines if line.startswith("[attend sensor=context ") and "% used" in line]


def baseline(home) -> None:
    """Wait for the context sensor's first poll (its trigger state: per session, or the project's)."""
    def polls() -> int:
        return scalar(home, "SELECT COUNT(*) FROM poll_history WHERE sensor LIKE 'context%'")

    before = polls()
    wait_until(lambda: polls() >= before + 2, what="two more polls of the context sensor (a round for each session)")


def test_each_session_is_told_its_own_context_use_and_never_the_others(quiet_home, daemon):
    # The event lane's cooldown an hour: a's line wakes a's agent only, so it spends a's budget, never b's
    # (b's line arrives at once; it waited a's full cooldown before each session had its own budget). The
    # default 60 s absolute refractory: a's fire holds a's next line only (b's waited for it before each
    # session had its own refractory).
    config(quiet_home, "governor:\n  event: {cooldown: 1h}\n")
    transcripts = fast_context(quiet_home)
    for name in ("a", "b"):
        transcripts.turn(name, 20_000)  # 10 %: each session's baseline
    a = daemon("--session", "a")
    polling(a)
    b = daemon("--session", "b")
    running(b)
    baseline(quiet_home)
    transcripts.turn("a", 170_000, minute=1)  # a: 85 %; b stays at 10 %, its transcript older
    a.wait_for(lambda lines: any("context 85.0% used" in line for line in context_lines(lines)))
    caught_up(quiet_home, "b")
    assert not context_lines(b.stdout + b.stderr)
    transcripts.turn("b", 110_000, minute=2)  # b: 55 % and a fast climb, a medium line for b alone
    wait_until(lambda: any("context 55.0% used" in line for line in context_lines(b.stdout + b.stderr)),
               what="b's own 55 %")
    caught_up(quiet_home, "a")
    assert not [line for line in context_lines(a.stdout + a.stderr) if "55.0%" in line]
    assert not [line for line in context_lines(b.stdout + b.stderr) if "85.0%" in line]


# -- triplicates --------------------------------------------------------------------------------------------

def test_a_jump_across_three_context_tiers_is_one_line(quiet_home, daemon):
    config(quiet_home, "engagement: {absolute_refractory: 0}\n")
    transcripts = fast_context(quiet_home)
    transcripts.turn("a", 20_000)
    a = daemon("--session", "a")
    polling(a)
    baseline(quiet_home)
    transcripts.turn("a", 170_000, minute=1)  # 10 % to 85 %: past 50, 65 and 83
    a.wait_for(lambda lines: context_lines(lines))
    caught_up(quiet_home, "a")
    # One line (its priority is the poll's: a fast climb's line shares the disclosure).
    assert [line.split("] ", 1)[1] for line in context_lines(a.stdout)] == ["context 85.0% used (170000 of 200000 tokens)"]


# -- backlog, not news --------------------------------------------------------------------------------------

def test_a_restarted_session_is_not_shown_test_fires_made_while_it_was_down(quiet_home, daemon, items_sensor):
    items_sensor()
    a = daemon("--session", "a")
    polling(a)
    assert a.stop() == 0
    fired = quiet_home.attend("sensors", "fire", "items", "--input", "-", input='{"items": [{"id": 42}]}')
    assert fired.returncode == 0, fired.stderr
    assert journal_rows(quiet_home, test=1)
    again = daemon("--session", "a")
    polling(again)
    caught_up(quiet_home, "a")
    assert not [line for line in again.stdout + again.stderr if "[test]" in line]


def test_a_restarted_session_gets_stale_lines_as_one_line_and_fresh_ones_as_they_are(quiet_home, daemon, items_sensor):
    config(quiet_home, "engagement: {absolute_refractory: 0}\ngovernor:\n  event: {cooldown: 0, limit: 1000, window: 60}\n"
                       "delivery: {stale_after: 1s}\n")
    items = items_sensor()
    a = daemon("--session", "a")
    polled(quiet_home, "items")
    b = daemon("--session", "b")
    running(b)
    assert a.stop() == 0  # b polls now
    wait_until(lambda: any("polls" in line and "now" in line for line in b.stderr), what="b to take over")
    for n in (1, 2, 3):  # three lines while a is away
        items.set([{"id": i} for i in range(1, n + 1)])
        b.wait_for(lambda lines, n=n: f"[attend sensor=items priority=medium] new item {n}" in lines)
    wait_until(lambda: time.time() - journal_rows(quiet_home, sensor="items")[-1]["time"] > 1.5,
               what="the lines to be older than stale_after")
    again = daemon("--session", "a")
    again.wait_for(lambda lines: "[attend sensor=attend priority=medium] 3 notifications while this session was away;"
                                 " attend sensors history" in lines)
    items.set([{"id": i} for i in range(1, 5)])  # news after the restart: shown as it is
    again.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 4" in lines)
    assert not [line for line in again.stdout if re.search(r"new item [123]$", line)]


def test_a_new_session_gets_ten_waiting_messages_as_one_digest_line(quiet_home, daemon, tmp_path):
    (quiet_home.user_sensors / "messages.yaml").unlink()  # the shipped messages sensor runs
    here = quiet_home.project.resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    a = daemon("--session", "a")  # a live session of the project (`peers send --to` needs one)
    polling(a)
    from tests.conftest import run_in_process

    for n in range(10):  # sent from another folder, in-process (the command's boundary is not what is tested)
        sent = run_in_process(["peers", "send", "--to", str(here), f"note {n}"], env=quiet_home.env(), cwd=elsewhere)
        assert sent.returncode == 0, sent.stderr
    c = daemon("--session", "c")
    c.wait_for(lambda lines: any(re.fullmatch(r"\[attend sensor=messages priority=high\] 10 new messages from .*; "
                                              r"attend peers inbox", line) for line in lines))
    wait_until(lambda: query(quiet_home, "SELECT 1 FROM session_seen WHERE session = 'c' AND item = ':cold-start'"),
               what="c's cold start recorded")
    assert not [line for line in c.stdout if re.search(r"\]: note \d", line)]


# -- why late -----------------------------------------------------------------------------------------------

def test_history_shows_how_long_a_delivered_line_was_held_and_why(quiet_home, daemon, items_sensor):
    config(quiet_home, "engagement: {absolute_refractory: 0}\ngovernor:\n  event: {cooldown: 3, limit: 1000, window: 60}\n")
    items = items_sensor()
    a = daemon("--session", "a")
    polled(quiet_home, "items")
    items.set([{"id": 1}])
    a.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 1" in lines)
    items.set([{"id": 1}, {"id": 2}])  # within the 3 s cooldown: held, then delivered
    a.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 2" in lines)
    wait_until(lambda: "fired after" in quiet_home.attend("sensors", "history", "items").stdout,
               what="the history to show the hold")
    history = quiet_home.attend("sensors", "history", "items").stdout
    assert re.search(r"fired after \d+s held: governor", history), history
