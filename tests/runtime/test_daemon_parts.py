"""Pieces of the daemon that need no running loop: the shipped projection and the config it reads."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from attend.runtime.daemon import Daemon, project_shipped
from attend.runtime.governor import GovernorParams


def test_the_shipped_files_are_projected_read_only_and_kept_in_step(tmp_path: Path) -> None:
    shipped, projection = tmp_path / "shipped", tmp_path / "projection"
    shipped.mkdir()
    (shipped / "git.yaml").write_text("spec: 1\n")
    (shipped / "old.yaml").write_text("spec: 1\n")
    project_shipped(shipped, projection)
    target = projection / "git.yaml"
    assert target.read_text() == "spec: 1\n"
    assert not target.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    (shipped / "git.yaml").write_text("spec: 1\nname: git\n")
    (shipped / "old.yaml").unlink()
    project_shipped(shipped, projection)
    assert target.read_text() == "spec: 1\nname: git\n"
    assert sorted(p.name for p in projection.iterdir()) == ["git.yaml"]


def test_the_projection_replaces_a_planted_symlink_and_never_writes_or_chmods_its_target(tmp_path: Path) -> None:
    shipped, projection = tmp_path / "shipped", tmp_path / "projection"
    shipped.mkdir()
    projection.mkdir()
    (shipped / "git.yaml").write_text("spec: 1\n")
    outside = tmp_path / "outside.yaml"
    outside.write_text("theirs\n")
    outside.chmod(0o600)
    (projection / "git.yaml").symlink_to(outside)
    (projection / "gone.yaml").symlink_to(outside)
    project_shipped(shipped, projection)
    assert outside.read_text() == "theirs\n" and stat.S_IMODE(outside.stat().st_mode) == 0o600
    assert not (projection / "git.yaml").is_symlink() and (projection / "git.yaml").read_text() == "spec: 1\n"
    assert sorted(p.name for p in projection.iterdir()) == ["git.yaml"]


def _daemon(home) -> Daemon:
    return Daemon(home.project, env=dict(os.environ), stdout=io.StringIO(), stderr=io.StringIO())


def test_engagement_and_governor_parameters_come_from_config_yaml(quiet_home) -> None:
    quiet_home.config_file.write_text(
        "engagement: {absolute_refractory: 5s}\ngovernor:\n  event: {cooldown: 1, limit: 9, window: 30s}\n"
    )
    daemon = _daemon(quiet_home)
    try:
        daemon._configure()
        assert daemon.discloser.engagement.absolute_refractory == 5.0
        assert daemon.discloser.governors["event"].params == GovernorParams(1.0, 9, 30.0)
    finally:
        daemon.store.close()


def test_a_bad_engagement_value_keeps_the_defaults_and_says_so(quiet_home) -> None:
    quiet_home.config_file.write_text("engagement: {absolute_refractory: soon}\n")
    daemon = _daemon(quiet_home)
    try:
        daemon._configure()
        assert daemon.discloser.engagement.absolute_refractory == 60.0
        logged = daemon.stderr.getvalue()
        assert "config.yaml:1:35: error: [bad-duration] `engagement.absolute_refractory` 'soon'" in logged
        assert "the default is used" in logged
    finally:
        daemon.store.close()


def test_a_stopped_message_lane_sensor_without_author_discloses_on_the_event_lane(quiet_home) -> None:
    quiet_home.write_user_sensor(
        "chat",
        "spec: 1\nname: chat\nkind: command\nenabled: false\nlane: message\nthreshold: 4\n"
        "command: {argv: [echo, '[]']}\ntriggers:\n  new: {path: '$[*]', key: id, on: added}\n",
    )
    daemon = _daemon(quiet_home)
    try:
        from attend.spec import load_set

        daemon.known = dict(load_set(quiet_home.project).sensors)
        terms = daemon._terms("chat")
        assert terms is not None and (terms.lane, terms.threshold) == ("event", 4.0)
    finally:
        daemon.store.close()


CALM = "spec: 1\nname: {name}\nkind: command\ninterval: 5m\ncommand: {{argv: [echo, '{{}}']}}\n"


async def test_an_unforeseen_error_loading_one_sensor_marks_it_invalid_and_the_others_run(quiet_home, monkeypatch):
    import trio

    from attend.runtime import daemon as daemon_module

    for name in ("boom", "calm"):
        quiet_home.write_user_sensor(name, CALM.format(name=name))
    real = daemon_module.CadenceParams.of

    def of(fields):  # stands for a bug no test foresaw, in one sensor only
        if fields.name == "boom":
            raise OverflowError("int too large to convert to float")
        return real(fields)

    monkeypatch.setattr(daemon_module.CadenceParams, "of", staticmethod(of))
    daemon = _daemon(quiet_home)
    try:
        async with trio.open_nursery() as nursery:
            daemon._nursery = nursery
            await daemon.reload()
            assert "calm" in daemon.running and "boom" not in daemon.running
            status = daemon.store.statuses()["boom"]
            assert status.state == "invalid"
            assert "OverflowError" in status.message and "bug in attend" in status.message
            nursery.cancel_scope.cancel()
    finally:
        daemon.store.close()
