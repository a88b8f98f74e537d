"""The git sensor's `wake_on`: the files a branch switch, commit, stage or fetch touches, worktrees resolved."""

from __future__ import annotations

from pathlib import Path

from attend.runtime.watching.targets import plan_watches, watch_target
from attend.sensors.git import git_dirs, wake_paths


def test_a_plain_repository_wakes_on_head_index_and_refs_of_its_git_folder(repo) -> None:
    git = repo.path / ".git"
    assert git_dirs(repo.path / "sub" / "dir") == (git, git)
    assert wake_paths(repo.path) == [str(git / "HEAD"), str(git / "index"), str(git / "packed-refs"),
                                     str(git / "refs" / "**")]


def test_a_linked_worktree_wakes_on_its_own_head_and_index_and_the_shared_refs(repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "feature", str(linked))
    assert (linked / ".git").is_file()  # the worktree's .git is a file naming its git directory
    gitdir, common = git_dirs(linked)
    assert gitdir == repo.path / ".git" / "worktrees" / "linked"
    assert common == repo.path / ".git"
    paths = wake_paths(linked)
    assert paths[:2] == [str(gitdir / "HEAD"), str(gitdir / "index")]
    assert paths[2:] == [str(common / "packed-refs"), str(common / "refs" / "**")]
    # A commit in the main worktree moves a shared ref: the linked worktree's sensor hears it too.
    plan = plan_watches({"git": [watch_target(p, linked) for p in paths]})
    assert plan.woken([str(common / "refs" / "heads" / "main")]) == ({"git"}, False)
    assert plan.woken([str(repo.path / ".git" / "HEAD")]) == (set(), False)  # the other worktree's HEAD


def test_a_git_file_without_commondir_is_its_own_common_folder(tmp_path: Path) -> None:
    real = tmp_path / "modules" / "sub"
    real.mkdir(parents=True)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text("gitdir: ../modules/sub\n")
    assert git_dirs(checkout) == (real, real)


def test_outside_a_repository_it_waits_for_a_git_init_in_the_project(tmp_path: Path) -> None:
    paths = wake_paths(tmp_path)
    assert paths[0] == str(tmp_path / ".git" / "HEAD")
    plan = plan_watches({"git": [watch_target(p, tmp_path) for p in paths]})
    assert plan.flat == {tmp_path}
    assert plan.woken([str(tmp_path / ".git")]) == ({"git"}, True)  # git init: watch again, and poll


def test_a_git_file_that_names_nothing_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("not a gitdir line\n")
    assert git_dirs(tmp_path) is None
