"""Each shipped crate sensor reads the environment the crate interface hands it (`focus.env`, the poll context's
`env`), never the process's `os.environ` (issue 35, item 8): a daemon given another environment polls in it.

Every test polls through the crate kind (`attend.runtime.kinds.crate.poll`) with a context whose environment
names folders that the test process's own environment does not: what the sensor finds there shows which one
it read.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from sensor_material import GitRepo, Transcripts

from attend.peers.mailbox import Mailbox, Message, peers_dir
from attend.runtime.kinds import PollContext, PollOutcome
from attend.spec import layer_paths


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The poll context's environment: its own HOME and XDG folders, while the process's point at empty ones."""
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / "process" / name.lower()))
    monkeypatch.delenv("ATTEND_SESSION", raising=False)
    given = tmp_path / "given"
    return {**os.environ, "HOME": str(given / "home"), "XDG_CACHE_HOME": str(given / "cache"),
            "XDG_STATE_HOME": str(given / "state"), "XDG_CONFIG_HOME": str(given / "config"),
            "CLAUDE_CONFIG_DIR": str(given / "claude")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def poll(name: str, project: Path, env: dict[str, str], **crate: Any) -> PollOutcome:
    """One poll of the shipped sensor `name` through the crate kind, `crate` set over its crate block by a user
    file in the handed environment's config folder (loaded the way the daemon loads it)."""
    import json

    from attend.compiler import compile_sensor
    from attend.runtime.kinds import crate as kind
    from attend.spec import load_set

    if crate:
        user = Path(env["XDG_CONFIG_HOME"]) / "attend" / "sensors" / f"{name}.yaml"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(json.dumps({"spec": 1, "crate": crate}))
    sensor = load_set(project, env).sensors[name]
    assert sensor.status == "ok", [str(d) for d in sensor.diagnostics]
    ctx = PollContext(project_dir=project, env=env, paths=layer_paths(project, env), session="s-1")
    outcome = trio.run(kind.poll, compile_sensor(sensor), ctx)
    assert outcome.ok, (outcome.state, outcome.message)
    return outcome


def test_the_messages_sensor_reads_the_peers_folder_of_the_environment_it_is_handed(project, elsewhere) -> None:
    mailbox = Mailbox(peers_dir(elsewhere))
    mailbox.post(Message(mailbox.new_id(), "b", "session", "/elsewhere", None, "open", None, "hello", time.time()))
    assert [m["text"] for m in poll("messages", project, elsewhere).result["messages"]] == ["hello"]


def test_the_peers_sensor_reads_the_heartbeats_of_the_environment_it_is_handed(project, elsewhere) -> None:
    Mailbox(peers_dir(elsewhere)).beat("s-2", project, pid=None, started=time.time())
    assert [s["session"] for s in poll("peers", project, elsewhere).result["sessions"]] == ["s-2"]


@pytest.mark.parametrize("name", ["context", "keepwarm"])
def test_a_transcript_sensor_reads_the_home_of_the_environment_it_is_handed(project, elsewhere, name) -> None:
    # `projects_dir: ~/.claude/projects` in the shipped file: `~` is the handed HOME, not the process's
    Transcripts(Path(elsewhere["HOME"]) / ".claude" / "projects", project).turn("s-1", 120_000)
    assert poll(name, project, elsewhere).result["tokens"] == 120_000


def test_the_git_sensor_runs_git_in_the_environment_it_is_handed(project, elsewhere, tmp_path) -> None:
    # GIT_DIR and GIT_WORK_TREE only in the handed environment: git finds the repository through them
    repo = GitRepo(tmp_path / "repo")
    head = repo.commit("initial", "README")
    handed = {**elsewhere, "GIT_DIR": str(repo.path / ".git"), "GIT_WORK_TREE": str(repo.path)}
    assert poll("git", project, handed).result["head"] == head


@contextmanager
def detached_sleep(cwd: Path) -> Iterator[int]:
    """A `sleep` working in `cwd` that is not this process's child (its shell exits at once): its pid."""
    shell = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], cwd=cwd, capture_output=True, text=True,
                           check=True)
    pid = int(shell.stdout)
    try:
        yield pid
    finally:
        os.kill(pid, 9)


def test_the_processes_sensor_reads_the_heartbeats_of_the_environment_it_is_handed(project, elsewhere) -> None:
    # a session's `attend run` registered in the handed peers folder is attend's own: left out with its tree
    crate = {"ignore_own_descendants": True, "include_session_processes": True, "min_lifetime": 0}
    with detached_sleep(project) as registered, detached_sleep(project) as other:
        Mailbox(peers_dir(elsewhere)).beat("s-2", project, pid=registered, started=time.time())
        pids = [p["pid"] for p in poll("processes", project, elsewhere, **crate).result["processes"]]
    assert registered not in pids and other in pids

