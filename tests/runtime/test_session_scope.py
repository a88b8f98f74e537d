"""`scope: session`: trigger state per session, lines only to that session (pipeline and printer, real store)."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import replace

from daemon_rig import pipeline_rig

from attend.peers.identity import Session
from attend.runtime import kinds
from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
from attend.runtime.sessions.printer import SessionPrinter

#: Prints the items of `<folder>/<ATTEND_SESSION>.json`: each session sees its own file.
SCRIPT = "import json, os, sys, pathlib; p = pathlib.Path(sys.argv[1]) / (os.environ['ATTEND_SESSION'] + '.json'); " \
         "print(json.dumps({'items': json.loads(p.read_text()) if p.exists() else []}))"


def setup(home):
    folder = home.root / "per-session"
    folder.mkdir()
    doc = {"spec": 1, "name": "mine", "kind": "command", "scope": "session", "threshold": 0,
           "command": {"argv": [sys.executable, "-c", SCRIPT, str(folder)]},
           "triggers": {"new": {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3,
                                "description": "new item {id}"}}}
    home.write_user_sensor("mine", json.dumps(doc))
    compiled, store, ctx = pipeline_rig(home, "mine")
    return folder, compiled, store, ctx


async def test_a_session_scoped_sensor_keeps_state_per_session_and_tells_only_that_session(quiet_home) -> None:
    folder, compiled, store, ctx = setup(quiet_home)
    assert compiled.scope == "session"
    with store:
        out = {s: (io.StringIO(), io.StringIO()) for s in ("a", "b")}
        printers = {s: SessionPrinter(store, Session(s, True, "flag"), stdout=o, stderr=e, clock=lambda: 1000.0)
                    for s, (o, e) in out.items()}

        async def poll_all(now: float) -> None:
            for s in ("a", "b"):
                record_poll(store, compiled, await kinds.poll(compiled, replace(ctx, session=s)),
                            now=now, session=s)

        (folder / "a.json").write_text(json.dumps([{"id": 1}]))
        await poll_all(1000.0)  # each session's baseline
        assert store.trigger_states("mine@a") and store.trigger_states("mine@b") and not store.trigger_states("mine")
        (folder / "a.json").write_text(json.dumps([{"id": 1}, {"id": 2}]))
        (folder / "b.json").write_text(json.dumps([{"id": 1}]))
        await poll_all(1010.0)
        assert sorted((o.description, o.meta["session"]) for o in store.pending("mine")) == [
            ("new item 1", "b"), ("new item 2", "a")]
        Discloser(store, {"mine": SensorTerms("event", 0.0)}.get, stdout=io.StringIO(), stderr=io.StringIO(),
                  clock=lambda: 1011.0).run_once()
        for printer in printers.values():
            printer.print_new()
    # Both lines were one disclosure (3 + 3: high for the project); each session is shown its own, priced alone.
    assert out["a"][0].getvalue() == "[attend sensor=mine priority=medium] new item 2\n"
    assert out["b"][0].getvalue() == "[attend sensor=mine priority=medium] new item 1\n"


def _journal_for(store, session: str, lane: str, text: str) -> None:
    """A `scope: session` sensor's line for `session`, journaled now as the daemon does (`meta.session`); a
    line older than `attend.delivery.stale_after` would reach a hook as the summary line (news.py)."""
    import time

    from attend.runtime.store import Observation

    now = time.time()
    store.commit_poll("mine", states=None, observations=[
        Observation("new", 3.0, text, key=text, meta={"session": session}, time=now)], status={"state": "ok"})
    store.disclose("mine", store.pending("mine"), lane=lane, priority="medium", time_=now)


def test_the_stop_hook_never_hands_a_session_another_sessions_line(quiet_home) -> None:
    _, _, store, _ = setup(quiet_home)
    with store:
        for s in ("a", "b"):
            store.claim_drained(s, [], store.journal_end())  # each session has a row (it drained once)
        _journal_for(store, "a", "message", "for a on the message lane")
        _journal_for(store, "a", "event", "for a on the event lane")
    plain = quiet_home.attend("drain", "--session", "b")
    hook = quiet_home.attend("drain", "--format", "hook", input=json.dumps({"hook_event_name": "Stop", "session_id": "b"}))
    assert (plain.returncode, plain.stdout, hook.returncode, hook.stdout) == (0, "", 0, "")
    mine = quiet_home.attend("drain", "--format", "hook", input=json.dumps({"hook_event_name": "Stop", "session_id": "a"}))
    assert "for a on the message lane" in mine.stdout and "for a on the event lane" in mine.stdout


def test_per_session_states_of_sessions_gone_for_good_are_pruned_and_forgotten_with_the_sensor(quiet_home) -> None:
    _, _, store, _ = setup(quiet_home)
    clock = {"now": 1000.0}
    store._clock = lambda: clock["now"]
    with store:
        for key in ("mine", "mine@gone", "mine@back", "mine@live", "other@gone"):
            store.put_trigger_states(key, {"h": {"n": 1}})
            store.put_crate_state(key, {"n": 1})
        store.claim_drained("back", [], 0)  # a row that beat at 1000, then went quiet
        clock["now"] = 5000.0
        store.claim_drained("live", [], 0)
        store.session_heartbeat("live")  # beating since the cut
        assert store.prune_session_states(4000.0) == 6  # gone, back and other@gone, in both tables
        assert [k for k in ("mine", "mine@gone", "mine@back", "mine@live", "other@gone") if store.trigger_states(k)] == [
            "mine", "mine@live"]
        assert store.get_crate_state("mine@live") == {"n": 1} and store.get_crate_state("mine@gone") is None
        store.forget_sensor("mine")
        assert store.trigger_states("mine") and not store.trigger_states("mine@live")
        assert store.get_crate_state("mine@live") is None


def test_a_one_shot_poll_of_a_session_scoped_sensor_polls_for_the_callers_session_or_says_it_needs_one(
        quiet_home) -> None:
    from tests.conftest import run_in_process

    folder, _, store, _ = setup(quiet_home)
    store.close()
    (folder / "a.json").write_text(json.dumps([{"id": 7}]))
    (folder / "b.json").write_text(json.dumps([{"id": 8}, {"id": 9}]))
    refused = quiet_home.attend("sensors", "poll", "mine")
    assert refused.returncode == 2
    assert refused.stderr == ("attend: sensor mine is scope: session: name the session to poll it for "
                              "(--session ID, or $ATTEND_SESSION)\n")
    polled = quiet_home.attend("sensors", "poll", "mine", "--session", "a", "--json")
    assert polled.returncode == 0, polled.stderr
    report = json.loads(polled.stdout)
    assert report["session"] == "a" and report["result"] == {"items": [{"id": 7}]}
    by_env = run_in_process(["sensors", "poll", "mine", "--json"], env=quiet_home.env(ATTEND_SESSION="b"),
                            cwd=quiet_home.project)
    assert json.loads(by_env.stdout)["result"] == {"items": [{"id": 8}, {"id": 9}]}
    _, store, _ = pipeline_rig(quiet_home, "mine")
    with store:
        assert store.trigger_states("mine@a") and store.trigger_states("mine@b") and not store.trigger_states("mine")


async def test_session_in_a_description_is_the_session_polled_for_unless_the_item_has_its_own(quiet_home) -> None:
    from attend.compiler import compile_sensor
    from attend.spec import load_set

    folder, _, store, ctx = setup(quiet_home)
    doc = json.loads((quiet_home.user_sensors / "mine.yaml").read_text())
    doc["triggers"]["new"]["description"] = "new item {id} for {session}"
    quiet_home.write_user_sensor("mine", json.dumps(doc))
    compiled = compile_sensor(load_set(quiet_home.project, {**ctx.env}).sensors["mine"])
    with store:
        (folder / "a.json").write_text(json.dumps([{"id": 1}, {"id": 2, "session": "its-own"}]))
        fired = compiled.step(None, {"items": [{"id": 1}, {"id": 2, "session": "its-own"}]}, test=True, session="a")
        assert [f.description for f in fired.fires] == ["new item 1 for a", "new item 2 for its-own"]
        project = compiled.step(None, {"items": [{"id": 1}]}, test=True)  # no session: rendered empty, warned
        assert project.fires[0].description == "new item 1 for "
        assert any("{session} is missing" in w for w in project.warnings)
        await_poll = await kinds.poll(compiled, replace(ctx, session="a"))  # the daemon's path, polled for a
        record = record_poll(store, compiled, await_poll, now=1000.0, session="a", test=True)
        assert [o.description for o in record.observations] == ["new item 1 for a", "new item 2 for its-own"]
