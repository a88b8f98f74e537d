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
from attend.runtime.sessions.serve import SessionPrinter

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
