"""The SQLite store: one transaction per poll and per disclosure, durable across reopen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attend.runtime.store import SCHEMA_VERSION, Observation, Store
from attend.runtime.store.poll_history import QUEUED


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "attend.db") as s:
        yield s


def test_the_database_is_in_wal_mode_and_versioned(store: Store, tmp_path: Path) -> None:
    assert store.schema_version == SCHEMA_VERSION
    with sqlite3.connect(tmp_path / "attend.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_a_poll_commits_trigger_states_and_observations_together(store: Store) -> None:
    ids = store.commit_poll(
        "git",
        states={"h1": {"value": [1, 2]}},
        observations=[Observation("branch", 3.0, "branch changed", key="main")],
        status={"state": "ok", "last_poll": 10.0},
    )
    assert len(ids) == 1
    assert store.trigger_states("git") == {"h1": {"value": [1, 2]}}
    [obs] = store.pending("git")
    assert (obs.trigger, obs.magnitude, obs.description, obs.key) == ("branch", 3.0, "branch changed", "main")
    assert store.status("git").last_poll == 10.0


def test_a_poll_that_fails_midway_commits_nothing(store: Store) -> None:
    store.commit_poll("git", states={"h1": {"v": 1}})
    with pytest.raises(ValueError):
        store.commit_poll(
            "git",
            states={"h1": {"v": 2}},
            observations=[Observation("t", 1.0, "x")],
            status={"no_such_field": 1},
        )
    assert store.trigger_states("git") == {"h1": {"v": 1}}
    assert store.pending("git") == []


def test_replacing_states_drops_the_states_of_edited_triggers(store: Store) -> None:
    store.commit_poll("s", states={"old": 1, "keep": 2})
    store.commit_poll("s", states={"keep": 3, "new": 4})
    assert store.trigger_states("s") == {"keep": 3, "new": 4}
    store.put_trigger_states("s", {"other": 5})
    assert store.trigger_states("s") == {"keep": 3, "new": 4, "other": 5}


def test_a_failed_poll_with_no_states_leaves_trigger_state_untouched(store: Store) -> None:
    store.commit_poll("s", states={"h": {"v": 1}})
    store.commit_poll("s", states=None, status={"state": "timeout", "message": "took 10 s"})
    assert store.trigger_states("s") == {"h": {"v": 1}}
    status = store.status("s")
    assert (status.state, status.message) == ("timeout", "took 10 s")


def test_status_since_moves_only_when_the_state_changes(tmp_path: Path) -> None:
    now = [100.0]
    with Store(tmp_path / "db", clock=lambda: now[0]) as store:
        store.update_status("s", state="ok")
        now[0] = 200.0
        store.update_status("s", state="ok", last_poll=200.0)
        assert store.status("s").since == 100.0
        now[0] = 300.0
        store.update_status("s", state="exit", message="exit code 1")
        assert store.status("s").since == 300.0


def test_a_disclosure_moves_pending_observations_to_the_journal(store: Store) -> None:
    store.commit_poll("s", states={}, observations=[Observation("t", 2.0, "a"), Observation("t", 1.5, "b")])
    pending = store.pending("s")
    entries = store.disclose("s", pending, lane="event", priority="medium", fires=[5.0])
    assert store.pending("s") == []
    assert [e.description for e in entries] == ["a", "b"]
    assert len({e.disclosure for e in entries}) == 1
    assert [e.description for e in store.journal()] == ["a", "b"]
    assert all(not e.printed and not e.test for e in store.journal())
    assert store.status("s").fires == [5.0]


def test_printed_and_drained_marks_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "attend.db"
    with Store(path) as store:
        store.commit_poll("s", states={}, observations=[Observation("t", 3.0, "hello")])
        [entry] = store.disclose("s", store.pending("s"), lane="message", priority="low")
        assert [e.id for e in store.unprinted()] == [entry.id]
        store.mark_printed([entry.id])
    with Store(path) as store:
        assert store.unprinted() == []
        assert [e.description for e in store.undrained("message")] == ["hello"]
        store.mark_drained([entry.id])
        assert store.undrained("message") == []


def test_a_message_printed_on_the_monitor_stream_is_not_drained_again(store: Store) -> None:
    store.commit_poll("s", states={}, observations=[Observation("t", 3.0, "on stdout")])
    [shown] = store.disclose("s", store.pending("s"), lane="message", priority="medium")
    store.commit_poll("s", states={}, observations=[Observation("t", 1.0, "on stderr")])
    [quiet] = store.disclose("s", store.pending("s"), lane="message", priority="low")
    store.commit_poll("s", states={}, observations=[Observation("t", 3.0, "not printed yet")])
    [pending] = store.disclose("s", store.pending("s"), lane="message", priority="high")
    store.mark_printed([shown.id, quiet.id])
    assert [e.id for e in store.undrained("message")] == [quiet.id, pending.id]


def test_test_fires_go_straight_to_the_journal_marked_test(store: Store) -> None:
    store.journal_test("s", [Observation("t", 3.0, "synthetic")], lane="event", priority="medium")
    [entry] = store.unprinted(test=True)
    assert entry.test and entry.description == "synthetic"
    assert store.woken("event", since=0) == []


def test_woken_counts_each_disclosure_once(store: Store) -> None:
    store.commit_poll("s", states={}, observations=[Observation("t", 2, "a"), Observation("t", 2, "b")])
    store.disclose("s", store.pending("s"), lane="event", priority="medium", time_=50.0)
    store.commit_poll("s", states={}, observations=[Observation("t", 3, "c")])
    store.disclose("s", store.pending("s"), lane="event", priority="medium", time_=60.0)
    store.commit_poll("s", states={}, observations=[Observation("t", 1, "d")])
    store.disclose("s", store.pending("s"), lane="event", priority="low", time_=70.0)  # stderr only: no budget
    assert store.woken("event", since=0) == [(50.0, False, None), (60.0, False, None)]
    assert store.woken("event", since=55) == [(60.0, False, None)]
    assert store.woken("message", since=0) == []


def test_woken_names_the_session_a_session_scoped_line_woke(store: Store) -> None:
    store.commit_poll("ctx", states={}, observations=[Observation("t", 3, "for a", meta={"session": "a"})])
    store.disclose("ctx", store.pending("ctx"), lane="event", priority="high", time_=50.0)
    store.commit_poll("s", states={}, observations=[Observation("t", 3, "for all")])
    store.disclose("s", store.pending("s"), lane="event", priority="medium", time_=60.0)
    assert store.woken("event", since=0) == [(50.0, True, "a"), (60.0, False, None)]


def test_fire_times_are_a_session_scoped_sensors_real_event_lines_shown_to_those_sessions(store: Store) -> None:
    for session, at in (("a", 50.0), ("b", 60.0), ("a", 70.0)):
        store.commit_poll("ctx", states={}, observations=[Observation("t", 1, f"for {session}", meta={"session": session})])
        store.disclose("ctx", store.pending("ctx"), lane="event", priority="low", time_=at)
    store.journal_test("ctx", [Observation("t", 3, "synthetic", meta={"session": "a"})], lane="event", priority="high")
    store.commit_shown_poll("ctx", states={}, status={}, observations=[Observation("t", 3, "shown", meta={"session": "a"})],
                            lane="event", priority="high")
    assert store.fire_times("ctx", ["a"], since=0) == [50.0, 70.0]
    assert store.fire_times("ctx", ["b"], since=0) == [60.0]
    assert store.fire_times("ctx", ["a", "b"], since=55) == [60.0, 70.0]
    assert store.fire_times("other", ["a"], since=0) == []

def test_probe_records_and_crate_state_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "attend.db"
    with Store(path) as store:
        assert store.get_probe("slack") is None
        assert store.get_crate_state("git") is None
        store.put_probe("slack", {"server": "slack", "confirmed": True})
        store.put_crate_state("git", {"head": "abc"})
    with Store(path) as store:
        assert store.get_probe("slack") == {"confirmed": True, "server": "slack"}
        assert store.get_crate_state("git") == {"head": "abc"}
        store.delete_probe("slack")
        assert store.get_probe("slack") is None


def test_two_connections_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "attend.db"
    with Store(path) as daemon, Store(path) as cli:
        cli.journal_test("s", [Observation("t", 3.0, "from the cli")], lane="event", priority="medium")
        assert [e.description for e in daemon.unprinted(test=True)] == ["from the cli"]


def test_pruning_keeps_what_is_not_delivered_yet(tmp_path: Path) -> None:
    now = [100.0]
    with Store(tmp_path / "db", clock=lambda: now[0]) as store:
        for lane in ("event", "message", "message"):
            store.commit_poll("s", states={}, observations=[Observation("t", 1.0, lane)])
            store.disclose("s", store.pending("s"), lane=lane, priority="low")
        event, drained, waiting = store.journal()
        store.mark_printed([event.id, drained.id, waiting.id])
        store.mark_drained([drained.id])
        now[0] = 200.0
        store.commit_poll("s", states={}, observations=[Observation("t", 1.0, "fresh")])
        store.disclose("s", store.pending("s"), lane="event", priority="low")
        assert store.prune_journal(before=150.0) == 2
        assert [e.description for e in store.journal()] == ["message", "fresh"]


def test_two_projects_share_the_file_but_not_their_state(tmp_path: Path) -> None:
    path = tmp_path / "attend.db"
    with Store(path, scope="/work/a") as a, Store(path, scope="/work/b") as b:
        a.commit_poll("git", states={"h": {"branch": "main"}}, observations=[Observation("t", 3.0, "in a")],
                      status={"state": "ok"})
        a.put_crate_state("git", {"head": "a"})
        b.put_probe("slack", {"confirmed": True})
        assert b.trigger_states("git") == {} and b.pending("git") == [] and b.status("git") is None
        assert b.get_crate_state("git") is None
        a.disclose("git", a.pending("git"), lane="message", priority="medium")
        assert b.journal() == [] and b.undrained("message") == [] and b.unprinted() == []
        assert [e.description for e in a.undrained("message")] == ["in a"]
        assert a.get_probe("slack") == {"confirmed": True}


def test_a_version_1_database_is_migrated_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "attend.db"
    old = sqlite3.connect(path)
    old.executescript((Path(__file__).parent / "data" / "store_v1.sql").read_text())
    old.execute("INSERT INTO trigger_state VALUES ('git', 'h1', '{\"v\": 1}', 1.0)")
    old.execute(
        "INSERT INTO journal (time, sensor, trigger, key, lane, priority, magnitude, description, test, printed)"
        " VALUES (1.0, 'chat', 'msg', NULL, 'message', 'low', 1.0, 'old message', 0, 1)"
    )
    old.execute("INSERT INTO crate_state VALUES ('git', '{\"head\": \"abc\"}', 1.0)")
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.trigger_states("git") == {"h1": {"v": 1}}
        assert [e.description for e in store.undrained("message")] == ["old message"]
        assert store.get_crate_state("git") == {"head": "abc"}
        store.commit_poll("git", states={"h2": 2}, observations=[Observation("t", 1.0, "new")])
        assert [o.description for o in store.pending("git")] == ["new"]
    with Store(path, scope="/work/a") as scoped:
        assert scoped.trigger_states("git") == {}


def test_a_stored_state_row_that_is_not_json_reads_as_absent_and_the_others_stay(store: Store, tmp_path: Path) -> None:
    store.commit_poll("s", states={"good": {"v": 3, "items": {"b": 2, "a": 1}}, "bad": {"v": 3}})
    raw = sqlite3.connect(tmp_path / "attend.db")
    with raw:
        raw.execute("UPDATE trigger_state SET state = '{not json' WHERE hash = 'bad'")
    raw.close()
    states = store.trigger_states("s")
    assert states == {"good": {"v": 3, "items": {"b": 2, "a": 1}}}
    assert list(states["good"]["items"]) == ["b", "a"]  # document order kept: {previous} reads as the item did


def test_a_version_5_database_gains_the_state_source_column_keeping_its_status_rows(tmp_path: Path) -> None:
    from attend.runtime.store.tables import SCHEMA

    path = tmp_path / "attend.db"
    old = sqlite3.connect(path)
    old.executescript(SCHEMA.replace("    state_source TEXT NOT NULL DEFAULT 'poll',\n", ""))
    assert "state_source" not in [row[1] for row in old.execute("PRAGMA table_info(sensor_status)")]
    old.execute("INSERT INTO sensor_status (scope, sensor, state, message) VALUES ('', 'git', 'timeout', 'slow')")
    old.execute("PRAGMA user_version = 5")
    old.commit()
    old.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        status = store.status("git")
        assert (status.state, status.message, status.state_source) == ("timeout", "slow", "poll")
        store.update_status("git", state="invalid", message="bad file", state_source="load")
        assert store.status("git").state_source == "load"



def test_a_verdict_on_one_sessions_lines_settles_only_the_polls_for_that_session(store: Store) -> None:
    for session in ("a", "b"):
        trace = {"time": 10.0, "session": session, "triggers": [{"outcomes": [{"outcome": QUEUED}]}]}
        store.commit_poll("ctx", states={}, observations=[Observation("t", 3, session, meta={"session": session})],
                          trace=trace)
    store.settle_history("ctx", fired=False, reason="governor", now=12.0, session="a")
    store.settle_history("ctx", fired=True, now=12.0, session="b")
    store.settle_history("ctx", fired=True, now=13.0)  # a project-wide verdict: no poll for a session
    outcomes = {t["session"]: t["triggers"][0]["outcomes"][0] for t in store.history("ctx")}
    assert outcomes["a"] == {"outcome": "held", "reason": "governor", "by": "discloser"}
    assert outcomes["b"] == {"outcome": "fired"}


def test_a_store_remembers_its_projects_hash_and_computes_again_one_that_is_no_hash(tmp_path: Path) -> None:
    from attend.files import project_hash

    project = tmp_path / "project"
    project.mkdir()
    path = tmp_path / "state" / "attend.db"
    path.parent.mkdir()
    with Store(path, scope=str(project.resolve())) as store:
        assert store.project_hash() == project_hash(project)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM store_info WHERE key = ?", (f"digest {project.resolve()}",)).fetchone() == (
        project_hash(project),)
    # A damaged (or forged) value is not a digest: computed again, and remembered right.
    for bad in ("../../x", "ABCDEF0123456789", "0" * 15, "0" * 64):
        with db:
            db.execute("UPDATE store_info SET value = ? WHERE key = ?", (bad, f"digest {project.resolve()}"))
        with Store(path, scope=str(project.resolve())) as store:
            assert store.project_hash() == project_hash(project)
    db.close()
