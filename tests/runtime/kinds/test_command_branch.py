"""`{branch}` in a polled command sensor's argv: the branch checked out in the project at each poll, HEAD among
what wakes the sensor, and `unavailable` (nothing run) when no branch is checked out."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "sensors"))
from sensor_material import GitRepo  # noqa: E402

from attend.compiler import compile_sensor  # noqa: E402
from attend.runtime.kinds import PollContext  # noqa: E402
from attend.runtime.kinds.command import poll  # noqa: E402
from attend.runtime.watching.wake import declared_wake_on  # noqa: E402
from attend.spec import layer_paths, load_paths  # noqa: E402

#: Prints its arguments as JSON: what the command was given.
ARGS = "import json, sys; print(json.dumps({'args': sys.argv[1:]}))"


def branch_sensor(folder: Path, project: Path, **command) -> tuple:
    path = folder / "branchy.yaml"
    path.write_text(json.dumps({"spec": 1, "name": "branchy", "kind": "command", "interval": "1m",
                                "command": {"argv": [sys.executable, "-c", ARGS, "--branch", "{branch}",
                                                     "refs/heads/{branch}"], **command}}))
    compiled = compile_sensor(load_paths([path], project, os.environ).sensors["branchy"])
    return compiled, PollContext(project_dir=project, env=dict(os.environ), paths=layer_paths(project, os.environ))


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.commit("initial", "README")
    return r


async def test_the_branch_in_argv_follows_the_checkout_at_each_poll(repo, tmp_path):
    compiled, ctx = branch_sensor(tmp_path, repo.path)
    outcome = await poll(compiled, ctx)
    assert outcome.result == {"args": ["--branch", "main", "refs/heads/main"]}
    repo.git("switch", "-q", "-c", "feature/x")
    assert (await poll(compiled, ctx)).result == {"args": ["--branch", "feature/x", "refs/heads/feature/x"]}


async def test_no_branch_checked_out_is_unavailable_and_runs_nothing(repo, tmp_path):
    compiled, ctx = branch_sensor(tmp_path, repo.path)
    repo.git("switch", "-q", "--detach")
    outcome = await poll(compiled, ctx)
    assert (outcome.state, outcome.message) == (
        "unavailable", f"argv names {{branch}}, and HEAD is detached in {repo.path}: no branch is checked out")
    outside = tmp_path / "plain"
    outside.mkdir()
    compiled, ctx = branch_sensor(tmp_path, outside)
    outcome = await poll(compiled, ctx)
    assert outcome.state == "unavailable" and "is in no git repository" in outcome.message


def test_a_branch_switch_wakes_the_sensor_and_explain_says_why(repo, tmp_path, home):
    compiled, ctx = branch_sensor(tmp_path, repo.path)
    entries, refused = declared_wake_on(compiled, ctx)
    assert (entries, refused) == ([str(repo.path / ".git" / "HEAD")], [])
    home.write_user_sensor("branchy", (tmp_path / "branchy.yaml").read_text())
    done = home.attend("explain", "branchy", "--project", str(repo.path))
    assert f"{repo.path / '.git' / 'HEAD'}  (argv {{branch}})" in done.stdout, done.stdout + done.stderr
