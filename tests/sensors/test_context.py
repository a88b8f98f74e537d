"""The context sensor against transcript files written the way Claude Code writes them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sensor_material import Transcripts

from attend.peers.transcript import UsageSample, newest_transcript, project_folder_name
from attend.sensors.base import Focus, SensorUnavailable
from attend.sensors.context import ContextSensor, climb_per_minute


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "work.dir" / "my.proj"
    p.mkdir(parents=True)
    return p


@pytest.fixture
def transcripts(tmp_path: Path, project: Path) -> Transcripts:
    return Transcripts(tmp_path / "claude" / "projects", project)


def context(drive, project, transcripts):
    return drive("context", ContextSensor, project, projects_dir=str(transcripts.projects_dir))


def test_the_transcript_folder_replaces_each_slash_and_dot_with_a_dash():
    assert project_folder_name(Path("/home/ada/src/my.proj")) == "-home-ada-src-my-proj"


def test_a_project_path_with_underscores_is_also_found_with_every_symbol_as_a_dash(tmp_path):
    project = tmp_path / "my_proj v2"
    project.mkdir()
    folder = tmp_path / "projects" / re.sub(r"[^A-Za-z0-9-]", "-", str(project))
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("")
    assert newest_transcript(tmp_path / "projects", project).path == folder / "s1.jsonl"


def test_each_tier_is_disclosed_once_as_the_context_fills(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 60_000, minute=0)
    assert d.poll() == []
    transcripts.turn("s1", 104_000, minute=30)
    assert d.poll() == [("half", 1.0, "context 52.0% used (104000 of 200000 tokens)")]
    transcripts.turn("s1", 110_000, minute=60)
    assert d.poll() == []
    transcripts.turn("s1", 168_000, minute=90)
    # Two tiers crossed in one poll are one line: high supersedes two-thirds (issue 22).
    assert d.poll() == [("high", 3.0, "context 84.0% used (168000 of 200000 tokens)")]
    transcripts.turn("s1", 181_000, minute=120)
    assert d.poll() == [("critical", 5.0, "context 90.5% used (181000 of 200000 tokens)")]


def test_dipping_below_a_tier_and_climbing_back_does_not_disclose_it_again(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 90_000, minute=0)
    d.poll()
    transcripts.turn("s1", 101_000, minute=30)
    assert [f[0] for f in d.poll()] == ["half"]
    transcripts.turn("s1", 98_000, minute=60)
    transcripts.turn("s1", 102_000, minute=90)
    assert d.poll() == []


def test_after_a_compaction_the_tiers_start_over(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 30_000, minute=0)
    d.poll()
    transcripts.turn("s1", 120_000, minute=60)
    assert [f[0] for f in d.poll()] == ["half"]
    transcripts.turn("s1", 20_000, minute=120)  # compacted: 10 %
    assert d.poll() == []
    transcripts.turn("s1", 105_000, minute=240)
    assert [f[0] for f in d.poll()] == ["half"]


def test_a_new_session_is_read_from_its_own_transcript(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 150_000, minute=0)
    d.poll()
    transcripts.turn("s2", 20_000, minute=10)
    os.utime(transcripts.path("s2"), (2_000_000_000, 2_000_000_000))  # the newest file
    d.poll()
    assert (d.results[-1]["session"], d.results[-1]["percent"]) == ("s2", 10.0)
    transcripts.turn("s2", 110_000, minute=100)
    os.utime(transcripts.path("s2"), (2_000_000_100, 2_000_000_100))
    assert [f[0] for f in d.poll()] == ["half"]


def test_a_fast_climb_fires_once_while_it_lasts(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 20_000, minute=0)
    d.poll()
    transcripts.turn("s1", 26_000, minute=1)    # 3 points in a minute
    assert d.poll() == [("fast-climb", 2.0, "context climbing 3.0 points a minute, now 13.0%")]
    transcripts.turn("s1", 34_000, minute=2)
    assert d.poll() == []
    transcripts.turn("s1", 35_000, minute=12)   # the last five minutes: flat
    assert d.results[-1]["climb_per_minute"] > 2
    d.poll()
    assert d.results[-1]["climb_per_minute"] == 0.0


def test_subagent_turns_and_empty_turns_are_not_the_session_s_context(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 40_000, minute=0)
    transcripts.turn("s1", 190_000, minute=1, sidechain=True)
    d.poll()
    assert d.results[-1]["tokens"] == 40_000


def test_the_window_is_a_field_of_the_file(drive, project, transcripts):
    d = drive("context", ContextSensor, project, projects_dir=str(transcripts.projects_dir), window=1_000_000)
    transcripts.turn("s1", 500_000)
    d.poll()
    assert d.results[-1]["percent"] == 50.0


def test_without_a_transcript_the_sensor_is_unavailable(project, transcripts):
    sensor = ContextSensor({"projects_dir": str(transcripts.projects_dir), "window": 200_000,
                            "tiers": [50], "reset_below": 25, "climb_window": 300})
    with pytest.raises(SensorUnavailable, match="no Claude Code transcripts"):
        sensor.poll(Focus(cwd=project))
    transcripts.folder.mkdir(parents=True)
    (transcripts.folder / "s1.jsonl").write_text('{"type": "user"}\n')
    with pytest.raises(SensorUnavailable, match="no assistant turn"):
        sensor.poll(Focus(cwd=project))


def test_a_partial_last_line_is_skipped(drive, project, transcripts):
    d = context(drive, project, transcripts)
    transcripts.turn("s1", 50_000)
    with transcripts.path("s1").open("a") as fh:
        fh.write('{"type": "assistant", "message": {"usage": {"input_tok')
    d.poll()
    assert d.results[-1]["tokens"] == 50_000


def test_a_climb_needs_a_minute_of_turns():
    samples = [UsageSample(0.0 + i, "m", 10_000 + 5_000 * i) for i in range(30)]
    assert climb_per_minute(samples, 200_000, 300) == 0.0
