"""gh-checks end to end: turned on with one `settings set`, the real daemon polls a fake `gh` on PATH (a real
process replaying recorded answers from a file), and when the recorded answer changes from pending to all
passed between two polls, the daemon prints the one settle line on stdout, and nothing more."""

from __future__ import annotations

import pytest
from gh_recorded import check
from sensor_material import FakeGh, GitRepo
from tests.runtime.daemon_rig import DaemonProcess, caught_up, last_poll, query

from waiting import PATIENCE, wait_until


@pytest.mark.slow
def test_the_daemon_prints_one_line_when_the_recorded_checks_settle(home, tmp_path):
    home.quiet()
    repo = GitRepo(home.project)
    repo.commit("initial", "README")
    repo.git("switch", "-q", "-c", "feature")
    for key, value in (("enabled", "true"), ("min_interval", "500ms"), ("interval", "1s")):
        done = home.attend("settings", "set", f"attend.sensors.gh-checks.{key}", value)
        assert done.returncode == 0, done.stderr
    gh = FakeGh(tmp_path / "fake-gh")
    gh.answer("pr checks", [check("lint", "SUCCESS", job=1), check("test", "IN_PROGRESS", job=2)], exit=8)

    daemon = DaemonProcess(home, env={"ATTEND_SESSION": "s1", "PATH": gh.env(home.env())["PATH"]})
    try:
        # A poll saw the checks pending (gh exited 8): the baseline, recorded without a failure.
        wait_until(lambda: gh.calls() and last_poll(home) > 0, PATIENCE, what="a poll of the pending checks")
        assert daemon.stdout == []
        gh.answer("pr checks", [check("lint", "SUCCESS", job=1), check("test", "SUCCESS", job=2)])
        daemon.wait_for(lambda lines: len(lines) >= 1)
        caught_up(home, "s1")  # one more poll of the settled checks, printed to the end: no second line
        assert query(home, "SELECT description FROM pending WHERE sensor = 'gh-checks'") == []  # nor one held back
    finally:
        daemon.stop()
    assert daemon.stdout == ["[attend sensor=gh-checks priority=medium] checks passed on feature: 2 of 2"], daemon.stderr
    assert all(call["argv"][:3] == ["pr", "checks", "feature"] for call in gh.calls())
