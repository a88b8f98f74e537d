"""The wake watcher (runtime/wake.py) on real folders with real inotify events.

Waits on real events under generous deadlines (no timed assertion): each step asserts that the
sensor's signal was set, however long the machine took.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import trio

from attend.runtime.watching.wake import WakeHub
from waiting import PATIENCE

#: Seconds a step may take on a busy machine before the test fails.


#: Seconds between two attempts at a change: one made before the watchers watch its folder is missed, so it
#: is made again until `name`'s signal is set (each attempt is the same change; a test proves no timing).
AGAIN = 0.1


async def _woken(hub: WakeHub, name: str, change) -> None:
    """Make `change` (again every `AGAIN` seconds, until the watchers have started) and wait for `name`'s signal."""
    signal = hub.signal(name)
    signal.clear()
    with trio.fail_after(PATIENCE):
        while not signal.is_set():
            change()
            with trio.move_on_after(AGAIN):
                await signal.wait()


async def test_a_change_to_a_watched_file_sets_only_its_sensors_signal(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    logged: list[str] = []
    hub = WakeHub(tmp_path, {"HOME": str(tmp_path)}, logged.append)
    hub.update("feed", ["data/feed.json"])
    hub.update("other", ["data/other.json"])
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        counter = iter(range(1000))
        await _woken(hub, "feed", lambda: (tmp_path / "data" / "feed.json").write_text(str(next(counter))))
        assert not hub.signal("other").is_set()
        nursery.cancel_scope.cancel()
    assert logged == []


async def test_a_folder_created_later_and_a_folder_replaced_are_watched_again(tmp_path: Path) -> None:
    hub = WakeHub(tmp_path, {}, lambda _m: None)
    hub.update("git", [".git/refs/**"])  # not there yet: the project folder is watched in its place
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        refs = tmp_path / ".git" / "refs" / "heads"
        await _woken(hub, "git", lambda: refs.mkdir(parents=True, exist_ok=True))
        counter = iter(range(1000))
        await _woken(hub, "git", lambda: (refs / "main").write_text(str(next(counter))))
        # The watched folder is deleted and made again (a re-clone): the new one is watched.
        shutil.rmtree(tmp_path / ".git" / "refs")
        await _woken(hub, "git", lambda: refs.mkdir(parents=True, exist_ok=True))
        await _woken(hub, "git", lambda: (refs / "main").write_text(str(next(counter))))
        nursery.cancel_scope.cancel()


async def test_a_replan_and_a_cancellation_end_the_running_watchers(tmp_path: Path) -> None:
    hub = WakeHub(tmp_path, {}, lambda _m: None)
    hub.update("s", ["x.json"])
    with trio.fail_after(PATIENCE):  # the watcher thread is told to stop: no hang
        async with trio.open_nursery() as nursery:
            await nursery.start(hub.run)
            await trio.sleep(0.2)
            hub.update("s", ["y.json"])  # a re-plan cancels the running watcher
            await trio.sleep(0.2)
            nursery.cancel_scope.cancel()


async def test_a_sensor_that_polled_before_its_watch_started_is_woken_once_it_has(tmp_path: Path) -> None:
    """The daemon does not hold a sensor's first poll for its watch (`Daemon._arm_wake_on`): the sensor is woken
    once a plan that watches it is ready, so whatever changed while its first poll ran is polled. A name with
    nothing to watch, or one the running plan watches already, is not woken for that."""
    hub = WakeHub(tmp_path, {}, lambda _m: None)
    hub.update("feed", ["feed.json"])
    hub.wake_when_watched("feed")
    hub.wake_when_watched("nothing")  # no targets: nothing to wake it for
    assert not hub.signal("feed").is_set()
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run)
        with trio.fail_after(PATIENCE):
            await hub.watching()
        assert hub.signal("feed").is_set() and not hub.signal("nothing").is_set()
        hub.signal("feed").clear()
        assert hub.signal("feed").woken_at is None  # a poll asked for, not a change seen: history says "woken" for none
        hub.wake_when_watched("feed")  # a sensor started again over the same paths: watched already
        hub.update("other", ["other.json"])  # so the next plan does not wake it
        with trio.fail_after(PATIENCE):
            await hub.watching()
        assert not hub.signal("feed").is_set()
        nursery.cancel_scope.cancel()
