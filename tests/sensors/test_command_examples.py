"""The shipped command examples run through the real command kind: fake `gh` and `systemctl` on
PATH, real Downloads folders, the real findmnt."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from sensor_material import shipped_sensor

from attend.runtime.kinds import PollContext
from attend.runtime.kinds.command import poll
from attend.spec import layer_paths


def fake_tool(folder: Path, name: str) -> None:
    """A stand-in for `name` at the network edge: prints $FAKE_OUTPUT's file, or fails like the real tool."""
    path = folder / name
    path.write_text(
        "#!/bin/sh\n"
        'if [ ! -f "$FAKE_OUTPUT" ]; then echo "To get started with GitHub CLI, please run:  gh auth login" >&2; exit 4; fi\n'
        'cat "$FAKE_OUTPUT"\n'
    )
    path.chmod(0o755)


class Example:
    """A shipped command example, polled for real and stepped through its triggers."""

    def __init__(self, name: str, project: Path, env: dict[str, str]) -> None:
        self.compiled = shipped_sensor(name, project)
        self.ctx = PollContext(project_dir=project, env=env, paths=layer_paths(project, env))
        self.states = None

    async def poll(self):
        outcome = await poll(self.compiled, self.ctx)
        if not outcome.ok:
            return outcome, []
        step = self.compiled.step(self.states, outcome.result)
        self.states = step.states
        return outcome, sorted((f.trigger, f.magnitude, f.description) for f in step.fires)


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    return folder


def env_with(tools: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", **extra}


def notification(ident: str, reason: str, title: str) -> dict:
    return {"id": ident, "reason": reason, "unread": True, "subject": {"title": title, "type": "Issue"},
            "repository": {"full_name": "acme/api"}}


async def test_gh_notifications_fire_once_each_tiered_by_reason(project, tools, tmp_path):
    fake_tool(tools, "gh")
    out = tmp_path / "notifications.json"
    out.write_text(json.dumps([notification("1", "comment", "Old")]))
    example = Example("gh-notifications", project, env_with(tools, FAKE_OUTPUT=str(out)))
    assert (await example.poll())[1] == []
    out.write_text(json.dumps([notification("1", "comment", "Old"), notification("2", "review_requested", "Add cache"),
                               notification("3", "comment", "Typo")]))
    assert (await example.poll())[1] == [
        ("comment", 0.5, "comment: Typo (acme/api)"),
        ("review-requested", 3.0, "review requested: Add cache (acme/api)"),
    ]
    assert (await example.poll())[1] == []


async def test_gh_without_a_login_is_a_recorded_failure_and_changes_nothing(project, tools, tmp_path):
    fake_tool(tools, "gh")
    example = Example("gh-notifications", project, env_with(tools, FAKE_OUTPUT=str(tmp_path / "absent")))
    outcome, fires = await example.poll()
    assert (outcome.state, fires) == ("exit", [])
    assert "gh auth login" in outcome.message


async def test_downloads_are_counted_in_tiers_from_a_real_folder(project, tmp_path):
    home = tmp_path / "home"
    downloads = home / "Downloads"
    downloads.mkdir(parents=True)
    old = downloads / "old.pdf"
    old.write_text("x")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    example = Example("xdg-downloads", project, {**os.environ, "HOME": str(home)})
    example.ctx.env.pop("XDG_DOWNLOAD_DIR", None)
    outcome, fires = await example.poll()
    assert (outcome.result, fires) == ({"recent": 0}, [])
    (downloads / "a.zip").write_text("a")
    assert (await example.poll())[1] == [("one", 0.5, "a new file in Downloads")]
    for name in ("b", "c", "d"):
        (downloads / f"{name}.zip").write_text(name)
    (downloads / "folder").mkdir()
    assert (await example.poll())[1] == [("several", 2.0, "4 new files in Downloads in the last 10 minutes")]


async def test_downloads_honours_xdg_download_dir_and_reports_a_missing_folder(project, tmp_path):
    target = tmp_path / "Herunterladen"
    example = Example("xdg-downloads", project, {**os.environ, "XDG_DOWNLOAD_DIR": str(target)})
    outcome, _ = await example.poll()
    assert (outcome.state, outcome.message) == ("exit", f"exit code 1: no folder {target}")
    target.mkdir()
    (target / "file.txt").write_text("x")
    outcome, _ = await example.poll()
    assert outcome.result == {"recent": 1}


async def test_systemd_reports_a_unit_leaving_active(project, tools, tmp_path):
    fake_tool(tools, "systemctl")
    out = tmp_path / "units.json"
    units = [{"unit": "backup.service", "load": "loaded", "active": "active", "sub": "running", "description": "B"}]
    out.write_text(json.dumps(units))
    example = Example("systemd", project, env_with(tools, FAKE_OUTPUT=str(out)))
    await example.poll()
    units[0].update(active="failed", sub="failed")
    out.write_text(json.dumps(units))
    assert (await example.poll())[1] == [("failed", 2.0, "backup.service left active: now failed (failed)")]


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt (util-linux) is not installed")
async def test_disk_reads_the_real_filesystems_through_findmnt(project):
    example = Example("disk", project, dict(os.environ))
    outcome, fires = await example.poll()
    assert outcome.ok, outcome.message
    root = [fs for fs in outcome.result["filesystems"] if fs["target"] == "/"]
    assert root and root[0]["use%"].endswith("%")
    assert fires == []  # the first poll is a baseline


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt (util-linux) is not installed")
async def test_disk_lists_a_mount_point_mounted_twice_once_and_warns_about_no_repeated_key(project, tools, tmp_path):
    # The real findmnt, reading a mount table in which `/` is mounted three times (as containers often
    # list /dev/shm twice): the sensor must not warn about its machine on every poll.
    table = tmp_path / "mountinfo"
    table.write_text("".join(f"{n} {n - 1} 8:{n} / / rw - ext4 /dev/{name} rw\n"
                             for n, name in enumerate(("first", "second", "top"), start=1)))
    wrapper = tools / "findmnt"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("findmnt")} --tab-file "$FINDMNT_TABLE" "$@"\n')
    wrapper.chmod(0o755)
    example = Example("disk", project, env_with(tools, FINDMNT_TABLE=str(table)))
    outcome = await poll(example.compiled, example.ctx)
    assert outcome.ok, outcome.message
    assert [(fs["target"], fs["source"]) for fs in outcome.result["filesystems"]] == [("/", "/dev/top")]
    assert example.compiled.step(None, outcome.result).warnings == []


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt (util-linux) is not installed")
async def test_disk_polls_this_machine_without_a_warning(project):
    example = Example("disk", project, dict(os.environ))
    outcome = await poll(example.compiled, example.ctx)
    assert outcome.ok, outcome.message
    assert example.compiled.step(None, outcome.result).warnings == []


def test_every_command_example_ships_disabled(project):
    for name in ("xdg-downloads", "gh-notifications", "disk", "systemd"):
        assert shipped_sensor(name, project).sensor.enabled is False, name
