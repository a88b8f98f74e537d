"""The git sensor against a real repository whose branch, commits, files and upstream change."""

from __future__ import annotations

import json
import os
import sys

import pytest
from sensor_material import SHIPPED, GitRepo

from attend.sensors.base import Focus, SensorUnavailable
from attend.sensors.git import GIT_ENV_OVERRIDES, GitSensor, describe_change, parse_porcelain_v2
from waiting import exits


def test_the_first_poll_is_a_baseline_even_in_a_dirty_tree(drive, repo):
    repo.write("scratch.txt", "x")
    d = drive("git", GitSensor, repo.path)
    assert d.poll() == []
    assert d.results[0]["dirty"] == [{"path": "scratch.txt", "status": "??", "change": "untracked"}]


def test_new_dirty_files_fire_once_each_at_background_magnitude(drive, repo):
    d = drive("git", GitSensor, repo.path)
    d.poll()
    repo.write("README", "changed\n")
    repo.write("new.txt", "new\n")
    assert d.poll() == [("new-dirty-file", 0.5, "modified: README"), ("new-dirty-file", 0.5, "untracked: new.txt")]
    assert d.poll() == []


def test_a_commit_fires_new_commit_and_the_clean_tree(drive, repo):
    d = drive("git", GitSensor, repo.path)
    repo.write("a.txt", "a")
    d.poll()
    sha = repo.commit("add a", "a.txt")
    fires = d.poll()
    assert ("new-commit", 1.0, f"new commit {sha[:7]} by Ada: add a") in fires
    assert ("tree-clean", 1.0, "working tree clean on main") in fires


def test_several_commits_between_polls_fire_one_line_each_oldest_first(drive, repo):
    d = drive("git", GitSensor, repo.path)
    d.poll()
    first = repo.commit("one", "1.txt")
    second = repo.commit("two", "2.txt")
    d.poll()
    assert [c["sha"] for c in d.results[-1]["commits"]] == [first, second]


def test_a_branch_switch_fires_branch_changed_and_lists_no_commits_as_new(drive, repo):
    repo.git("switch", "-q", "-c", "other")
    repo.commit("on other", "o.txt")
    repo.git("switch", "-q", "main")
    d = drive("git", GitSensor, repo.path)
    d.poll()
    repo.git("switch", "-q", "other")
    assert d.poll() == [("branch-changed", 2.0, "branch changed: main → other")]
    assert d.results[-1]["commits"] == []


def test_an_upstream_that_moves_fires_and_being_ahead_fires_once(drive, repo, tmp_path):
    bare = tmp_path / "up.git"
    repo.git("init", "-q", "--bare", str(bare))
    repo.git("remote", "add", "origin", str(bare))
    repo.git("push", "-q", "-u", "origin", "main")
    d = drive("git", GitSensor, repo.path)
    d.poll()
    repo.commit("local work", "w.txt")
    fires = d.poll()
    assert ("ahead-of-upstream", 1.0, "ahead of origin/main: 1 commit(s) not pushed") in fires
    repo.commit("more local work", "w2.txt")
    assert [f[0] for f in d.poll()] == ["new-commit"]

    other = GitRepo(tmp_path / "other")
    other.git("remote", "add", "origin", str(bare))
    other.git("fetch", "-q", "origin")
    other.git("reset", "-q", "--hard", "origin/main")
    remote_sha = other.commit("remote work", "r.txt")
    other.git("push", "-q", "origin", "HEAD:main")
    old = d.results[-1]["upstream"][0]["short"]
    repo.git("fetch", "-q", "origin")
    assert d.poll() == [("upstream-moved", 3.0, f"upstream origin/main moved: {old} → {remote_sha[:7]}")]
    assert d.results[-1]["behind"] == 1


def test_outside_a_repository_the_sensor_is_unavailable_not_broken(tmp_path):
    sensor = GitSensor({"dirty_limit": 5, "commit_limit": 5, "command_timeout": 5})
    with pytest.raises(SensorUnavailable, match="no git work tree"):
        sensor.poll(Focus(cwd=tmp_path))


def fake_git(tmp_path, body: str) -> dict[str, str]:
    """An environment whose PATH finds only a `git` that runs `body` (Python; `sys.argv[1:]` is git's argv)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text(f"#!{sys.executable}\nimport os, subprocess, sys, time\n{body}")
    git.chmod(0o755)
    return {"PATH": str(bin_dir), "ATTEND_TEST_MARK": "stated"}


def test_a_git_past_command_timeout_is_unavailable_and_what_it_started_is_ended(tmp_path):
    pidfile = tmp_path / "grandchild"
    env = fake_git(tmp_path, f"g = subprocess.Popen([{sys.executable!r}, '-c', 'import time; time.sleep(600)'])\n"
                             f"open({str(pidfile)!r}, 'w').write(str(g.pid))\ntime.sleep(600)\n")
    sensor = GitSensor({"dirty_limit": 5, "commit_limit": 5, "command_timeout": 3})
    with pytest.raises(SensorUnavailable, match="git status took longer than 3 s"):
        sensor.poll(Focus(cwd=tmp_path, env=env))
    assert exits(int(pidfile.read_text()))


def test_git_runs_in_the_polls_environment_and_no_other(tmp_path):
    seen = tmp_path / "env.json"
    env = fake_git(tmp_path, f"import json\njson.dump(dict(os.environ), open({str(seen)!r}, 'w'))\nsys.exit(1)\n")
    with pytest.raises(SensorUnavailable, match="no git work tree"):
        GitSensor({"dirty_limit": 5, "commit_limit": 5, "command_timeout": 5}).poll(Focus(cwd=tmp_path, env=env))
    got = json.loads(seen.read_text())
    got.pop("LC_CTYPE", None)  # Python's own locale coercion (PEP 538) in the fake git, not attend's
    assert got == {**env, **GIT_ENV_OVERRIDES}


def test_a_poll_never_rewrites_the_index(repo):
    # Touching a tracked file makes a plain `git status` refresh and rewrite .git/index under
    # index.lock; with GIT_OPTIONAL_LOCKS=0 the index stays as it is.
    index = repo.path / ".git" / "index"
    before = index.stat().st_mtime_ns
    readme = repo.path / "README"
    os.utime(readme, ns=(before + 5_000_000_000, before + 5_000_000_000))
    GitSensor({"dirty_limit": 5, "commit_limit": 5, "command_timeout": 5}).poll(Focus(cwd=repo.path))
    assert index.stat().st_mtime_ns == before


def test_exported_state_lets_a_new_instance_report_commits_made_while_it_was_down(repo):
    config = {"dirty_limit": 5, "commit_limit": 5, "command_timeout": 5}
    first = GitSensor(config)
    first.poll(Focus(cwd=repo.path))
    saved = first.export_state()
    sha = repo.commit("while down", "d.txt")
    second = GitSensor(config)
    second.import_state(saved)
    assert [c["sha"] for c in second.poll(Focus(cwd=repo.path))["commits"]] == [sha]


def test_the_dirty_list_is_capped_but_the_count_is_not(repo):
    for i in range(7):
        repo.write(f"f{i}.txt", "x")
    result = GitSensor({"dirty_limit": 3, "commit_limit": 5, "command_timeout": 5}).poll(Focus(cwd=repo.path))
    assert [d["path"] for d in result["dirty"]] == ["f0.txt", "f1.txt", "f2.txt"]
    assert result["dirty_count"] == 7


def test_porcelain_parsing_handles_renames_conflict_words_and_the_initial_commit(tmp_path):
    r = GitRepo(tmp_path / "fresh")
    r.write("a b.txt", "x")
    snap = parse_porcelain_v2(r.git("status", "--porcelain=v2", "--branch", "-z") + "\0")
    assert snap.head == "" and snap.branch == "main" and snap.dirty == (("a b.txt", "??"),)
    r.commit("first")
    r.git("mv", "a b.txt", "c d.txt")
    text = r.git("status", "--porcelain=v2", "--branch", "-z")
    assert parse_porcelain_v2(text).dirty == (("c d.txt", "R."),)
    assert describe_change("R.") == "renamed"
    assert describe_change("UU") == "conflicted"
    assert describe_change(".D") == "deleted"


def test_a_missing_crate_field_is_a_config_error_naming_it():
    from attend.sensors.base import SensorConfigError

    with pytest.raises(SensorConfigError, match="commit_limit"):
        GitSensor({"dirty_limit": 5, "command_timeout": 5})
    with pytest.raises(SensorConfigError, match="dirty_limit"):
        GitSensor({"dirty_limit": "many", "commit_limit": 5, "command_timeout": 5})


def test_the_shipped_file_says_why_git_stays_compiled():
    text = (SHIPPED / "git.yaml").read_text()
    assert "Why compiled and not a command file" in text


def test_a_state_saved_in_another_folder_lists_no_commits_as_new(repo, tmp_path):
    config = {"dirty_limit": 5, "commit_limit": 5, "command_timeout": 5}
    clone = tmp_path / "clone"
    repo.git("clone", "-q", str(repo.path), str(clone))
    first = GitSensor(config)
    first.poll(Focus(cwd=clone))  # the clone's HEAD is an ancestor of what repo gets next
    repo.commit("only in repo", "r.txt")
    second = GitSensor(config)
    second.import_state(first.export_state())
    assert second.poll(Focus(cwd=repo.path))["commits"] == []


def test_read_head_names_the_branch_and_commit_from_git_s_files_packed_detached_or_in_a_worktree(repo, tmp_path):
    from attend.sensors.git import Head, read_head

    sha = repo.git("rev-parse", "HEAD")
    assert read_head(repo.path) == Head("main", sha)
    assert read_head(repo.path / "sub") == Head("main", sha)  # a folder below the top
    repo.git("pack-refs", "--all")
    assert not (repo.path / ".git" / "refs" / "heads" / "main").exists()
    assert read_head(repo.path) == Head("main", sha)
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    assert read_head(tmp_path / "side") == Head("side", sha)
    repo.git("switch", "-q", "--detach")
    assert read_head(repo.path) == Head("", sha)
    assert read_head(tmp_path / "nowhere") is None
