"""The shipped compiled sensors through the real CLI: each `attend sensors poll` is a new process,
so what a sensor remembers between them comes from the store."""

from __future__ import annotations

import json
import os
import time

from sensor_material import GitRepo, Transcripts


def poll_json(home, name: str, *session: str) -> dict:
    done = home.attend("sensors", "poll", name, "--json", *session)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def fired(report: dict) -> list[str]:
    return [f["description"] for f in report["fires"]]


def test_git_reports_a_commit_made_between_two_cli_polls(home):
    repo = GitRepo(home.project)
    repo.commit("first", "a.txt")
    assert fired(poll_json(home, "git")) == []
    sha = repo.commit("second", "b.txt")
    report = poll_json(home, "git")
    assert report["state"] == "ok"
    assert fired(report) == [f"new commit {sha[:7]} by Ada: second"]


def test_git_outside_a_repository_is_unavailable_with_exit_code_1(home):
    done = home.attend("sensors", "poll", "git")
    assert done.returncode == 1
    assert "git: unavailable" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_context_reads_the_session_transcript_under_home(home):
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project)
    transcripts.turn("s1", 40_000)
    assert poll_json(home, "context", "--session", "s1")["result"]["percent"] == 20.0
    transcripts.turn("s1", 110_000, minute=30)
    assert fired(poll_json(home, "context", "--session", "s1")) == ["context 55.0% used (110000 of 200000 tokens)"]


def test_keepwarm_fires_once_for_an_idle_session_across_cli_polls(home):
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project)
    transcripts.turn("s1", 80_000)
    assert poll_json(home, "keepwarm", "--session", "s1")["result"]["due"] is False
    then = time.time() - 52 * 60
    os.utime(transcripts.path("s1"), (then, then))
    report = poll_json(home, "keepwarm", "--session", "s1")
    assert fired(report) == ["keepwarm: idle 52 min with 80000 tokens cached; the prompt cache lapses in 7 min"]
    assert fired(poll_json(home, "keepwarm", "--session", "s1")) == []
