"""Atomic writes: the destination holds the old text or the new one, never a part (attend.files)."""

import os
import stat

import pytest

from attend import files as storage
from attend.files import WriteFailed, remove_file, write_atomically


def test_a_write_creates_the_folder_and_the_file(tmp_path):
    target = tmp_path / "a" / "b" / "x.yaml"
    write_atomically(target, "interval: 5s\n")
    assert target.read_text() == "interval: 5s\n"


def test_a_write_replaces_the_file_and_keeps_its_permissions(tmp_path):
    target = tmp_path / "x.yaml"
    target.write_text("old\n")
    target.chmod(0o600)
    write_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["x.yaml"]


def test_a_rename_the_file_system_refuses_fails_and_leaves_no_temporary(tmp_path):
    # A folder standing where the file should go: os.replace refuses, even for root.
    target = tmp_path / "x.yaml"
    (target / "inner").mkdir(parents=True)
    with pytest.raises(WriteFailed):
        write_atomically(target, "interval: 5s\n")
    assert sorted(os.listdir(tmp_path)) == ["x.yaml"]
    assert os.listdir(target) == ["inner"]


def test_a_crash_between_writing_and_renaming_leaves_the_original_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "x.yaml"
    target.write_bytes(b"interval: 5m\n")

    def failing_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(storage.os, "fsync", failing_fsync)
    with pytest.raises(WriteFailed) as caught:
        write_atomically(target, "interval: 5s\n" * 1000)
    assert "Input/output error" in str(caught.value)
    assert target.read_bytes() == b"interval: 5m\n"
    assert os.listdir(tmp_path) == ["x.yaml"]


def test_removing_a_missing_file_is_not_an_error(tmp_path):
    remove_file(tmp_path / "missing.yaml")
    existing = tmp_path / "x.yaml"
    existing.write_text("a: 1\n")
    remove_file(existing)
    assert not existing.exists()
