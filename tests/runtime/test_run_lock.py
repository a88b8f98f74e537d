"""The run lock (runtime/sessions/runlock.py): taking it writes this process's pid into the lock file, so it is
never opened through a symlink planted at its name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attend.runtime.sessions.runlock import open_lock, try_lock
from attend.runtime.store import StoreUnavailable


def test_a_symlink_planted_at_the_lock_name_is_refused_and_its_target_keeps_every_byte(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "run-0123456789abcdef.lock").symlink_to(target)
    with pytest.raises(StoreUnavailable) as caught:
        open_lock(state / "run-0123456789abcdef.lock")
    assert "run-0123456789abcdef.lock: a symbolic link, not followed" in str(caught.value)
    assert target.read_text() == "keep me\n"


def test_the_lock_taken_holds_this_process_pid(tmp_path: Path) -> None:
    path = tmp_path / "state" / "run-0123456789abcdef.lock"
    with open_lock(path) as lock:
        assert try_lock(lock)
        assert path.read_text() == str(os.getpid())
