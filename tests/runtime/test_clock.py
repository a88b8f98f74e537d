"""One clock (runtime/clock.py): each runtime site that reads the wall clock reads the one it was given, the
store's (`Store.now()`) or its entry point's `clock=`. Each test sets a clock decades before the real time,
at which the site's answer differs from the one the system's clock would give."""

from __future__ import annotations

import os
from pathlib import Path

from attend.compiler import compile_sensor
from attend.peers.identity import process_start
from attend.runtime.noise.query import sensor_noise
from attend.runtime.noise.shelving import shelve_target
from attend.runtime.reports import poll_report
from attend.runtime.sessions.handover import hook_handover
from attend.runtime.sessions.register import HOOK_BEAT, beat_for_hooks_sessions, register_hook
from attend.runtime.store import Observation, Store, default_db_path, open_project_store, scope_for
from attend.spec import layer_paths, load_set

#: A time long past: a shelf, a line or a beat dated by it is long over by the system's clock.
PAST = 1000.0

OTHER = """\
spec: 1
name: other
kind: command
command: {argv: ["echo", '{"n": 1}']}
triggers:
  t: {path: $.n, on: changed, magnitude: 3, description: "other {value}"}
"""


class Clock:
    """A wall clock a test sets."""

    def __init__(self, t: float = PAST) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_the_store_tells_the_time_by_the_clock_it_was_opened_with(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "attend.db", clock=clock) as store:
        assert store.now() == PAST
        clock.t = PAST + 5
        assert store.now() == PAST + 5


def test_the_noise_query_given_no_time_judges_shelves_by_the_stores_clock(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "attend.db", clock=clock) as store:
        store.put_shelf("other", "t", until=PAST + 100, reason="")
        assert [s["trigger"] for s in sensor_noise(store, "other")["shelves"]] == ["t"]
        clock.t = PAST + 100
        assert sensor_noise(store, "other")["shelves"] == []


def test_a_shelf_lasts_its_duration_from_the_time_of_the_clock_given(home) -> None:
    home.write_user_sensor("other", OTHER)
    shelf = shelve_target(home.project, "other/t", "1h", clock=Clock())
    assert shelf.until == PAST + 3600


def _session_store(home, clock: Clock) -> Store:
    return Store(default_db_path(home.state / "attend"), scope=scope_for(home.project), clock=clock)


def test_a_hook_handover_given_no_time_measures_staleness_by_the_stores_clock(home) -> None:
    clock = Clock()
    with _session_store(home, clock) as store:
        store.record_handover("s1", upto=store.journal_end(), handed=[])
        store.commit_poll("items", states={}, observations=[Observation("new", 5.0, "a line just written")])
        store.disclose("items", store.pending("items"), lane="event", priority="high")
        clock.t = PAST + 1  # a second later by the store's clock; decades by the system's
        handover = hook_handover(store, "s1", project_dir=str(home.project), env=home.env())
    assert [e.description for e in handover.entries] == ["a line just written"]


def test_a_hook_registers_its_session_again_once_a_beat_has_passed_by_the_stores_clock(home) -> None:
    clock = Clock()
    with _session_store(home, clock) as store:
        register_hook(store, "s1", project_dir=str(home.project), hook={}, env=home.env(), force=True)
        clock.t = PAST + HOOK_BEAT - 1
        register_hook(store, "s1", project_dir=str(home.project), hook={}, env=home.env())
        row = store.session("s1")
        assert row is not None and row.claude_seen == PAST  # within the beat: only read
        clock.t = PAST + HOOK_BEAT
        register_hook(store, "s1", project_dir=str(home.project), hook={}, env=home.env())
        row = store.session("s1")
        assert row is not None and row.claude_seen == PAST + HOOK_BEAT


class Beats:
    """A mailbox that keeps the beats it is asked for."""

    def __init__(self) -> None:
        self.beats: list[dict[str, object]] = []

    def beat(self, session: str, project_dir: object, **fields: object) -> None:
        self.beats.append({"session": session, **fields})


def test_the_pollers_beat_for_a_session_with_no_start_dates_it_by_the_stores_clock(home) -> None:
    clock = Clock()
    with _session_store(home, clock) as store:
        start = process_start(os.getpid())
        assert start is not None
        store.register_session("s1", host=(os.getpid(), start))  # this process stands in for its Claude Code
        with store.exclusive() as db:
            db.execute("UPDATE sessions SET started = NULL WHERE session = 's1'")
        clock.t = PAST + 7
        beats = Beats()
        beat_for_hooks_sessions(store, beats, home.project)
    assert [(b["session"], b["started"]) for b in beats.beats] == [("s1", PAST + 7)]


def test_a_polls_report_is_recorded_at_the_time_of_the_clock_given(home) -> None:
    home.write_user_sensor("other", OTHER)
    sensors = load_set(home.project, os.environ)
    compiled = compile_sensor(sensors.sensors["other"])
    report = poll_report(compiled, sensors.paths, home.project, home.env(), dry_run=False, clock=Clock())
    assert report["state"] == "ok"
    with open_project_store(layer_paths(home.project, os.environ)) as store:
        assert store.status("other").last_poll == PAST
