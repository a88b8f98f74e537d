"""The file-system leaf (attend.files): the one atomic writer and the one XDG resolver."""

import os
import stat

import pytest

from attend import files
from attend.files import WriteFailed, write_atomically, xdg_home
from attend.peers.mailbox import peers_dir
from attend.spec.layers import layer_paths


def test_a_new_file_gets_0o666_less_the_umask_without_the_umask_ever_changing(tmp_path, monkeypatch):
    old = os.umask(0o027)
    try:
        def no_flip(mask):
            raise AssertionError(f"write_atomically changed the process umask to {mask:o}")

        monkeypatch.setattr(files.os, "umask", no_flip)
        write_atomically(tmp_path / "new.yaml", "a: 1\n")
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == 0o640


def test_a_symlink_at_the_destination_is_replaced_and_its_target_never_written(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs\n")
    outside.chmod(0o600)
    folder = tmp_path / "attend"
    folder.mkdir()
    (folder / "x.yaml").symlink_to(outside)
    write_atomically(folder / "x.yaml", "ours\n")
    assert outside.read_text() == "theirs\n"
    assert not (folder / "x.yaml").is_symlink()
    assert (folder / "x.yaml").read_text() == "ours\n"


def test_an_exclusive_write_refuses_an_existing_name_and_changes_nothing(tmp_path):
    target = tmp_path / "m.json"
    write_atomically(target, "{}", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomically(target, '{"x": 1}', exclusive=True)
    assert target.read_text() == "{}"
    assert os.listdir(tmp_path) == ["m.json"]


def test_an_exclusive_write_refuses_a_dangling_symlink_and_never_creates_its_target(tmp_path):
    target = tmp_path / "m.json"
    target.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(FileExistsError):
        write_atomically(target, "{}", exclusive=True)
    assert not (tmp_path / "elsewhere.json").exists()


def test_an_explicit_mode_is_applied_and_bytes_are_written_as_given(tmp_path):
    target = tmp_path / "ro.yaml"
    write_atomically(target, b"a: 1\r\n", mode=0o444)
    assert target.read_bytes() == b"a: 1\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_folder_that_is_a_file_is_a_write_failed(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(WriteFailed):
        write_atomically(tmp_path / "file" / "x.yaml", "a: 1\n")


@pytest.mark.parametrize(
    ("variable", "default"),
    [("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
     ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")],
)
def test_an_xdg_folder_is_the_absolute_variable_else_its_default_under_home(tmp_path, variable, default):
    assert xdg_home({"HOME": str(tmp_path), variable: "/abs/x"}, variable) == files.Path("/abs/x")
    assert xdg_home({"HOME": str(tmp_path), variable: "relative/x"}, variable) == tmp_path / default
    assert xdg_home({"HOME": str(tmp_path)}, variable) == tmp_path / default


def test_the_peers_folder_and_the_layers_read_the_environment_they_are_given(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/else")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/somewhere/else")
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": "relative"}
    assert peers_dir(env) == tmp_path / ".cache" / "attend" / "peers"
    assert layer_paths(tmp_path, {"HOME": str(tmp_path)}).config_file == tmp_path / ".config" / "attend" / "config.yaml"


def test_a_project_s_run_lock_lies_in_the_state_folder_named_by_its_resolved_path(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    real = tmp_path / "project"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    path = files.run_lock_path(real, env)
    assert path.parent == layer_paths(real, env).state_dir == tmp_path / "state" / "attend"
    assert path.name == f"run-{files.project_hash(real)}.lock" and len(files.project_hash(real)) == 16
    assert files.run_lock_path(tmp_path / "link", env) == path


def test_the_run_lock_s_holder_is_the_pid_written_by_the_process_holding_it(tmp_path):
    from attend.runtime.sessions.runlock import open_lock, try_lock

    path = files.run_lock_path(tmp_path, {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    assert files.run_lock_holder(path) is None  # no file: nobody
    lock = open_lock(path)
    try:
        assert files.run_lock_holder(path) is None  # a file nobody holds
        assert try_lock(lock)
        assert files.run_lock_holder(path) == os.getpid()
    finally:
        lock.close()
    assert files.run_lock_holder(path) is None


def test_a_fifo_at_the_run_lock_s_place_is_read_at_once_as_held_by_nobody(tmp_path):
    import threading

    path = files.run_lock_path(tmp_path, {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    found: list[int | None] = []
    reader = threading.Thread(target=lambda: found.append(files.run_lock_holder(path)), daemon=True)
    reader.start()
    reader.join(10)  # a blocking open of a FIFO without a writer would wait forever
    assert found == [None]


def test_the_bounded_reader_reads_a_regular_file_up_to_its_limit_and_refuses_anything_else(tmp_path):
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 8)
    assert files.read_regular_file(exact, 8) == b"x" * 8
    (tmp_path / "link").symlink_to(exact)
    assert files.read_regular_file(tmp_path / "link", 8) == b"x" * 8
    with pytest.raises(files.FileTooLarge, match="larger than 7 bytes"):
        files.read_regular_file(exact, 7)
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", tmp_path, "/dev/zero"):
        with pytest.raises(files.NotRegularFile, match="not a regular file"):
            files.read_regular_file(path, 8)
    with pytest.raises(FileNotFoundError):
        files.read_regular_file(tmp_path / "missing", 8)
