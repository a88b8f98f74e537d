"""The crate kind: entry-point lookup, state kept in the store, and every failure a recorded state.

The sensors under test are registered the way a separate package registers one: a module and a
``*.dist-info/entry_points.txt`` in the ``attend.sensors`` group, on sys.path.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from sensor_material import GitRepo

from attend.compiler import compile_sensor
from attend.runtime.kinds import PollContext
from attend.runtime.kinds.crate import poll
from attend.runtime.pipeline import record_poll
from attend.runtime.store import Store
from attend.spec import layer_paths, load_paths

SENSOR_MODULE = '''
"""Compiled sensors a third-party package registers, for the crate kind's tests."""
import threading
from attend.sensors import SensorUnavailable, SensorConfigError

RELEASE = threading.Event()
DONE = threading.Event()


class Counting:
    def __init__(self, config):
        if "step" not in config:
            raise SensorConfigError("the crate block needs `step`")
        self.step = config["step"]
        self.count = 0

    def export_state(self):
        return {"count": self.count}

    def import_state(self, state):
        self.count = state["count"]

    def poll(self, focus):
        self.count += self.step
        return {"count": self.count, "cwd": str(focus.cwd), "focus": focus.description,
                "keywords": list(focus.keywords)}


class Unavailable:
    def __init__(self, config):
        pass

    def poll(self, focus):
        raise SensorUnavailable("no upstream at " + str(focus.cwd))


class Broken:
    def __init__(self, config):
        pass

    def poll(self, focus):
        raise RuntimeError("boom")


class Slow:
    def __init__(self, config):
        pass

    def poll(self, focus):
        RELEASE.wait(30)
        DONE.set()
        return {}
'''

ENTRY_POINTS = """[attend.sensors]
test-counting = attend_test_sensors:Counting
test-unavailable = attend_test_sensors:Unavailable
test-broken = attend_test_sensors:Broken
test-slow = attend_test_sensors:Slow
test-missing = attend_test_sensors:NoSuchClass
"""


@pytest.fixture
def registered(tmp_path_factory, monkeypatch) -> object:
    """Install the test sensors as a package with entry points, on sys.path."""
    site = tmp_path_factory.mktemp("site")
    (site / "attend_test_sensors.py").write_text(SENSOR_MODULE)
    info = site / "attend_test_sensors-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: attend-test-sensors\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    import importlib
    import sys

    module = importlib.import_module("attend_test_sensors")
    yield module
    module.RELEASE.set()  # let an abandoned poll thread finish
    sys.modules.pop("attend_test_sensors", None)  # the next test gets fresh events


def crate_file(folder: Path, name: str, source: str, crate: str = "{}", extra: str = "") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"spec: 1\nname: {name}\nkind: crate\nsource: {source}\ncrate: {crate}\n{extra}")
    return path


def compiled(path: Path, project: Path):
    sensor = load_paths([path], project, os.environ).sensors[path.stem]
    assert sensor.status == "ok", [str(d) for d in sensor.diagnostics]
    return compile_sensor(sensor)


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "state" / "attend.db") as s:
        yield s


def context(project: Path, store, **env: str) -> PollContext:
    return PollContext(project_dir=project, env=dict(env), paths=layer_paths(project, os.environ), store=store)


async def poll_and_record(sensor, ctx, store):
    """One poll as the daemon does it: the kind's poll, then `record_poll` committing it."""
    outcome = await poll(sensor, ctx)
    record_poll(store, sensor, outcome, now=time.time())
    return outcome


async def test_a_sensor_is_built_once_and_its_state_is_stored_with_each_recorded_poll(
    registered, project, store, tmp_path
):
    sensor = compiled(crate_file(tmp_path, "counter", "test-counting", "{step: 2}"), project)
    ctx = context(project, store, ATTEND_FOCUS="fix the parser", ATTEND_FOCUS_KEYWORDS="parser, lark")
    first = await poll_and_record(sensor, ctx, store)
    second = await poll_and_record(sensor, ctx, store)
    assert first.ok and second.ok
    assert second.result == {"count": 4, "cwd": str(project), "focus": "fix the parser", "keywords": ["parser", "lark"]}
    assert second.crate_state == {"count": 4}
    assert store.get_crate_state("counter") == {"count": 4}


async def test_a_new_context_restores_the_stored_state_before_its_first_poll(registered, project, store, tmp_path):
    sensor = compiled(crate_file(tmp_path, "counter", "test-counting", "{step: 1}"), project)
    await poll_and_record(sensor, context(project, store), store)
    await poll_and_record(sensor, context(project, store), store)  # a restart: a fresh instance, the same store
    outcome = await poll(sensor, context(project, store))
    assert outcome.result["count"] == 3


async def test_a_poll_that_is_not_recorded_leaves_the_stored_crate_state_as_it_was(
    registered, project, store, tmp_path
):
    sensor = compiled(crate_file(tmp_path, "counter", "test-counting", "{step: 1}"), project)
    await poll_and_record(sensor, context(project, store), store)
    outcome = await poll(sensor, context(project, store))
    record_poll(None, sensor, outcome, now=time.time())  # a dry run stores nothing
    assert outcome.crate_state == {"count": 2}
    assert store.get_crate_state("counter") == {"count": 1}


async def test_an_unknown_source_is_an_invalid_sensor_naming_the_known_ones(project, store, tmp_path):
    outcome = await poll(compiled(crate_file(tmp_path, "ghost", "no-such-sensor"), project), context(project, store))
    assert outcome.state == "invalid"
    assert "no-such-sensor" in outcome.message and "git" in outcome.message


async def test_an_entry_point_that_fails_to_load_is_invalid(registered, project, store, tmp_path):
    outcome = await poll(compiled(crate_file(tmp_path, "missing", "test-missing"), project), context(project, store))
    assert outcome.state == "invalid"
    assert "failed to load" in outcome.message


async def test_a_crate_block_the_sensor_rejects_is_invalid(registered, project, store, tmp_path):
    outcome = await poll(compiled(crate_file(tmp_path, "counter", "test-counting"), project), context(project, store))
    assert (outcome.state, outcome.message) == ("invalid", "crate block of counter: the crate block needs `step`")


async def test_an_unavailable_upstream_is_the_unavailable_state(registered, project, store, tmp_path):
    outcome = await poll(compiled(crate_file(tmp_path, "away", "test-unavailable"), project), context(project, store))
    assert (outcome.state, outcome.message) == ("unavailable", f"no upstream at {project}")
    assert store.get_crate_state("away") is None


async def test_any_other_exception_is_exec_failed_with_its_message(registered, project, store, tmp_path):
    outcome = await poll(compiled(crate_file(tmp_path, "broken", "test-broken"), project), context(project, store))
    assert (outcome.state, outcome.message) == ("exec_failed", "RuntimeError: boom")


async def test_a_poll_past_its_deadline_times_out_and_is_not_overlapped(registered, project, store, tmp_path,
                                                                        autojump_clock):
    sensor = compiled(crate_file(tmp_path, "slow", "test-slow", "{timeout: 2s}"), project)
    ctx = context(project, store)
    first = await poll(sensor, ctx)
    assert (first.state, first.message) == ("timeout", "the poll took longer than 2 s")
    second = await poll(sensor, ctx)
    assert (second.state, second.message) == ("timeout", "the previous poll is still running")
    registered.RELEASE.set()
    assert registered.DONE.wait(10)
    deadline = time.monotonic() + 10
    while ctx.crate_instances["slow"].busy.is_set() and time.monotonic() < deadline:
        threading.Event().wait(0.005)
    assert not ctx.crate_instances["slow"].busy.is_set()  # free again: the next poll may run


async def test_the_shipped_git_sensor_runs_through_its_entry_point_and_survives_a_restart(project, store, tmp_path):
    from sensor_material import SHIPPED

    repo = GitRepo(tmp_path / "repo")
    repo.commit("initial", "README")
    git = compiled(SHIPPED / "git.yaml", repo.path)
    baseline = await poll_and_record(git, context(repo.path, store), store)
    assert baseline.ok and baseline.result["branch"] == "main"
    sha = repo.commit("while attend was down", "x.txt")
    after = await poll(git, context(repo.path, store))
    assert [c["sha"] for c in after.result["commits"]] == [sha]


async def test_the_shipped_git_sensor_outside_a_repository_is_unavailable(project, store):
    from sensor_material import SHIPPED

    outcome = await poll(compiled(SHIPPED / "git.yaml", project), context(project, store))
    assert outcome.state == "unavailable"
    assert "no git work tree" in outcome.message


async def test_an_edited_crate_block_rebuilds_the_instance(registered, project, store, tmp_path):
    path = crate_file(tmp_path, "counter", "test-counting", "{step: 1}")
    ctx = context(project, store)
    await poll_and_record(compiled(path, project), ctx, store)
    crate_file(tmp_path, "counter", "test-counting", "{step: 10}")
    outcome = await poll(compiled(path, project), ctx)
    assert outcome.result["count"] == 11  # the new instance starts from the stored state
