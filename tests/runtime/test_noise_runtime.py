"""Shelving and the poll history through the real pipeline, store and discloser, with explicit clocks,
and `attend sensors shelve|unshelve|history` through the real CLI (DESIGN.md, Noise controls)."""

from __future__ import annotations

import io
import json
import os
import time
from typing import Any

import pytest

from attend.compiler import compile_sensor
from attend.runtime.kinds import PollOutcome
from attend.runtime.noise.query import sensor_noise
from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
from attend.runtime.store import Store, default_db_path, scope_for
from attend.spec import layer_paths, load_set
from attend.spec.schema import HISTORY_KEPT

NOISY = """\
spec: 1
name: noisy
kind: command
command: {argv: ["true"]}
threshold: 2
triggers:
  slow: {path: $.slow, on: changed, for: 1h, magnitude: 3, description: "slow {value}"}
  flappy: {path: $.flap, on: changed, flap: {limit: 1, window: 1h}, magnitude: 3, description: "flap {value}"}
  quiet: {path: $.quiet, on: changed, magnitude: 0.5, description: "quiet {value}"}
  shelf: {path: $.shelf, on: changed, magnitude: 3, description: "shelf {value}"}
"""

OTHER = """\
spec: 1
name: other
kind: command
command: {argv: ["true"]}
triggers:
  t: {path: $.n, on: changed, magnitude: 3, description: "other {value}"}
"""


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def rig(home):
    home.write_user_sensor("noisy", NOISY)
    home.write_user_sensor("other", OTHER)
    sensors = load_set(home.project, os.environ).sensors
    compiled = {name: compile_sensor(sensors[name]) for name in ("noisy", "other")}
    clock = Clock(1000.0)
    store = Store(default_db_path(layer_paths(home.project, os.environ).state_dir), scope=scope_for(home.project),
                  clock=clock)
    out = io.StringIO()
    discloser = Discloser(store, {n: SensorTerms.of(c.lane, c.sensor.ir) for n, c in compiled.items()}.get,
                          stdout=out, stderr=io.StringIO(), clock=clock)

    def poll(name: str, t: float, **result) -> None:
        clock.t = t
        record_poll(store, compiled[name], PollOutcome(result=result), now=t)

    def disclose(t: float) -> None:
        clock.t = t
        discloser.run_once()

    yield home, store, poll, disclose, out
    store.close()


def _outcomes(store, sensor: str) -> set[tuple[str, str, str]]:
    return {(part["trigger"], o["outcome"], o.get("reason", ""))
            for trace in store.history(sensor) for part in trace["triggers"] for o in part["outcomes"]}


def test_the_history_shows_a_held_fire_with_its_reason_for_each_hold_kind(rig) -> None:
    home, store, poll, disclose, out = rig
    base = {"slow": 0, "flap": 0, "quiet": 0, "shelf": 0}
    poll("noisy", 1000, **base)
    poll("other", 1000, n=0)
    store.put_shelf("noisy", "shelf", until=time.time() + 3600, reason="maintenance")
    poll("noisy", 1010, **{**base, "slow": 1, "flap": 1, "shelf": 1})
    disclose(1010)  # flap 1 discloses
    poll("noisy", 1020, **{**base, "slow": 1, "flap": 0, "shelf": 1})  # back: a return, within the limit
    disclose(1020)  # it waits: absolute refractory
    assert ("flappy", "held", "absolute refractory") in _outcomes(store, "noisy")
    poll("noisy", 1030, **{**base, "slow": 1, "flap": 1, "shelf": 1})  # the second return: flapping
    disclose(1100)  # the flapping notice discloses
    poll("other", 1101, n=1)
    disclose(1101)  # other waits for the event lane's governor
    assert ("t", "held", "governor") in _outcomes(store, "other")
    disclose(1200)
    poll("noisy", 2000, **{**base, "slow": 1, "flap": 0, "quiet": 1, "shelf": 1})  # slow: still 1h to go
    disclose(2000)  # quiet alone is below the threshold
    noisy = _outcomes(store, "noisy")
    assert ("slow", "held", "for") in noisy
    assert ("shelf", "held", "shelved") in noisy
    assert ("flappy", "held", "flapping") in noisy
    assert ("flappy", "held", "absolute refractory") not in noisy  # the notice was disclosed later: fired
    assert ("flappy", "fired", "") in noisy
    assert ("quiet", "held", "below threshold") in noisy
    assert ("slow", "fired", "") not in noisy
    assert ("t", "held", "governor") not in _outcomes(store, "other")  # disclosed at 1200: the trace says fired
    assert ("t", "fired", "") in _outcomes(store, "other")
    assert "shelf 1" not in out.getvalue() and "flap 1" in out.getvalue()

    done = home.attend("sensors", "history", "noisy", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["shelves"][0]["reason"] == "maintenance" and data["flapping"][0]["trigger"] == "flappy"
    reasons = {o.get("reason") for t in data["history"] for p in t["triggers"] for o in p["outcomes"]}
    assert {"for", "shelved", "flapping", "below threshold"} <= reasons
    rows = {r["name"]: r for r in json.loads(home.attend("sensors", "--json").stdout)}
    (flapping,) = rows["noisy"]["flapping"]
    assert (flapping["trigger"], flapping["key"], flapping["held"]) == ("flappy", None, 2)
    assert "flapping: flappy since" in home.attend("sensors").stdout
    text = home.attend("sensors", "history", "noisy", "--trigger", "slow").stdout
    assert "slow: key" not in text and "value: held: for until" in text and "flappy" not in text.split("\n", 3)[-1]


def test_a_refractory_hold_shows_until_the_fire_is_disclosed(rig) -> None:
    _, store, poll, disclose, _ = rig
    poll("other", 1000, n=0)
    poll("other", 1001, n=1)
    disclose(1001)
    poll("other", 1010, n=2)
    disclose(1010)
    assert ("t", "held", "absolute refractory") in _outcomes(store, "other")
    disclose(1070)
    assert _outcomes(store, "other") == {("t", "fired", "")}


def test_a_shelved_sensor_keeps_polling_and_keeping_state_but_delivers_nothing(rig) -> None:
    _, store, poll, disclose, out = rig
    store.put_shelf("other", None, until=1500, reason="noisy deploy")
    poll("other", 1000, n=0)
    poll("other", 1100, n=1)
    assert store.pending("other") == []
    assert ("t", "held", "shelved") in _outcomes(store, "other")
    poll("other", 1600, n=1)  # shelf expired: the change seen while shelved is not news
    poll("other", 1700, n=2)
    assert [o.description for o in store.pending("other")] == ["other 2"]


def test_the_history_keeps_the_last_polls_pruned_in_the_poll_s_transaction(rig) -> None:
    _, store, poll, _, _ = rig
    for i in range(HISTORY_KEPT + 7):
        poll("other", 1000 + i, n=i)
    history = store.history("other", limit=1000)
    assert len(history) == HISTORY_KEPT
    assert history[0]["time"] == 1000 + HISTORY_KEPT + 6  # newest first
    count = store._db.execute("SELECT COUNT(*) FROM poll_history WHERE sensor = 'other'").fetchone()[0]
    assert count == HISTORY_KEPT


def test_a_failed_poll_is_in_the_history_with_its_state(rig) -> None:
    home, store, poll, _, _ = rig
    poll("other", 1000, n=0)
    compiled = compile_sensor(load_set(home.project, os.environ).sensors["other"])
    record_poll(store, compiled, PollOutcome.failed("timeout", "took too long"), now=1001)
    latest = store.history("other", limit=1)[0]
    assert latest["state"] == "timeout" and latest["triggers"] == [] and "took too long" in latest["message"]


def test_shelves_expire_on_their_own_and_the_query_leaves_them_out(rig) -> None:
    _, store, _, _, _ = rig
    store.put_shelf("other", "t", until=1100, reason="")
    assert [s.trigger for s in store.shelves("other", now=1099)] == ["t"]
    assert store.shelves("other", now=1100) == []
    assert sensor_noise(store, "other", now=2000)["shelves"] == []


# ------------------------------------------------------------------------------------------------ CLI

def test_shelve_and_unshelve_through_the_cli_show_in_attend_sensors(home) -> None:
    home.write_user_sensor("other", OTHER)
    done = home.attend("sensors", "shelve", "other/t", "--for", "2h", "--reason", "deploying")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("shelved other/t until ") and done.stdout.rstrip().endswith("(2h): deploying")
    rows = json.loads(home.attend("sensors", "--json").stdout)
    (row,) = [r for r in rows if r["name"] == "other"]
    assert row["shelves"][0]["trigger"] == "t" and row["shelves"][0]["reason"] == "deploying"
    assert "trigger t shelved until" in home.attend("sensors").stdout
    assert home.attend("sensors", "unshelve", "other/t").returncode == 0
    again = home.attend("sensors", "unshelve", "other/t")
    assert again.returncode == 1 and "not shelved" in again.stderr
    assert json.loads(home.attend("sensors", "--json").stdout)[0]["shelves"] == []


@pytest.mark.parametrize("argv, message", [
    (["sensors", "shelve", "nope", "--for", "1h"], "no sensor named 'nope'"),
    (["sensors", "shelve", "other/nope", "--for", "1h"], "has no trigger 'nope'"),
    (["sensors", "shelve", "other", "--for", "soon"], "--for must be"),
    (["sensors", "shelve", "other", "--for", "0"], "above zero"),
    (["sensors", "history", "nope"], "no sensor named 'nope'"),
    (["sensors", "history", "other", "--limit", "0"], "--limit must be at least 1"),
])
def test_bad_shelve_and_history_input_is_a_usage_error_without_a_traceback(home, argv, message) -> None:
    home.write_user_sensor("other", OTHER)
    done = home.attend(*argv)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_history_of_a_sensor_that_never_polled_says_so(home) -> None:
    home.write_user_sensor("other", OTHER)
    done = home.attend("sensors", "history", "other")
    assert done.returncode == 0 and "no polls recorded for other yet" in done.stdout


def test_sensors_poll_records_its_verdict_in_the_history(home) -> None:
    home.write_user_sensor("other", OTHER.replace('argv: ["true"]', 'argv: [echo, "{\\"n\\": 1}"]'))
    assert home.attend("sensors", "poll", "other").returncode == 0
    data = json.loads(home.attend("sensors", "history", "other", "--json", "--all").stdout)
    assert len(data["history"]) == 1 and data["history"][0]["triggers"][0]["baseline"] is True


def test_the_runtime_md_shelve_and_history_example_runs_as_shown(home, tmp_path) -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "runtime.md").read_text()
    block = doc.split("## Noise: shelving and history", 1)[1].split("```\n", 2)[1]
    wind = tmp_path / "wind.json"
    wind.write_text('{"wind_speed_10m": 12}')
    home.write_user_sensor("weather", f"""\
spec: 1
name: weather
kind: command
command: {{argv: [cat, {str(wind)!r}]}}
triggers:
  high-wind:
    path: $
    on: enters
    where: {{wind_speed_10m: {{above: 40}}}}
    description: "wind {{wind_speed_10m}} km/h"
""")
    got: list[str] = []
    for line in block.splitlines():
        if line.startswith("$ attend "):
            import shlex

            argv = shlex.split(line[len("$ attend "):])
            if argv[:2] == ["sensors", "history"]:
                assert home.attend("sensors", "poll", "weather").returncode == 0  # the baseline
                wind.write_text('{"wind_speed_10m": 52}')
                assert home.attend("sensors", "poll", "weather").returncode == 0  # enters, shelved
            done = home.attend(*argv)
            assert done.returncode == 0, done.stderr
            got += [line, *done.stdout.splitlines()]
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
    assert [iso.sub("<T>", line) for line in got] == [iso.sub("<T>", line) for line in block.splitlines()]


def test_sensors_poll_shows_a_pending_for_and_a_shelved_fire_as_held(home, tmp_path) -> None:
    n = tmp_path / "n.json"
    n.write_text('{"a": 0, "b": 0}')
    home.write_user_sensor("two", f"spec: 1\nname: two\nkind: command\ncommand: {{argv: [cat, {str(n)!r}]}}\n"
                                  "triggers:\n  a: {path: $.a, on: changed, for: 1h}\n  b: {path: $.b, on: changed}\n")
    assert home.attend("sensors", "poll", "two").returncode == 0
    assert home.attend("sensors", "shelve", "two/b", "--for", "1h").returncode == 0
    n.write_text('{"a": 1, "b": 1}')
    done = home.attend("sensors", "poll", "two", "--json")
    report = json.loads(done.stdout)
    assert report["fires"] == []
    assert {(h["trigger"], h["reason"]) for h in report["held"]} == {("a", "for"), ("b", "shelved")}
    n.write_text('{"a": 1, "b": 2}')
    text = home.attend("sensors", "poll", "two").stdout
    assert "held: trigger a: for until " in text and "held: trigger b: shelved" in text


def test_sensors_fire_on_a_for_trigger_says_the_transition_is_held(home, tmp_path) -> None:
    home.write_user_sensor("one", "spec: 1\nname: one\nkind: command\ncommand: {argv: [x]}\n"
                                  "triggers:\n  a: {path: '$.items[*]', key: id, on: added, for: 10m}\n")
    (tmp_path / "in.json").write_text('{"items": [{"id": 7}]}')
    done = home.attend("sensors", "fire", "one", "--input", str(tmp_path / "in.json"), "--dry-run")
    assert done.returncode == 0 and "no fire" in done.stdout and "held: trigger a key 7: for until" in done.stdout


def test_a_relative_refractory_hold_is_in_the_history(rig) -> None:
    _, store, poll, disclose, _ = rig
    poll("other", 900, n=0)
    for i, t in enumerate((1000, 1061, 1122), start=1):
        poll("other", t, n=i % 2)  # back and forth: returns, not progress (which this refractory never holds)
        disclose(t)
    assert _outcomes(store, "other") == {("t", "fired", "")}
    poll("other", 1183, n=0)
    disclose(1183)
    assert ("t", "held", "relative refractory") in _outcomes(store, "other")


def _reading(name: str, path: Any, **triggers: str) -> str:
    """A command sensor `name` that reads the JSON file `path`, with `triggers` (name: flow mapping)."""
    lines = [f"spec: 1\nname: {name}\nkind: command\ncommand: {{argv: [cat, {str(path)!r}]}}\ntriggers:"]
    return "\n".join([*lines, *(f"  {t}: {body}" for t, body in triggers.items())]) + "\n"


def test_a_test_fire_of_a_flapping_key_is_delivered_and_leaves_the_flapping_as_it_was(home, tmp_path) -> None:
    value = tmp_path / "v.json"
    home.write_user_sensor("flappy", _reading("flappy", value, v='{path: $.v, on: changed, flap: {limit: 1, window: 1h}, '
                                                              'magnitude: 3, description: "v is {value}"}'))
    for v in (0, 1, 0, 1):  # A→B→A→B: flapping since the third poll
        value.write_text(json.dumps({"v": v}))
        assert home.attend("sensors", "poll", "flappy").returncode == 0
    (flapping,) = json.loads(home.attend("sensors", "history", "flappy", "--json").stdout)["flapping"]
    (tmp_path / "in.json").write_text('{"v": 7}')
    done = home.attend("sensors", "fire", "flappy", "--input", str(tmp_path / "in.json"), "--commit")
    assert done.returncode == 0, done.stderr
    assert "held" not in done.stdout + done.stderr
    assert "[attend sensor=flappy priority=medium] [test] v is 7" in done.stdout
    report = json.loads(home.attend("sensors", "fire", "flappy", "--input", str(tmp_path / "in.json"), "--json",
                                    "--dry-run").stdout)
    assert report["held"] == [] and report["lines"] == []  # committed: 7 is no change now, and nothing held
    value.write_text('{"v": 0}')  # the next real poll: the key still flaps, the test fire counted for nothing
    assert "priority" not in home.attend("sensors", "poll", "flappy").stdout
    (after,) = json.loads(home.attend("sensors", "history", "flappy", "--json").stdout)["flapping"]
    assert (after["since"], after["held"]) == (flapping["since"], flapping["held"] + 1)


def test_history_shows_the_polls_that_fired_or_held_and_all_shows_every_poll(home, tmp_path) -> None:
    n = tmp_path / "n.json"
    home.write_user_sensor("two", _reading("two", n, a='{path: $.a, on: changed, magnitude: 3, description: "a is {value}"}',
                                           b='{path: $.b, on: changed, magnitude: 3, description: "b is {value}"}'))
    for a in (0, 0, 0, 1, 1, 1):  # a baseline, two quiet polls, a change of a, two quiet polls
        n.write_text(json.dumps({"a": a, "b": 0}))
        assert home.attend("sensors", "poll", "two").returncode == 0
    data = json.loads(home.attend("sensors", "history", "two", "--json").stdout)
    (poll,) = data["history"]
    assert [p["trigger"] for p in poll["triggers"]] == ["a"]  # b had nothing to say in that poll
    assert (data["all"], data["left_out"]) == (False, 5)
    text = home.attend("sensors", "history", "two").stdout
    assert "a: selected 1; changed" in text and "b: selected" not in text
    assert text.rstrip().endswith("(5 quiet polls left out: nothing fired or was held; --all shows every poll)")
    every = json.loads(home.attend("sensors", "history", "two", "--json", "--all").stdout)
    assert (len(every["history"]), every["all"], every["left_out"]) == (6, True, 0)
    assert all([p["trigger"] for p in t["triggers"]] == ["a", "b"] for t in every["history"])
    assert "b: selected 1" in home.attend("sensors", "history", "two", "--all").stdout
    quiet = json.loads(home.attend("sensors", "history", "two", "--trigger", "b", "--json").stdout)
    assert (quiet["history"], quiet["left_out"]) == ([], 6)
    assert "no poll of two fired or held anything (of its last 6); --all shows every poll" in home.attend(
        "sensors", "history", "two", "--trigger", "b").stdout


def test_history_shows_a_failed_poll_as_something_that_happened(rig) -> None:
    home, store, poll, _, _ = rig
    poll("other", 1000, n=0)
    poll("other", 1001, n=0)
    compiled = compile_sensor(load_set(home.project, os.environ).sensors["other"])
    record_poll(store, compiled, PollOutcome.failed("timeout", "took too long"), now=1002)
    data = sensor_noise(store, "other")
    assert [t["state"] for t in data["history"]] == ["timeout"] and data["left_out"] == 2
