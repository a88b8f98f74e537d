"""Watched links never lead outside (issue 35, item 7): watchfiles follows a symbolic link to a folder inside a
tree it watches (inotify when the watch starts, its polling on every scan), so `wake_on: ["**"]` in a checkout
holding `root -> /` watched the whole disk. The plan never watches through a link to a folder, and every change
is checked again: a change seen through a link wakes nobody, and a link swapped in after planning is planned
out. Real folders, real links, real changes; a negative is proven by a later change of a sentinel folder watched
by the same watcher (its events come in order), never by a sleep.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from daemon_rig import InotifyUnavailable

from attend.runtime.watching.targets import plan_watches, watch_target
from attend.runtime.watching.wake import WakeHub
from waiting import PATIENCE

#: Seconds between two attempts at a change made before the watchers watch its folder (made again until seen).
AGAIN = 0.1


async def woken(hub: WakeHub, name: str, change: Callable[[int], Any]) -> None:
    """Make `change(n)` (again every AGAIN seconds until the watchers watch) and wait for `name`'s signal."""
    signal = hub.signal(name)
    signal.clear()
    n = 0
    with trio.fail_after(PATIENCE):
        while not signal.is_set():
            n += 1
            change(n)
            with trio.move_on_after(AGAIN):
                await signal.wait()


async def not_woken_by(hub: WakeHub, name: str, change: Callable[[], Any], sentinel: Path) -> None:
    """Make `change`, then a change in `sentinel` (watched by the same watcher, after it in order); once the
    sentinel's change is seen, `change` was seen too if it ever would be: `name` must not be woken."""
    signal = hub.signal(name)
    signal.clear()
    change()
    await woken(hub, "sentinel", lambda n: (sentinel / f"s{n}").write_text(str(n)))
    await trio.testing.wait_all_tasks_blocked()
    assert not signal.is_set(), f"{name} was woken by a change outside"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, outside, sentinel): a project with a real folder `sub`, a folder outside it, and a sentinel."""
    project, outside, sentinel = tmp_path / "project", tmp_path / "outside", tmp_path / "sentinel"
    for folder in (project / "sub", outside, sentinel):
        folder.mkdir(parents=True)
    return project, outside, sentinel


def hub_for(project: Path, sentinel: Path, backend: Any = None) -> WakeHub:
    """The daemon's wake watcher: `proj` wakes on the project's `**` (as a project file may ask), `sentinel` on
    its own tree (the same recursive watchfiles watcher as the project's real folders)."""
    hub = WakeHub(project, {"HOME": str(project.parent)}, lambda _line: None)
    hub.backend = backend
    hub.update("proj", ["**"])
    hub.update("sentinel", [f"{sentinel}/**"])
    return hub


async def test_a_link_to_a_folder_outside_is_not_watched_through_and_the_inside_still_wakes(layout) -> None:
    project, outside, sentinel = layout
    (project / "root").symlink_to(outside)
    hub = hub_for(project, sentinel)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        await hub.watching()
        await not_woken_by(hub, "proj", lambda: (outside / "x.txt").write_text("outside"), sentinel)
        await woken(hub, "proj", lambda n: (project / "sub" / "inside.txt").write_text(str(n)))
        await woken(hub, "proj", lambda n: (project / f"top{n}.txt").write_text(str(n)))  # beside the link
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("backend", [None, InotifyUnavailable], ids=["inotify", "polling"])
async def test_a_link_swapped_in_after_planning_is_not_watched_through(layout, backend) -> None:
    # inotify follows no link made after the watch started, but the next plan did (any re-plan); watchfiles'
    # polling follows it on its next scan: the swap itself plans it out, and a change seen through it wakes nobody
    project, outside, sentinel = layout
    hub = hub_for(project, sentinel, backend)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        await hub.watching()

        def swap(n: int) -> None:
            if (project / "sub").is_symlink():
                (project / "sub.old" / f"again{n}").write_text(str(n))  # the swap was made before the watch
                return
            (project / "sub").rename(project / "sub.old")
            (project / "sub").symlink_to(outside)

        await woken(hub, "proj", swap)  # the swap is a change inside the project
        hub.update("late", ["late.json"])  # and any re-plan after it
        await hub.watching()
        await not_woken_by(hub, "proj", lambda: (outside / "y.txt").write_text("outside"), sentinel)
        await woken(hub, "proj", lambda n: (project / "sub.old" / f"z{n}").write_text(str(n)))
        nursery.cancel_scope.cancel()


def test_a_plan_with_a_link_to_the_root_folder_watches_only_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "a" / "b").mkdir(parents=True)
    (project / "a" / "root").symlink_to("/")
    (project / "c").mkdir()
    plan = plan_watches({"proj": [watch_target("**", project)]})
    # the folders on the way to the link flat (the link one of their entries), the rest of the tree recursively
    assert plan.flat == {project, project / "a"}
    assert plan.recursive == {project / "a" / "b", project / "c"}


def test_a_change_seen_through_a_link_or_of_a_link_leading_out_wakes_nobody_and_plans_again(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "sub").mkdir(parents=True)
    outside.mkdir()
    (project / "out").symlink_to(outside)
    (project / "file-out").symlink_to(outside / "f.txt")
    plan = plan_watches({"proj": [watch_target("**", project)]})
    assert plan.woken([str(project / "out" / "x.txt")]) == (set(), True)  # its folder is outside
    assert plan.woken([str(project / "out")]) == (set(), True)  # a link to a folder outside: plan it out
    assert plan.woken([str(project / "file-out")]) == (set(), False)  # a file outside, seen through its link
    assert plan.woken([str(project / "sub" / "x.txt")]) == ({"proj"}, False)
    (project / "new").mkdir()  # a folder made where the plan watches flat: watch it as the tree it is
    assert plan.woken([str(project / "new")]) == ({"proj"}, True)
    os.symlink(project / "sub", project / "alias")  # a link that stays inside: a change of the project
    assert plan.woken([str(project / "alias")]) == ({"proj"}, True)
