"""The keepwarm sensor against a transcript whose last change the test sets."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from sensor_material import Transcripts, shipped_sensor

from attend.sensors.base import Focus, SensorUnavailable
from attend.sensors.keepwarm import KeepwarmSensor, is_due


@pytest.fixture
def transcripts(tmp_path: Path, project: Path) -> Transcripts:
    return Transcripts(tmp_path / "projects", project)


def idle_for(transcripts: Transcripts, session: str, minutes: float) -> None:
    """Make the transcript's last change `minutes` ago."""
    then = time.time() - minutes * 60
    os.utime(transcripts.path(session), (then, then))


def test_one_wake_line_per_idle_stretch(drive, project, transcripts):
    d = drive("keepwarm", KeepwarmSensor, project, projects_dir=str(transcripts.projects_dir))
    transcripts.turn("s1", 90_000)
    idle_for(transcripts, "s1", 10)
    assert d.poll() == []
    idle_for(transcripts, "s1", 51)
    assert d.poll() == [("wake", 3.0, "keepwarm: idle 51 min with 90000 tokens cached; "
                                      "the prompt cache lapses in 8 min")]
    idle_for(transcripts, "s1", 55)
    assert d.poll() == []
    transcripts.turn("s1", 91_000)  # the reply: a new stretch begins
    assert d.poll() == []
    idle_for(transcripts, "s1", 50.5)
    assert [f[0] for f in d.poll()] == ["wake"]


def test_a_small_session_is_not_worth_waking(drive, project, transcripts):
    d = drive("keepwarm", KeepwarmSensor, project, projects_dir=str(transcripts.projects_dir))
    transcripts.turn("s1", 20_000)
    idle_for(transcripts, "s1", 1)
    d.poll()
    idle_for(transcripts, "s1", 52)
    assert d.poll() == []


def test_after_the_cache_expired_no_wake_is_sent(drive, project, transcripts):
    d = drive("keepwarm", KeepwarmSensor, project, projects_dir=str(transcripts.projects_dir))
    transcripts.turn("s1", 120_000)
    idle_for(transcripts, "s1", 30)
    d.poll()
    idle_for(transcripts, "s1", 61)
    assert d.poll() == []


def test_the_timings_are_fields_of_the_file(drive, project, transcripts):
    d = drive("keepwarm", KeepwarmSensor, project, projects_dir=str(transcripts.projects_dir),
              idle_floor="4m", cache_life="5m", min_tokens=1000)
    transcripts.turn("s1", 2_000)
    idle_for(transcripts, "s1", 1)
    d.poll()
    idle_for(transcripts, "s1", 4.5)
    assert [f[0] for f in d.poll()] == ["wake"]


def test_keepwarm_rides_the_message_lane_by_its_recorded_exception(project):
    compiled = shipped_sensor("keepwarm", project)
    assert compiled.lane == "message"
    assert "ADR-182" in compiled.lane_note
    assert all(t.ir.author is None for t in compiled.triggers.values())


def test_without_a_transcript_keepwarm_is_unavailable(project, transcripts):
    sensor = KeepwarmSensor({"projects_dir": str(transcripts.projects_dir), "idle_floor": 3000,
                             "cache_life": 3600, "min_tokens": 50_000})
    with pytest.raises(SensorUnavailable):
        sensor.poll(Focus(cwd=project))


def test_due_holds_only_between_the_floor_and_the_cache_life():
    rules = {"idle_floor": 3000.0, "cache_life": 3600.0, "min_tokens": 50_000}
    assert not is_due(2999, 60_000, **rules)
    assert is_due(3000, 60_000, **rules)
    assert not is_due(3600, 60_000, **rules)
    assert not is_due(3300, 49_999, **rules)


def test_the_wake_line_states_facts_and_gives_no_instruction():
    """Sensors observe (docs/authoring.md); what to do with a keepwarm line is the skill's advice."""
    line = shipped_sensor("keepwarm", Path(".")).sensor.data["triggers"]["wake"]["description"]
    assert "{idle_minutes}" in line and "{tokens}" in line and "{lapses_in_minutes}" in line
    assert not any(word in line.lower() for word in ("reply", "use no", "please", "should"))
    skill = (Path(__file__).parents[2] / "plugin" / "skills" / "attend-sensors" / "SKILL.md").read_text()
    assert "keepwarm" in skill and "one word" in skill
