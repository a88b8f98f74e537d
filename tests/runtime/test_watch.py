"""Hot reload by polling: a change to a sensor folder or a config file calls back, and none is missed."""

from __future__ import annotations

from pathlib import Path

import trio

from attend.runtime.watching.reload import WATCH_INTERVAL, snapshot, watch


async def _watch_for(folder: Path, rounds: int, **kwargs) -> int:
    calls = 0

    async def changed() -> None:
        nonlocal calls
        calls += 1

    with trio.move_on_after(WATCH_INTERVAL * rounds + WATCH_INTERVAL / 2):
        await watch([folder], [], changed, **kwargs)
    return calls


async def test_an_unchanged_folder_never_calls_back(tmp_path: Path, autojump_clock) -> None:
    (tmp_path / "a.yaml").write_text("spec: 1\n")
    assert await _watch_for(tmp_path, rounds=5) == 0


async def test_a_change_made_after_the_last_load_but_before_the_watcher_ran_is_not_missed(
    tmp_path: Path, autojump_clock
) -> None:
    (tmp_path / "a.yaml").write_text("spec: 1\n")
    loaded = snapshot([tmp_path])
    (tmp_path / "a.yaml").write_text("spec: 1\ninterval: 5s\n")  # edited while the load ran
    assert await _watch_for(tmp_path, rounds=3, since=loaded) == 1


async def test_added_changed_and_removed_files_each_call_back_once(tmp_path: Path, autojump_clock) -> None:
    calls = 0

    async def changed() -> None:
        nonlocal calls
        calls += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch, [tmp_path], [], changed)
        await trio.sleep(WATCH_INTERVAL * 1.5)
        (tmp_path / "b.yaml").write_text("spec: 1\n")
        await trio.sleep(WATCH_INTERVAL * 2)
        (tmp_path / "b.yaml").write_text("spec: 1\nenabled: false\n")
        await trio.sleep(WATCH_INTERVAL * 2)
        (tmp_path / "b.yaml").unlink()
        await trio.sleep(WATCH_INTERVAL * 2)
        (tmp_path / "notes.txt").write_text("not a sensor file")
        await trio.sleep(WATCH_INTERVAL * 2)
        nursery.cancel_scope.cancel()
    assert calls == 3
