"""`attend cleanup`: the state of projects whose folder is gone goes (store rows, state files, peers tray),
never by age; `--all` adds stopped projects' state; a running project and anything outside attend's folders
(a symlink planted inside them included) is never touched. Real store, real files, the CLI in-process."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from tests.conftest import run_in_process

from attend.files import project_hash, run_lock_path, scope_for
from attend.peers.mailbox import Mailbox, Message, peers_dir
from attend.runtime.sessions.runlock import open_lock, try_lock
from attend.runtime.store import Store, default_db_path


class Projects:
    """Three projects of one home, each with real state made by the CLI: `gone` (its folder removed after),
    `stopped` and `running` (its run lock held by this test, as a poller holds it)."""

    def __init__(self, home, tmp_path: Path) -> None:
        self.home = home
        self.root = tmp_path / "work"
        self.paths = {name: self.root / name for name in ("gone", "stopped", "running")}
        for name, path in self.paths.items():
            path.mkdir(parents=True)
            self.attend(path, "sensors", "shelve", "git", "--for", "1h", "--reason", f"{name} is noisy")
            self.attend(path, "sensors", "fire", "disk", "--commit", "--input", "-", input=json.dumps(
                {"filesystems": [{"target": "/", "source": "/dev/sda1", "use%": "98%", "avail": 1}]}))
            self.attend(path, "drain", "--format", "hook", "--session", f"s-{name}",
                        input=json.dumps({"hook_event_name": "Stop", "session_id": f"s-{name}"}))
            mailbox = Mailbox(peers_dir(home.env()))
            mailbox.post(Message(mailbox.new_id(), "other", "session", "/elsewhere", str(path.resolve()), None, None,
                                 f"hello {name}", time.time()))
            (self.state / f"run-{project_hash(path)}.log").write_text("attend: started\n")
        self.scopes = {name: scope_for(path) for name, path in self.paths.items()}
        self.lock = open_lock(run_lock_path(self.paths["running"], home.env()))
        assert try_lock(self.lock)

    @property
    def state(self) -> Path:
        return self.home.state / "attend"

    def attend(self, cwd: Path, *args: str, input: str | None = None):
        done = run_in_process(list(args), env=self.home.env(), cwd=cwd, input=input)
        assert done.returncode in (0, 1), done.stderr  # a fire's line, a drain with nothing: both fine here
        return done

    def cleanup(self, *args: str):
        done = run_in_process(["cleanup", *args], env=self.home.env(), cwd=self.home.project)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return done

    def rows(self) -> dict[str, dict[str, int]]:
        with Store(default_db_path(self.state)) as store:
            return store.project_rows()

    def tray(self, name: str) -> Path:
        return peers_dir(self.home.env()) / f"p-{project_hash(self.paths[name])}"

    def close(self) -> None:
        self.lock.close()


@pytest.fixture
def projects(home, tmp_path):
    found = Projects(home, tmp_path)
    yield found
    found.close()


def test_a_gone_projects_rows_files_and_tray_go_and_the_others_stay(projects) -> None:
    before = projects.rows()
    assert {"trigger_state", "shelves", "journal", "sessions"} <= set(before[projects.scopes["gone"]])
    shutil.rmtree(projects.paths["gone"])
    out = projects.cleanup()
    gone = projects.scopes["gone"]
    assert f"removed gone {gone}: " in out.stdout and "journal rows" in out.stdout and "peers tray" in out.stdout
    assert f"kept 1 running project (a poller or a live session): {projects.scopes['running']}" in out.stdout
    assert f"kept 1 stopped project (attend cleanup --all removes their state too): {projects.scopes['stopped']}" \
        in out.stdout
    after = projects.rows()
    assert gone not in after
    assert after[projects.scopes["stopped"]] == before[projects.scopes["stopped"]]
    assert after[projects.scopes["running"]] == before[projects.scopes["running"]]
    assert not (projects.state / f"run-{project_hash(gone)}.log").exists()
    assert (projects.state / f"run-{project_hash(projects.paths['stopped'])}.log").exists()
    assert not projects.tray("gone").exists() and projects.tray("stopped").is_dir()
    again = projects.cleanup()
    assert "nothing to clean up" in again.stdout


def test_dry_run_lists_what_would_go_and_removes_nothing(projects) -> None:
    shutil.rmtree(projects.paths["gone"])
    before = projects.rows()
    out = projects.cleanup("--dry-run")
    assert f"would remove gone {projects.scopes['gone']}: " in out.stdout
    assert projects.rows() == before and projects.tray("gone").is_dir()
    found = json.loads(projects.cleanup("--dry-run", "--all", "--json").stdout)
    by = {p["project"]: p for p in found["projects"]}
    assert {name: by[scope]["status"] for name, scope in projects.scopes.items()} == {
        "gone": "gone", "stopped": "stopped", "running": "running"}
    assert by[projects.scopes["gone"]]["tray"]["messages"] == 1 and by[projects.scopes["stopped"]]["tray"] is None
    assert not any(p["removed"] for p in found["projects"]) and projects.rows() == before


def test_all_adds_stopped_projects_state_but_keeps_their_mail_and_never_touches_a_running_one(projects) -> None:
    before = projects.rows()
    out = projects.cleanup("--all")
    assert f"removed stopped {projects.scopes['stopped']}: " in out.stdout
    after = projects.rows()
    assert projects.scopes["stopped"] not in after and projects.scopes["gone"] not in after
    assert after[projects.scopes["running"]] == before[projects.scopes["running"]]
    assert projects.tray("stopped").is_dir()  # mail waits for the project's next session
    assert run_lock_path(projects.paths["running"], projects.home.env()).exists()


def test_a_gone_project_that_still_runs_is_left_whole(projects) -> None:
    shutil.rmtree(projects.paths["running"])  # its poller holds the lock until it notices
    before = projects.rows()
    out = projects.cleanup()
    assert "kept 1 running project" in out.stdout and projects.scopes["running"] in out.stdout
    assert projects.rows()[projects.scopes["running"]] == before[projects.scopes["running"]]


def test_symlinks_planted_in_attends_folders_are_never_followed_out(projects, tmp_path) -> None:
    shutil.rmtree(projects.paths["gone"])
    outside = tmp_path / "outside"
    outside.mkdir()
    precious = outside / "precious.log"
    precious.write_text("keep me\n")
    hashed = project_hash(projects.paths["gone"])
    # In the state folder: the gone project's run log replaced by a link out, a doorbell lock that is a link.
    log = projects.state / f"run-{hashed}.log"
    log.unlink()
    log.symlink_to(precious)
    (projects.state / f"doorbell-{hashed}-s-gone.lock").symlink_to(precious)
    # In the peers folder: a tray that is a link to a folder outside holding a marker of a gone project and
    # a message file; and in the gone project's real tray, a message-named link to a file outside.
    elsewhere = outside / "tray"
    elsewhere.mkdir()
    (elsewhere / ".project").write_text(str(tmp_path / "never-existed"))
    (elsewhere / "1764565200000-abcdef.json").write_text("{}")
    (peers_dir(projects.home.env()) / "p-0123456789abcdef").symlink_to(elsewhere)
    (projects.tray("gone") / "1764565200000-000001.json").symlink_to(precious)
    out = projects.cleanup()
    assert f"removed gone {projects.scopes['gone']}" in out.stdout
    assert precious.read_text() == "keep me\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == [".project", "1764565200000-abcdef.json"]
    assert log.is_symlink() and (projects.state / f"doorbell-{hashed}-s-gone.lock").is_symlink()
    # The tray's own message went; the planted link (not attend's) stays, so the folder stays with its marker.
    assert sorted(p.name for p in projects.tray("gone").iterdir()) == [".project", "1764565200000-000001.json"]
    assert projects.scopes["gone"] not in projects.rows()


def test_a_run_lock_that_is_a_symlink_leaves_the_project_and_what_it_points_to_alone(projects, tmp_path) -> None:
    shutil.rmtree(projects.paths["gone"])
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    lock = run_lock_path(projects.paths["gone"], projects.home.env())
    lock.symlink_to(precious)
    out = projects.cleanup()
    assert f"left gone {projects.scopes['gone']}: its run lock {lock} cannot be taken" in out.stdout
    assert precious.read_text() == "keep me\n" and lock.is_symlink()
    assert projects.scopes["gone"] in projects.rows()
