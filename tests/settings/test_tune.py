"""`attend tune`: engagement settings from the user's recent Claude Code transcripts, written by the test as
Claude Code writes them (~/.claude/projects/<folder>/<session>.jsonl), through the CLI (attend.cli.main)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.conftest import run_in_process

#: 2026-01-01T10:00:00Z: the first turn of every session below.
T0 = 1767261600.0


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def prompt(at: float, text: str = "go on") -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}, "timestamp": stamp(at),
            "isSidechain": False, "sessionId": "s"}


def reply(at: float) -> dict:
    return {"type": "assistant", "timestamp": stamp(at), "isSidechain": False, "sessionId": "s",
            "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 10, "cache_read_input_tokens": 1000, "output_tokens": 5}}}


def tool_result(at: float) -> dict:
    return {"type": "user", "timestamp": stamp(at), "isSidechain": False, "sessionId": "s",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]},
            "toolUseResult": {"stdout": "done"}}


def write_session(home, folder: str, session: str, entries: list[dict], mtime: float | None = None) -> Path:
    path = Path(home.root) / ".claude" / "projects" / folder / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def session_with_gaps(reply_gaps: list[float], think: float = 5.0) -> list[dict]:
    """Prompts each answered after `think` s, the user's next prompt `gap` s after that answer."""
    entries, at = [prompt(0.0)], 0.0
    for gap in reply_gaps:
        entries.append(reply(at + think))
        at = at + think + gap
        entries.append(prompt(at))
    return entries


def tune(home, *args: str):
    return run_in_process(["tune", *args], env=home.env(), cwd=home.project)


def settings(out) -> dict[str, dict]:
    assert out.stderr == "" or out.returncode != 0, out.stderr
    return {s["key"]: s for s in json.loads(out.stdout)["settings"]}


def test_tune_derives_the_refractory_from_the_median_reply_gap_and_the_window_from_the_p90_prompt_gap(home) -> None:
    # Reply gaps 20, 40, 60, 80, 100 s; prompt gaps are each gap plus the 5 s the assistant took: 25..105 s.
    write_session(home, "-work-app", "s1", session_with_gaps([20, 40, 60, 80, 100]))
    out = tune(home, "--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert (found["projects"], found["sessions"], found["prompts"], found["applied"]) == (1, 1, 6, False)
    derived = settings(out)
    refractory = derived["attend.engagement.absolute_refractory"]
    assert refractory["value"] == 60 and refractory["current"] == 60.0
    assert refractory["from"] == {"statistic": "median assistant -> user gap", "gaps": 5, "seconds": 60.0,
                                  "factor": 1, "within": [15.0, 300.0]}
    window = derived["attend.engagement.live_window"]
    # p90 by nearest rank of five gaps is the fifth: 105 s, times 3.
    assert window["value"] == 315 and window["from"]["seconds"] == 105.0 and window["from"]["gaps"] == 5
    text = tune(home)
    assert text.returncode == 0
    assert "read 1 transcript of 1 project under" in text.stdout and ": 6 prompts" in text.stdout
    assert ("attend.engagement.absolute_refractory: 60s (now 60s) = the median assistant -> user gap over 5 gaps "
            "(60.0s), within 15s..300s") in text.stdout
    assert ("attend.engagement.live_window: 315s (now 1580s) = 3 x the p90 user -> user gap over 5 gaps (105.0s), "
            "within 300s..3600s") in text.stdout
    assert "not written: attend tune --apply writes them" in text.stdout


def test_tool_results_sidechains_and_meta_entries_are_not_the_users_prompts(home) -> None:
    entries = [prompt(0), reply(5), tool_result(6), reply(8), tool_result(9),
               {**prompt(10), "isMeta": True}, {**prompt(11), "isSidechain": True}, reply(12), prompt(42)]
    write_session(home, "-work-app", "s1", entries)
    derived = settings(tune(home, "--json"))
    refractory = derived["attend.engagement.absolute_refractory"]
    assert refractory["from"]["gaps"] == 1 and refractory["from"]["seconds"] == 30.0  # 12 -> 42
    assert refractory["value"] == 30
    assert derived["attend.engagement.live_window"]["from"]["seconds"] == 42.0


def test_derived_values_stay_within_their_bounds(home) -> None:
    write_session(home, "-work-fast", "s1", session_with_gaps([1, 2, 3], think=1), mtime=T0)
    derived = settings(tune(home, "--json"))
    assert derived["attend.engagement.absolute_refractory"]["value"] == 15   # median 2 s, raised to 15
    assert derived["attend.engagement.live_window"]["value"] == 300          # 3 x 4 s, raised to 300
    write_session(home, "-work-slow", "s2", session_with_gaps([4000, 5000, 6000]), mtime=T0 + 10**6)
    derived = settings(tune(home, "--json", "--projects", "1"))
    assert derived["attend.engagement.absolute_refractory"]["value"] == 300  # median 5000 s, cut to 300
    assert derived["attend.engagement.live_window"]["value"] == 3600


def test_the_newest_sessions_of_the_newest_projects_are_read_ten_by_five_by_default(home) -> None:
    for p in range(12):
        for s in range(6):
            write_session(home, f"-work-p{p:02d}", f"s{s}", session_with_gaps([30]), mtime=T0 + p * 100 + s)
    found = json.loads(tune(home, "--json").stdout)
    read = {(Path(t).parent.name, Path(t).stem) for t in found["transcripts"]}
    assert found["projects"] == 10 and found["sessions"] == 50
    assert {folder for folder, _ in read} == {f"-work-p{p:02d}" for p in range(2, 12)}
    assert {session for _, session in read} == {f"s{s}" for s in range(1, 6)}
    few = json.loads(tune(home, "--json", "--projects", "2", "--sessions", "1").stdout)
    assert [(Path(t).parent.name, Path(t).stem) for t in few["transcripts"]] == [("-work-p11", "s5"), ("-work-p10", "s5")]


def test_apply_writes_both_settings_into_the_user_layer_as_settings_set_does(home) -> None:
    write_session(home, "-work-app", "s1", session_with_gaps([20, 40, 60, 80, 100]))
    out = tune(home, "--apply")
    assert out.returncode == 0, out.stderr
    assert f"written to the user layer ({home.config_file})" in out.stdout
    for key, value in (("attend.engagement.absolute_refractory", 60), ("attend.engagement.live_window", 315)):
        got = json.loads(run_in_process(["settings", "get", key, "--json"], env=home.env(), cwd=home.project).stdout)
        assert (got["value"], got["layer"], got["file"]) == (value, "user", str(home.config_file))
    # A running daemon reads config.yaml as the settings command wrote it: the spec loads it without a problem.
    check = run_in_process(["compile", "--check", "--strict"], env=home.env(), cwd=home.project)
    assert check.returncode == 0, check.stdout


def test_apply_refuses_when_the_project_layer_overrides_and_writes_nothing(home) -> None:
    write_session(home, "-work-app", "s1", session_with_gaps([20, 40]))
    project_config = home.project / ".claude" / "attend.yaml"
    project_config.parent.mkdir(parents=True, exist_ok=True)
    project_config.write_text("engagement:\n  live_window: 900\n")
    out = tune(home, "--apply")
    assert out.returncode == 4 and "attend.engagement.live_window is overridden by the project layer" in out.stderr
    assert not home.config_file.exists()


def test_no_transcripts_is_said_and_exits_1_writing_nothing(home) -> None:
    out = tune(home, "--apply")
    assert out.returncode == 1 and "no Claude Code transcripts under" in out.stdout
    assert not home.config_file.exists()
    write_session(home, "-work-app", "s1", [prompt(0)])  # one prompt: no gap to measure
    out = tune(home)
    assert out.returncode == 1
    assert "attend.engagement.absolute_refractory: not derived (no assistant -> user gap" in out.stdout


def test_a_fifo_or_a_symlink_named_like_a_transcript_is_never_opened(home, tmp_path) -> None:
    folder = Path(home.root) / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "stuck.jsonl")
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("".join(json.dumps(e) + "\n" for e in session_with_gaps([5])))
    (folder / "linked.jsonl").symlink_to(outside)
    write_session(home, "-work-app", "real", session_with_gaps([50]))
    found = json.loads(tune(home, "--json").stdout)
    assert [Path(t).name for t in found["transcripts"]] == ["real.jsonl"]


@pytest.mark.parametrize("args", [("--projects", "0"), ("--sessions", "-1"), ("--sessions", "many")])
def test_counts_that_are_not_whole_numbers_from_1_are_usage_errors(home, args) -> None:
    out = tune(home, *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
