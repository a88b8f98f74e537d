"""Hot reload through the one file watcher: a change to a sensor folder or a config file calls back, none is
missed, and a change to anything else calls nobody (proven by the watcher's own count of bursts seen)."""

from __future__ import annotations

import shutil
from pathlib import Path

import trio
from daemon_rig import InotifyUnavailable

from attend.runtime.watching.reload import watch
from attend.runtime.watching.targets import WatchTarget
from attend.runtime.watching.watcher import Watcher

#: Seconds a step may take on a busy machine before the test fails.
from waiting import PATIENCE


class Calls:
    def __init__(self) -> None:
        self.count = 0
        self.changed = trio.Event()

    async def __call__(self) -> None:
        self.count += 1
        self.changed.set()

    async def until(self, count: int) -> None:
        with trio.fail_after(PATIENCE):
            while self.count < count:
                self.changed = trio.Event()
                await self.changed.wait()


async def _seen(watcher: Watcher, bursts: int) -> None:
    """Wait until the watcher has handled `bursts` bursts of changes (then let the waiters run)."""
    with trio.fail_after(PATIENCE):
        while watcher.bursts < bursts:
            await trio.sleep(0.01)
    await trio.testing.wait_all_tasks_blocked()


async def test_added_changed_and_removed_files_each_call_back_and_other_files_do_not(tmp_path: Path) -> None:
    calls = Calls()
    async with trio.open_nursery() as nursery:
        watcher = await nursery.start(watch, [tmp_path], [], calls)
        (tmp_path / "b.yaml").write_text("spec: 1\n")
        await calls.until(1)
        (tmp_path / "b.yaml").write_text("spec: 1\nenabled: false\n")
        await calls.until(2)
        (tmp_path / "b.yaml").unlink()
        await calls.until(3)
        seen = watcher.bursts
        (tmp_path / "notes.txt").write_text("not a sensor file")
        await _seen(watcher, seen + 1)  # the watcher saw it ...
        assert calls.count == 3  # ... and called nobody
        (tmp_path / "c.yaml").write_text("spec: 1\n")
        await calls.until(4)
        nursery.cancel_scope.cancel()
    assert calls.count == 4


async def test_a_change_made_as_soon_as_the_watcher_has_started_is_not_missed(tmp_path: Path) -> None:
    # The daemon loads after `started`: an edit made right after it (while the load runs) reloads again.
    (tmp_path / "a.yaml").write_text("spec: 1\n")
    calls = Calls()
    async with trio.open_nursery() as nursery:
        await nursery.start(watch, [tmp_path], [], calls)
        (tmp_path / "a.yaml").write_text("spec: 1\ninterval: 5s\n")
        await calls.until(1)
        nursery.cancel_scope.cancel()


async def test_a_sensor_folder_and_a_config_file_made_after_the_start_are_watched(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "attend" / "sensors.d"
    config = tmp_path / "config" / "attend" / "config.yaml"
    calls = Calls()
    async with trio.open_nursery() as nursery:
        await nursery.start(watch, [folder], [config], calls)
        folder.mkdir(parents=True)
        await calls.until(1)
        count = calls.count
        with trio.fail_after(PATIENCE):  # the new folder is watched once the watcher re-planned
            n = 0
            while calls.count == count:
                n += 1
                (folder / "x.yaml").write_text(f"spec: 1\n# {n}\n")
                with trio.move_on_after(1.0):
                    await calls.until(count + 1)
        count = calls.count
        config.write_text("sensors: {}\n")
        await calls.until(count + 1)
        nursery.cancel_scope.cancel()


async def test_a_folder_that_cannot_be_watched_costs_only_the_names_that_need_it(tmp_path: Path) -> None:
    # /proc cannot be watched recursively (permission errors deep inside); the other folder still wakes.
    good = tmp_path / "good"
    good.mkdir()
    errors: dict[str, str] = {}
    logged: list[str] = []
    watcher = Watcher(logged.append, lambda name, error: errors.__setitem__(name, error), label="wake_on")
    watcher.watch("proc", [WatchTarget("/proc/**", Path("/proc"), True, "/proc/**")])
    watcher.watch("good", [WatchTarget(f"{good}/**", good, True, f"{good}/**")])
    async with trio.open_nursery() as nursery:
        await nursery.start(watcher.run)
        await watcher.watching()
        assert errors.get("proc", "").startswith("/proc/**: cannot watch /proc: ")
        assert errors.get("good", "") == ""
        assert any("cannot watch /proc" in line for line in logged)
        signal = watcher.signal("good")
        with trio.fail_after(PATIENCE):
            n = 0
            while not signal.is_set():
                n += 1
                (good / "f").write_text(str(n))
                with trio.move_on_after(1.0):
                    await signal.wait()
        nursery.cancel_scope.cancel()


async def test_a_folder_deleted_and_made_again_every_50_ms_never_stops_the_watcher(tmp_path: Path) -> None:
    churn = tmp_path / "churn"
    stable = tmp_path / "stable"
    stable.mkdir()
    watcher = Watcher(lambda _line: None)
    watcher.watch("churn", [WatchTarget(f"{churn}/**", churn, True, f"{churn}/**")])
    watcher.watch("stable", [WatchTarget(f"{stable}/*", stable, False, f"{stable}/*")])

    def flip() -> None:
        if churn.is_dir():
            shutil.rmtree(churn)
        else:
            (churn / "sub").mkdir(parents=True)
            (churn / "sub" / "f").write_text("x")

    async with trio.open_nursery() as nursery:
        await nursery.start(watcher.run)
        for _ in range(60):  # 3 s of churn: the watcher re-plans, fails, retries, and never raises
            flip()
            await trio.sleep(0.05)
        signal = watcher.signal("stable")
        signal.clear()
        with trio.fail_after(PATIENCE):  # and it still watches
            n = 0
            while not signal.is_set():
                n += 1
                (stable / "f").write_text(str(n))
                with trio.move_on_after(1.0):
                    await signal.wait()
        nursery.cancel_scope.cancel()


async def test_where_inotify_is_unavailable_the_same_folders_are_polled_and_still_wake(tmp_path: Path) -> None:
    # issue 35, item 8: the inotify -> polling fallback had no test
    flat, deep = tmp_path / "flat", tmp_path / "deep"
    (deep / "a" / "b").mkdir(parents=True)
    flat.mkdir()
    errors: dict[str, str] = {}
    logged: list[str] = []
    watcher = Watcher(logged.append, lambda name, error: errors.__setitem__(name, error), label="wake_on",
                      backend=InotifyUnavailable)
    watcher.watch("flat", [WatchTarget(f"{flat}/*.json", flat, False, f"{flat}/*.json")])
    watcher.watch("deep", [WatchTarget(f"{deep}/**", deep, True, f"{deep}/**")])
    async with trio.open_nursery() as nursery:
        await nursery.start(watcher.run)
        await watcher.watching()
        assert errors == {}  # polling is watching: no sensor falls back to its interval
        polled = [line for line in logged if "inotify is unavailable (Too many open files); polling" in line]
        assert len(polled) == 2 and any(str(deep) in line for line in polled), logged
        for name, path in (("flat", flat / "x.json"), ("deep", deep / "a" / "b" / "y.txt")):
            signal = watcher.signal(name)
            path.write_text("changed")  # one write: the poll compares it with the scan before
            with trio.fail_after(PATIENCE):
                await signal.wait()
        nursery.cancel_scope.cancel()
