"""The GitHub sensors (gh-checks, gh-runs, gh-reviews) against a fake `gh` on PATH: a real process replaying
gh's recorded `--json` answers (tests/sensors/fake_gh.py), in a real git repository whose branch changes.
Each poll goes through the shipped file's triggers (sensor_material.Driver)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from gh_recorded import NO_PULL_REQUEST, NOT_LOGGED_IN, VIEWER, check, comment, pull_request, review, run
from sensor_material import Driver, FakeGh, GitRepo, shipped_sensor

from attend.sensors.base import Focus, SensorUnavailable
from attend.sensors.github import ChecksSensor, ReviewsSensor, RunsSensor, rollup_of
from waiting import exits

CLASSES = {"gh-checks": ChecksSensor, "gh-runs": RunsSensor, "gh-reviews": ReviewsSensor}


@pytest.fixture
def gh(tmp_path: Path) -> FakeGh:
    return FakeGh(tmp_path / "fake-gh")


@pytest.fixture
def feature(tmp_path: Path) -> GitRepo:
    """A repository with a commit on main, checked out on `feature`."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("initial", "README")
    repo.git("switch", "-q", "-c", "feature")
    return repo


def driver(name: str, repo: GitRepo, gh: FakeGh, **overrides) -> Driver:
    """The shipped sensor `name`'s class on `repo`, polling with the fake gh first on PATH."""
    compiled = shipped_sensor(name, repo.path)
    config = {**compiled.sensor.data["crate"], **overrides}
    config.pop("timeout", None)  # read by the crate kind, never passed on
    return Driver(compiled, CLASSES[name](config), Focus(cwd=repo.path, env=gh.env()))


PASSED = [check("lint", "SUCCESS", job=1), check("test (3.12)", "SUCCESS", job=2), check("docs", "SKIPPED", job=3)]
PENDING = [check("lint", "SUCCESS", job=1), check("test (3.12)", "IN_PROGRESS", job=2), check("docs", "QUEUED", job=3)]


# --- gh-checks ---------------------------------------------------------------------------------------------

def test_checks_that_settle_all_passed_are_one_medium_line_not_one_per_check(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", PENDING, exit=8)  # gh exits 8 while a check is pending: data, not a failure
    assert d.poll() == []
    assert d.results[-1]["rollup"] == "pending" and d.results[-1]["counts"] == {"pass": 1, "pending": 2}
    gh.answer("pr checks", PASSED)
    assert d.poll() == [("passed", 3.0, "checks passed on feature: 3 of 3")]
    assert d.poll() == []


def test_failed_checks_are_one_high_line_naming_each_failed_check_with_its_link(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", PENDING, exit=8)
    d.poll()
    gh.answer("pr checks", [check("lint", "FAILURE", job=1), check("test (3.12)", "TIMED_OUT", job=2),
                            check("docs", "SUCCESS", job=3)], exit=1)  # gh exits 1 when one failed: data too
    assert d.poll() == [("failed", 5.0, "checks failed on feature (2 of 3): "
                                        "lint: https://github.com/acme/widgets/actions/runs/1357/job/1; "
                                        "test (3.12): https://github.com/acme/widgets/actions/runs/1357/job/2")]


def test_a_rerun_of_the_checks_settles_again_as_a_new_line(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", PENDING, exit=8)
    d.poll()
    gh.answer("pr checks", [check("lint", "SUCCESS"), check("test (3.12)", "FAILURE", job=2)], exit=1)
    assert [f[0] for f in d.poll()] == ["failed"]
    gh.answer("pr checks", [check("lint", "SUCCESS"), check("test (3.12)", "IN_PROGRESS", job=2)], exit=8)
    assert d.poll() == []
    gh.answer("pr checks", [check("lint", "SUCCESS"), check("test (3.12)", "SUCCESS", job=2, minute=31)])
    assert d.poll() == [("passed", 3.0, "checks passed on feature: 2 of 2")]


def test_a_rerun_finished_between_two_polls_is_still_a_new_line(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", [check("lint", "FAILURE")], exit=1)
    d.poll()
    gh.answer("pr checks", [check("lint", "FAILURE", minute=40)], exit=1)  # failed again, at another time
    assert [f[0] for f in d.poll()] == ["failed"]


def test_the_branch_follows_the_checkout_and_a_switched_to_branch_s_settled_checks_are_not_news(feature, gh):
    feature.git("switch", "-q", "-c", "other")
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", PASSED)
    assert d.poll() == []
    feature.git("switch", "-q", "feature")
    assert d.poll() == []  # the checks feature already had: where it is, not news
    asked = [c["argv"][:3] for c in gh.calls()]
    assert asked == [["pr", "checks", "other"], ["pr", "checks", "feature"]]
    gh.answer("pr checks", [check("lint", "FAILURE")], exit=1)
    assert [f[0] for f in d.poll()] == ["failed"]


def test_the_sensor_wakes_on_head_and_the_remote_tracking_refs(feature, gh):
    d = driver("gh-checks", feature, gh)
    git_dir = feature.path / ".git"
    assert d.sensor.wake_on(d.focus) == [str(git_dir / "HEAD"), str(git_dir / "refs" / "remotes" / "**")]


def test_a_pull_request_without_checks_has_no_rollup_and_no_failure(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", stderr="no checks reported on the 'feature' branch\n", exit=1)
    assert d.poll() == []
    assert d.results[-1]["rollup"] == "none" and d.results[-1]["settled"] == []


@pytest.mark.parametrize(("answer", "words"), [
    ({"stderr": NO_PULL_REQUEST, "exit": 1}, 'gh pr checks: no pull requests found for branch "feature"'),
    ({"stderr": NOT_LOGGED_IN, "exit": 4}, "gh pr checks: To get started with GitHub CLI, please run:  gh auth login "
                                           "Alternatively, populate the GH_TOKEN environment variable"),
    ({"stderr": "none of the git remotes configured for this repository point to a known GitHub host.\n", "exit": 1},
     "none of the git remotes configured for this repository point to a known GitHub host"),
])
def test_what_gh_cannot_answer_is_unavailable_with_gh_s_words(feature, gh, answer, words):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", **answer)
    with pytest.raises(SensorUnavailable) as caught:
        d.sensor.poll(d.focus)
    assert words in str(caught.value)


def test_no_gh_on_path_is_unavailable_saying_so(feature, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    sensor = ChecksSensor({"gh": "gh", "command_timeout": 5})
    with pytest.raises(SensorUnavailable, match="gh is not installed"):
        sensor.poll(Focus(cwd=feature.path, env={**os.environ, "PATH": str(empty)}))


def test_a_gh_past_command_timeout_is_unavailable_and_what_it_started_is_ended(feature, tmp_path):
    pidfile = tmp_path / "grandchild"
    hanging = tmp_path / "hanging-gh"
    hanging.write_text(f"#!{sys.executable}\nimport subprocess, time\n"
                       f"g = subprocess.Popen([{sys.executable!r}, '-c', 'import time; time.sleep(600)'])\n"
                       f"open({str(pidfile)!r}, 'w').write(str(g.pid))\ntime.sleep(600)\n")
    hanging.chmod(0o755)
    sensor = ChecksSensor({"gh": str(hanging), "command_timeout": 3})
    with pytest.raises(SensorUnavailable, match="gh pr checks took longer than 3 s"):
        sensor.poll(Focus(cwd=feature.path, env=dict(os.environ)))
    assert exits(int(pidfile.read_text()))


def test_gh_never_prompts_its_stdin_is_closed_and_prompts_are_disabled(feature, gh):
    d = driver("gh-checks", feature, gh)
    gh.answer("pr checks", PASSED)
    d.poll()
    (call,) = gh.calls()
    assert call["GH_PROMPT_DISABLED"] == "1" and call["stdin_tty"] is False
    assert call["argv"] == ["pr", "checks", "feature", "--json", "name,state,bucket,link,workflow,completedAt"]


def test_a_detached_head_is_unavailable_with_no_gh_call(feature, gh):
    feature.git("switch", "-q", "--detach")
    d = driver("gh-checks", feature, gh)
    with pytest.raises(SensorUnavailable, match="HEAD is detached"):
        d.sensor.poll(d.focus)
    assert gh.calls() == []


def test_the_rollup_reads_buckets_pending_first_then_fail_then_cancel():
    assert rollup_of({}) == "none"
    assert rollup_of({"fail": 1, "pending": 1}) == "pending"
    assert rollup_of({"fail": 1, "cancel": 1, "pass": 3}) == "fail"
    assert rollup_of({"cancel": 1, "pass": 3}) == "cancel"
    assert rollup_of({"pass": 2, "skipping": 1}) == "pass"


# --- gh-runs -----------------------------------------------------------------------------------------------

def test_a_run_that_completes_is_one_line_with_its_conclusion_and_a_failure_is_high(feature, gh):
    head = feature.git("rev-parse", "HEAD")
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", [run(11, "in_progress", sha=head), run(10, "completed", "success", sha="b" * 40)])
    assert d.poll() == []  # the run that had finished before is not news
    gh.answer("run list", [run(11, "completed", "failure", sha=head), run(10, "completed", "success", sha="b" * 40)])
    assert d.poll() == [("failed", 5.0, f"workflow CI failure on feature at {head[:7]}: "
                                        "https://github.com/acme/widgets/actions/runs/11")]
    assert d.results[-1]["completed"][0]["current"] is True  # it ran on the checked-out commit
    assert d.poll() == []
    call = gh.calls()[0]
    assert call["argv"] == ["run", "list", "--branch", "feature", "--limit", "20", "--json",
                            "databaseId,name,status,conclusion,headSha,url,attempt,updatedAt"]


@pytest.mark.parametrize("conclusion", ["failure", "timed_out", "startup_failure", "action_required"])
def test_every_failing_conclusion_is_high(feature, gh, conclusion):
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", [])
    d.poll()
    gh.answer("run list", [run(12, "completed", conclusion)])
    assert [(f[0], f[1]) for f in d.poll()] == [("failed", 5.0)]


def test_a_rerun_is_a_new_key_and_its_end_a_new_line(feature, gh):
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", [run(11, "in_progress")])
    d.poll()
    gh.answer("run list", [run(11, "completed", "failure")])
    assert [f[0] for f in d.poll()] == ["failed"]
    gh.answer("run list", [run(11, "queued", attempt=2)])
    assert d.poll() == []
    gh.answer("run list", [run(11, "completed", "success", attempt=2)])
    assert d.poll() == [("succeeded", 3.0, "workflow CI (attempt 2) succeeded on feature at aaaaaaa")]


def test_a_switch_asks_for_the_new_branch_s_runs_and_its_finished_runs_are_not_news(feature, gh):
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", [run(11, "completed", "success")])
    d.poll()
    feature.git("switch", "-q", "main")
    gh.answer("run list", [run(20 + n, "completed", "failure", branch="main") for n in range(5)])
    assert d.poll() == []
    assert gh.calls()[-1]["argv"][2:4] == ["--branch", "main"]


def test_a_cancelled_run_is_background(feature, gh):
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", [])
    d.poll()
    gh.answer("run list", [run(13, "completed", "cancelled")])
    assert d.poll() == [("other", 1.0, "workflow CI cancelled on feature at aaaaaaa")]


def test_runs_without_a_login_are_unavailable_with_gh_s_words(feature, gh):
    d = driver("gh-runs", feature, gh)
    gh.answer("run list", stderr=NOT_LOGGED_IN, exit=4)
    with pytest.raises(SensorUnavailable, match="gh run list: To get started with GitHub CLI"):
        d.sensor.poll(d.focus)


# --- gh-reviews --------------------------------------------------------------------------------------------

@pytest.fixture
def reviews(feature, gh):
    gh.answer("api user", VIEWER)
    gh.answer("pr view", pull_request(comments=[comment("IC_1", "bob", "An old remark")]))
    d = driver("gh-reviews", feature, gh)
    assert d.poll() == []  # what the pull request already had: not news
    return d


def test_a_new_comment_by_someone_else_is_one_line_with_its_first_line(reviews, gh):
    gh.answer("pr view", pull_request(comments=[
        comment("IC_1", "bob", "An old remark"),
        comment("IC_2", "carol", "\n\nCould you add a test for the cache miss?\nAlso: naming."),
        comment("IC_3", "ada-bot", "Done in 1a2b3c4.", mine=True),  # the session's own: never told
    ]))
    assert reviews.poll() == [("comment", 3.0, "carol commented on #7: Could you add a test for the cache miss?")]
    assert reviews.poll() == []


def test_changes_requested_is_one_high_line_with_the_reviewer_and_the_decision_line_superseded(reviews, gh):
    changes = review("PRR_1", "carol", "CHANGES_REQUESTED", "Please split this PR.\nDetails inline.")
    gh.answer("pr view", pull_request(decision="CHANGES_REQUESTED", reviews=[changes],
                                      comments=[comment("IC_1", "bob", "An old remark")]))
    assert reviews.poll() == [("changes-requested", 5.0, "carol requested changes on #7: Please split this PR.")]


def test_an_approval_is_a_medium_line(reviews, gh):
    gh.answer("pr view", pull_request(decision="APPROVED", reviews=[review("PRR_2", "dan", "APPROVED")],
                                      comments=[comment("IC_1", "bob", "An old remark")]))
    assert reviews.poll() == [("approved", 3.0, "dan approved #7")]


def test_the_review_decision_alone_is_a_line_naming_who_decided(reviews, gh):
    # a review from before the sensor first saw the pull request, and the decision turning without a new one
    gh.answer("pr view", pull_request(decision="APPROVED", latest=[review("PRR_0", "erin", "APPROVED")],
                                      comments=[comment("IC_1", "bob", "An old remark")]))
    assert reviews.poll() == [("decision-approved", 3.0, "#7 is approved (by erin)")]


def test_the_session_s_own_review_is_never_told(reviews, gh):
    gh.answer("pr view", pull_request(reviews=[review("PRR_3", "ada-bot", "COMMENTED", "Replying inline.")],
                                      comments=[comment("IC_1", "bob", "An old remark")]))
    assert reviews.poll() == []
    assert [c["argv"][:2] for c in gh.calls()].count(["api", "user"]) == 1  # gh's user is asked once


def test_merge_conflicts_are_one_line_and_github_computing_the_state_again_is_not_news(reviews, gh):
    old = [comment("IC_1", "bob", "An old remark")]
    gh.answer("pr view", pull_request(merge_state="DIRTY", comments=old))
    assert reviews.poll() == [("conflicts", 3.0, "#7 has merge conflicts with main")]
    gh.answer("pr view", pull_request(merge_state="UNKNOWN", comments=old))
    assert reviews.poll() == []
    gh.answer("pr view", pull_request(merge_state="DIRTY", comments=old))
    assert reviews.poll() == []
    gh.answer("pr view", pull_request(merge_state="CLEAN", comments=old))
    assert reviews.poll() == []
    gh.answer("pr view", pull_request(merge_state="DIRTY", comments=old))
    assert reviews.poll() == [("conflicts", 3.0, "#7 has merge conflicts with main")]  # conflicts again: news


def test_a_merged_pull_request_is_a_line(reviews, gh):
    gh.answer("pr view", pull_request(state="MERGED", merge_state="UNKNOWN",
                                      comments=[comment("IC_1", "bob", "An old remark")]))
    assert reviews.poll() == [("merged", 3.0, "#7 was merged into main")]


def test_no_pull_request_for_the_branch_is_unavailable_with_gh_s_words(feature, gh):
    gh.answer("api user", VIEWER)
    gh.answer("pr view", stderr=NO_PULL_REQUEST, exit=1)
    d = driver("gh-reviews", feature, gh)
    with pytest.raises(SensorUnavailable, match='gh pr view: no pull requests found for branch "feature"'):
        d.sensor.poll(d.focus)


def test_switching_to_another_branch_s_pull_request_tells_nothing_of_its_history(reviews, feature, gh):
    feature.git("switch", "-q", "-c", "other")
    gh.answer("pr view", pull_request(number=8, decision="APPROVED", merge_state="DIRTY",
                                      reviews=[review("PRR_9", "dan", "APPROVED")],
                                      comments=[comment("IC_8", "carol", "Looks fine", number=8)]))
    assert reviews.poll() == []
    assert gh.calls()[-1]["argv"][:3] == ["pr", "view", "other"]


# --- through the CLI: off by default, one settings set, the unavailable state --------------------------------

@pytest.mark.parametrize("name", ["gh-checks", "gh-runs", "gh-reviews"])
def test_each_ships_off_and_one_settings_set_turns_it_on_then_no_pull_request_is_unavailable(
        home, tmp_path, monkeypatch, name):
    repo = GitRepo(home.project)
    repo.commit("initial", "README")
    repo.git("switch", "-q", "-c", "feature")
    gh = FakeGh(tmp_path / "fake-gh")
    gh.answer("api user", VIEWER)
    for command in ("pr checks", "pr view"):
        gh.answer(command, stderr=NO_PULL_REQUEST, exit=1)
    gh.answer("run list", stderr=NOT_LOGGED_IN, exit=4)
    monkeypatch.setenv("PATH", gh.env()["PATH"])
    assert "disabled" in home.attend("sensors").stdout.split(f"\n{name} ")[1].split("\n")[0]
    assert home.attend("settings", "set", f"attend.sensors.{name}.enabled", "true").returncode == 0
    done = home.attend("sensors", "poll", name)
    assert done.returncode == 1
    words = "gh run list: To get started with GitHub CLI" if name == "gh-runs" else "no pull requests found"
    assert f"sensor {name}: unavailable" in done.stdout and words in done.stdout, done.stdout
    assert "trigger state untouched" in done.stdout
