"""Progress is not flapping, and a held key keeps its newest value (DESIGN.md, Noise controls; issue 33,
item 3): the shipped git sensor's upstream-moved trigger through the real pipeline, store and discloser,
with explicit clocks. Six upstream pushes 70 s apart each reach the session within a poll; pushes
faster than the absolute refractory go out as one line stating the newest head and how many moves it
stands for."""

from __future__ import annotations

import io
import os

import pytest

from attend.compiler import compile_sensor
from attend.runtime.kinds import PollOutcome
from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
from attend.runtime.store import Store, default_db_path, scope_for
from attend.spec import layer_paths, load_set

HEADS = [f"{n}" * 7 + "a" * 33 for n in range(1, 9)]  # 1111111aaa..., 2222222aaa..., ...


def _result(head: str) -> dict:
    return {"branch": "main", "head": HEADS[0], "upstream_name": "origin/main",
            "upstream": [{"name": "origin/main", "head": head, "short": head[:7]}],
            "ahead": 0, "behind": 0, "commits": [], "dirty": [], "dirty_count": 0, "clean": True}


@pytest.fixture
def git(home):
    compiled = compile_sensor(load_set(home.project, os.environ).sensors["git"])
    now = [1000.0]  # the explicit clock of the store and the discloser

    def clock() -> float:
        return now[0]

    store = Store(default_db_path(layer_paths(home.project, os.environ).state_dir), scope=scope_for(home.project),
                  clock=clock)
    out = io.StringIO()
    discloser = Discloser(store, {"git": SensorTerms.of(compiled.lane, compiled.sensor.ir)}.get,
                          stdout=out, stderr=io.StringIO(), clock=clock)

    def poll_and_disclose(t: float, head: str) -> list[str]:
        """One poll at `t` seeing upstream `head`, then a disclosure round; the lines printed by it."""
        now[0] = t
        before = len(out.getvalue().splitlines())
        record_poll(store, compiled, PollOutcome(result=_result(head)), now=t)
        discloser.run_once()
        return out.getvalue().splitlines()[before:]

    yield poll_and_disclose
    store.close()


def test_six_upstream_pushes_70_s_apart_each_reach_the_session_within_the_poll(git) -> None:
    git(1000, HEADS[0])  # the baseline
    for n in range(1, 7):
        lines = git(1000 + 70 * n, HEADS[n])
        assert lines == [f"[attend sensor=git priority=medium] upstream origin/main moved: {HEADS[n - 1][:7]} → "
                         f"{HEADS[n][:7]}"], f"push {n}"


def test_pushes_inside_the_absolute_refractory_go_out_as_one_line_stating_the_newest_head(git) -> None:
    git(1000, HEADS[0])
    assert len(git(1010, HEADS[1])) == 1
    assert git(1030, HEADS[2]) == [] and git(1050, HEADS[3]) == []  # absolute refractory (60 s)
    # the refractory ends at 1070: the first poll after it states the newest head, once
    assert git(1071, HEADS[3]) == ["[attend sensor=git priority=medium] upstream origin/main moved: "
                                   f"{HEADS[2][:7]} → {HEADS[3][:7]} (2 changes held)"]
    assert git(1140, HEADS[4]) == [f"[attend sensor=git priority=medium] upstream origin/main moved: "
                                   f"{HEADS[3][:7]} → {HEADS[4][:7]}"]


def test_an_upstream_flipping_between_two_heads_is_flapping_and_its_settled_line_states_the_head(git) -> None:
    git(1000, HEADS[0])
    printed: list[str] = []
    for n in range(1, 9):  # force-pushed back and forth: every move after the first returns to a head it had
        printed += git(1000 + 70 * n, HEADS[n % 2])
    flapping = [line for line in printed if "is flapping" in line]
    assert len(flapping) == 1 and "6 returns to an earlier value within 10m" in flapping[0]
    settled = git(1000 + 70 * 8 + 600, HEADS[0])
    assert settled == [f"[attend sensor=git priority=medium] upstream-moved: key origin/main settled (quiet for 10m): "
                       f"upstream origin/main moved: {HEADS[1][:7]} → {HEADS[0][:7]} (2 changes held)"]
