"""The disclosure sensor (ADR-400) against transcript files written the way Claude Code writes them: the messaging
commands are told again each time another quarter of the context window has gone by since the session last
saw them, and never to wake an idle session."""

from __future__ import annotations

from pathlib import Path

import pytest
from sensor_material import SHIPPED, Driver, Transcripts, shipped_sensor

from attend.sensors.base import Focus, SensorUnavailable
from attend.sensors.disclosure import DisclosureSensor

WINDOW = 200_000  # the shipped window: a quarter is 50,000 tokens


@pytest.fixture
def transcripts(tmp_path: Path, project: Path) -> Transcripts:
    return Transcripts(tmp_path / "claude" / "projects", project)


def disclosure(project: Path, transcripts: Transcripts, session: str = "s1", state=None) -> Driver:
    """The shipped sensor polled for `session` (a `scope: session` poll), through the shipped triggers."""
    compiled = shipped_sensor("disclosure", project)
    sensor = DisclosureSensor({**compiled.sensor.data["crate"], "projects_dir": str(transcripts.projects_dir)})
    if state is not None:
        sensor.import_state(state)
    return Driver(compiled, sensor, Focus(cwd=project, session=session))


def told(percent: float) -> list[tuple[str, float, str]]:
    return [("messaging", 3.0, "peers messaging: `attend peers send TEXT` posts to the open channel (`--to DIR` a "
                                "project's sessions, `--channel NAME` a channel), `attend peers reply TEXT` answers the "
                                f"last message received, `attend peers inbox` lists the messages received ({percent}% of "
                                "the context window since these commands were last in it)")]


def delivered(transcripts: Transcripts, session: str, line: str) -> None:
    """The line as the session received it: an entry of its transcript holding the line's text."""
    transcripts.append(session, {"type": "user", "sessionId": session, "isSidechain": False,
                                 "message": {"role": "user", "content": f"<event>{line}</event>"}})


def test_the_commands_are_told_once_a_quarter_of_the_window_has_gone_by(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    assert d.poll() == []
    transcripts.turn("s1", 50_000, tool=True)
    assert d.poll() == []  # 30,000 tokens: 15 %
    transcripts.turn("s1", 75_000, tool=True)
    assert d.poll() == told(27.5)  # 55,000 tokens since the first turn read
    transcripts.turn("s1", 80_000, tool=True)
    assert d.poll() == []  # the same step: once


def test_seeing_the_commands_starts_the_count_again(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    d.poll()
    transcripts.turn("s1", 75_000, tool=True)
    (_, _, line), = d.poll()
    delivered(transcripts, "s1", f"[attend sensor=disclosure priority=medium] {line}")
    transcripts.turn("s1", 120_000, tool=True)
    assert d.poll() == []  # 45,000 tokens since the line reached it
    assert d.results[-1]["sightings"] == 1 and d.results[-1]["gone_by"] == 45_000
    transcripts.turn("s1", 130_000, tool=True)
    assert d.poll() == told(27.5)


def test_the_agent_running_the_command_itself_is_a_sighting(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    d.poll()
    transcripts.turn("s1", 60_000, tool=True)
    transcripts.append("s1", {"type": "assistant", "sessionId": "s1", "isSidechain": False, "message": {
        "role": "assistant", "model": "m", "usage": {"input_tokens": 65_000},
        "content": [{"type": "tool_use", "id": "toolu_2", "name": "Bash",
                     "input": {"command": "attend peers send 'the build is green'"}}]}})
    transcripts.turn("s1", 100_000, tool=True)
    assert d.poll() == []
    assert d.results[-1]["gone_by"] == 35_000


def test_a_line_that_never_reached_the_transcript_is_told_again_at_the_next_quarter(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    d.poll()
    transcripts.turn("s1", 75_000, tool=True)
    assert d.poll() == told(27.5)
    transcripts.turn("s1", 125_000, tool=True)
    assert d.poll() == told(52.5)


def test_an_idle_session_is_not_woken_its_next_turn_is_told(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    d.poll()
    transcripts.turn("s1", 75_000)  # the turn ended with text: the session waits for its user
    assert d.poll() == []
    assert d.results[-1]["working"] is False and d.results[-1]["due"] == []
    transcripts.append("s1", {"type": "user", "sessionId": "s1", "isSidechain": False,
                              "message": {"role": "user", "content": "next task"}})
    assert d.poll() == told(27.5)


def test_a_compaction_adds_nothing_and_what_grows_after_it_counts(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 150_000, tool=True)
    d.poll()
    transcripts.turn("s1", 30_000, tool=True)  # compacted
    transcripts.turn("s1", 60_000, tool=True)
    assert d.poll() == []
    assert d.results[-1]["gone_by"] == 30_000
    transcripts.turn("s1", 81_000, tool=True)
    assert d.poll() == told(25.5)


def test_a_subagent_s_entries_neither_count_nor_are_a_sighting(project, transcripts):
    d = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    d.poll()
    transcripts.turn("s1", 190_000, tool=True, sidechain=True, said="use attend peers send")
    transcripts.turn("s1", 70_000, tool=True)
    assert d.poll() == told(25.0)
    assert d.results[-1]["sightings"] == 0


def test_a_new_instance_reads_on_from_the_exported_state(project, transcripts):
    first = disclosure(project, transcripts)
    transcripts.turn("s1", 20_000, tool=True)
    first.poll()
    transcripts.turn("s1", 50_000, tool=True)
    first.poll()
    state = first.sensor.export_state()
    assert state["offset"] == transcripts.path("s1").stat().st_size
    again = disclosure(project, transcripts, state=state)
    again.states = first.states
    transcripts.turn("s1", 70_000, tool=True)
    assert again.poll() == told(25.0)


def test_a_session_already_due_when_attend_starts_is_told_at_the_first_poll(project, transcripts):
    transcripts.turn("s1", 20_000, tool=True)
    transcripts.turn("s1", 90_000, tool=True)
    assert disclosure(project, transcripts).poll() == told(35.0)


def test_each_session_is_measured_on_its_own_transcript(project, transcripts):
    transcripts.turn("s1", 20_000, tool=True)
    transcripts.turn("s1", 90_000, tool=True)
    transcripts.turn("s2", 20_000, tool=True)
    transcripts.turn("s2", 30_000, tool=True)
    assert disclosure(project, transcripts, "s2").poll() == []
    assert disclosure(project, transcripts, "s1").poll() == told(35.0)


def test_no_transcript_or_no_turn_yet_is_unavailable(project, transcripts):
    d = disclosure(project, transcripts)
    with pytest.raises(SensorUnavailable, match="no Claude Code transcript of session s1"):
        d.sensor.poll(d.focus)
    transcripts.append("s1", {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "hi"}})
    with pytest.raises(SensorUnavailable, match="no assistant turn with token usage"):
        d.sensor.poll(d.focus)


def test_the_shipped_line_holds_the_marker_so_its_delivery_is_a_sighting(project):
    sensor = shipped_sensor("disclosure", project).sensor.data
    assert sensor["scope"] == "session"
    assert sensor["crate"]["marker"] in sensor["triggers"]["messaging"]["description"]
    for command in ("attend peers send", "attend peers reply", "attend peers inbox"):
        assert command in sensor["triggers"]["messaging"]["description"]
    assert (SHIPPED / "disclosure.test.yaml").is_file()


@pytest.mark.slow
def test_the_daemon_tells_the_session_once_when_a_quarter_has_gone_by(home):
    from tests.runtime.daemon_rig import DaemonProcess, caught_up, last_poll, query

    from waiting import PATIENCE, wait_until

    home.quiet().write_user_sensor("disclosure", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 500ms\n")
    transcripts = Transcripts(home.root / ".claude" / "projects", home.project)
    transcripts.turn("s1", 20_000, tool=True)
    daemon = DaemonProcess(home, env={"ATTEND_SESSION": "s1"})
    try:
        wait_until(lambda: last_poll(home) > 0, PATIENCE, what="a first poll of the session's transcript")
        transcripts.turn("s1", 75_000, tool=True)
        (line,) = daemon.wait_for(lambda lines: len(lines) >= 1)
        delivered(transcripts, "s1", line)
        # 102,000 tokens since the first turn (a second step, had the line not reached the transcript), 47,000
        # since the line did: nothing yet
        transcripts.turn("s1", 122_000, tool=True)
        caught_up(home, "s1")  # a poll after that turn, printed to the end: no second line
        # nor one held back (the absolute refractory holds a fire in `pending`, not yet in the journal)
        assert query(home, "SELECT description FROM pending WHERE sensor LIKE 'disclosure%'") == []
    finally:
        daemon.stop()
    assert daemon.stdout == [f"[attend sensor=disclosure priority=medium] {told(27.5)[0][2]}"], daemon.stderr
