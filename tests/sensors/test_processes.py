"""The processes sensor against real processes started and ended in a temporary project folder."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attend.peers.mailbox import Mailbox, peers_dir
from attend.sensors.base import Focus
from attend.sensors.processes import (
    ProcessesSensor,
    boot_clock,
    decode_wait_status,
    is_attend,
    stat_wait_status,
    watched_tool,
)
from waiting import PATIENCE, wait_until

#: In these tests the processes are the test's own children, so the daemon's own-children filter is off,
#: and each is reported however young it is.
OVERRIDES = {"ignore_own_descendants": False, "include_session_processes": True, "min_lifetime": 0}


def wait_for_zombie(pid: int, timeout: float = PATIENCE) -> None:
    """Block until child `pid` has exited but is not yet collected (state Z)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not exit")


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@contextmanager
def sleeping(cwd: Path) -> Iterator[subprocess.Popen]:
    """A real `sleep 60` working in `cwd`, killed and collected on the way out."""
    child = subprocess.Popen(["sleep", "60"], cwd=cwd)
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def test_a_process_started_and_ended_in_the_project_fires_started_then_exited(drive, project):
    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    assert d.poll() == []
    with sleeping(project) as child:
        assert d.poll() == [("started", 0.5, f"started: sleep 60 (pid {child.pid})")]
        assert d.poll() == []
    assert d.poll() == [("exited", 0.5, f"exited: sleep 60 (pid {child.pid})")]


def test_a_process_working_elsewhere_is_not_tracked(drive, project, tmp_path):
    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    d.poll()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with sleeping(elsewhere):
        assert d.poll() == []


def test_a_process_in_a_subfolder_of_the_project_is_tracked(drive, project):
    (project / "src").mkdir()
    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    d.poll()
    with sleeping(project / "src"):
        assert [f[0] for f in d.poll()] == ["started"]


def test_a_watched_tool_is_louder_and_its_read_failure_louder_still(drive, project):
    make = script(project, "make", "read line\nexit 2")
    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    d.poll()
    child = subprocess.Popen([str(make)], cwd=project, stdin=subprocess.PIPE)
    try:
        started = d.poll()
        assert started == [("watched-started", 1.0, f"make started: /bin/sh {make} (pid {child.pid})")]
        child.stdin.write(b"go\n")
        child.stdin.close()
        wait_for_zombie(child.pid)  # exited, and this test (its parent) has not collected it yet
        assert d.poll() == [
            ("watched-exited", 2.0, f"make exited: /bin/sh {make} (pid {child.pid})"),
            ("watched-failed", 3.0, f"make exited with status 2: /bin/sh {make} (pid {child.pid})"),
        ]
    finally:
        child.wait()
    assert d.poll() == []


def test_a_watched_tool_that_succeeds_reads_as_a_plain_exit(drive, project):
    ok = script(project, "make", "read line\nexit 0")
    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    d.poll()
    child = subprocess.Popen([str(ok)], cwd=project, stdin=subprocess.PIPE)
    try:
        d.poll()
        child.stdin.write(b"go\n")
        child.stdin.close()
        wait_for_zombie(child.pid)
        assert [f[0] for f in d.poll()] == ["watched-exited"]
    finally:
        child.wait()


def test_attend_leaves_out_its_own_children_when_asked(drive, project):
    d = drive("processes", ProcessesSensor, project, ignore_own_descendants=True, min_lifetime=0)
    d.poll()
    with sleeping(project):
        assert d.poll() == []


def test_tools_are_recognised_by_name_program_script_or_module():
    watch = ["pytest", "cargo", "make"]
    assert watched_tool("cargo", ["cargo", "build"], watch) == "cargo"
    assert watched_tool("python3", ["/usr/bin/python3", "-m", "pytest", "-q"], watch) == "pytest"
    assert watched_tool("python3", ["python3", "/home/me/.venv/bin/pytest"], watch) == "pytest"
    assert watched_tool("sh", ["/bin/sh", "-c", "make"], watch) == ""
    assert watched_tool("gmake", ["/usr/bin/make", "all"], watch) == "make"
    assert watched_tool("python3", [sys.executable, "-c", "pass"], watch) == ""


def test_wait_statuses_decode_like_a_shell_reports_them():
    assert decode_wait_status(2 << 8) == (2, 0)
    assert decode_wait_status(9) == (137, 9)
    assert decode_wait_status(0) == (0, 0)


def test_a_process_name_with_spaces_and_parentheses_parses():
    text = "42 (a (b) c) S 1 42 42 0 -1 0 " + " ".join(["0"] * 12) + " 777 " + " ".join(["0"] * 29) + " 512"
    assert stat_wait_status(text) == 512
    assert stat_wait_status("42 (a (b) c) Z 1 42") is None  # an old kernel writes no field 52


def test_an_item_id_is_the_pid_and_the_start_time_in_clock_ticks_after_boot(project):
    config = {"watch": [], "ignore_own_descendants": False, "include_session_processes": True, "cmdline_limit": 100,
              "min_lifetime": 0}
    with sleeping(project) as child:
        items = ProcessesSensor(config).poll(Focus(cwd=project))["processes"]
        start_ticks = Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[19]  # field 22
    assert [item["id"] for item in items if item["pid"] == child.pid] == [f"{child.pid}-{start_ticks}"]


def test_the_tracked_set_survives_a_restart_through_exported_state(project):
    make = script(project, "make", "read line\nexit 3")
    config = {"watch": ["make"], "ignore_own_descendants": False, "include_session_processes": True, "cmdline_limit": 100,
              "min_lifetime": 0}
    before = ProcessesSensor(config)
    child = subprocess.Popen([str(make)], cwd=project, stdin=subprocess.PIPE)
    try:
        before.poll(Focus(cwd=project))
        after = ProcessesSensor(config)
        after.import_state(before.export_state())
        child.stdin.write(b"go\n")
        child.stdin.close()
        wait_for_zombie(child.pid)
        failures = after.poll(Focus(cwd=project))["failures"]
        assert [(f["pid"], f["exit_status"]) for f in failures] == [(child.pid, 3)]
    finally:
        child.wait()


@contextmanager
def detached_sleep(cwd: Path) -> Iterator[int]:
    """A `sleep 60` in `cwd` that is not a descendant of this test (its shell exits; it is re-parented)."""
    out = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], cwd=cwd, capture_output=True,
                         text=True, start_new_session=True, check=True)
    pid = int(out.stdout.strip())
    try:
        yield pid
    finally:
        subprocess.run(["kill", str(pid)], check=False)


@pytest.mark.parametrize("recorded", [False, True], ids=["attend's parent", "the session's Claude Code process"])
def test_the_sessions_own_process_tree_is_left_out_unless_included(drive, project, tmp_path, monkeypatch, recorded):
    import json
    import os

    monkeypatch.delenv("ATTEND_SESSION", raising=False)
    sessions = tmp_path / "claude" / "sessions"
    sessions.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    if recorded:  # this test process plays the Claude Code process that owns the session
        (sessions / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "sessionId": "s-1"}))
    plain = drive("processes", ProcessesSensor, project, ignore_own_descendants=False, min_lifetime=0)
    included = drive("processes", ProcessesSensor, project, ignore_own_descendants=False, include_session_processes=True,
                     min_lifetime=0)
    with sleeping(project) as own, detached_sleep(project) as other:
        time.sleep(0.05)  # the detached shell has exited and its sleep was re-parented
        pids = [p["pid"] for p in plain.sensor.poll(Focus(cwd=project))["processes"]]
        assert other in pids and own.pid not in pids
        pids = [p["pid"] for p in included.sensor.poll(Focus(cwd=project))["processes"]]
        assert other in pids and own.pid in pids


def test_a_process_registered_as_a_session_of_the_project_is_left_out_as_attend_s_own(
        drive, project, tmp_path, monkeypatch):
    # A session's `attend run` that does not poll is not this process's child; its heartbeat names it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = drive("processes", ProcessesSensor, project, ignore_own_descendants=True, include_session_processes=True,
              min_lifetime=0)
    with detached_sleep(project) as registered, detached_sleep(project) as other, detached_sleep(project) as elsewhere:
        mailbox = Mailbox(peers_dir())
        mailbox.beat("s-1", project, pid=registered, started=time.time())
        mailbox.beat("s-2", tmp_path, pid=elsewhere, started=time.time())  # a session of another project
        pids = [p["pid"] for p in d.sensor.poll(Focus(cwd=project))["processes"]]
        assert registered not in pids and other in pids and elsewhere in pids


def test_an_attend_command_line_is_recognised_however_attend_is_started():
    assert is_attend(["/venv/bin/attend", "run", "--session", "beta"])
    assert is_attend(["/usr/bin/python3", "-m", "attend", "run"])
    assert is_attend(["python3", "/plugin/bin/attend", "run", "--project", "/p"])
    assert is_attend(["/venv/bin/attend", "sensors", "list"])
    assert is_attend(["python3.12", "-X", "dev", "-m", "attend", "run"])
    assert is_attend(["/usr/bin/python3", "-P", "-m", "attend", "run", "--headless", "--project", "/p"])
    assert is_attend(["/usr/bin/python3", "-m", "attend", "peers", "send", "hi"])
    # the plugin's launcher as Claude Code runs a hook: a shell's -c command, and the sh script itself
    assert is_attend(["/bin/sh", "-c", '"/home/me/.claude/plugins/attend/bin/attend" drain --format hook --project "/p"'])
    assert is_attend(["/bin/sh", "/home/me/.claude/plugins/attend/bin/attend", "drain", "--format", "hook"])
    assert is_attend(["bash", "-lc", "ATTEND_X=1 exec attend drain"])
    assert not is_attend(["python3", "-m", "pytest", "attend", "run"])  # attend is not what runs
    assert not is_attend(["python3", "-c", "print(1)", "attend"])
    assert not is_attend(["/bin/sh", "-c", "make attend"])
    assert not is_attend(["/bin/sh", "-c", "echo 'unbalanced"])
    assert not is_attend(["make", "run"])
    assert not is_attend([])


# ------------------------------------------------------------------ what a user cares about (issue 33)


@contextmanager
def detached(argv: list[str], cwd: Path, *, children: int = 0) -> Iterator[int]:
    """`argv` running in `cwd` outside this test's process tree (the shell that starts it exits, so it is
    re-parented), killed with its children on the way out; waits until it has `children` children."""
    import psutil

    out = subprocess.run(["sh", "-c", '"$@" >/dev/null 2>&1 </dev/null & echo $!', "sh", *argv], cwd=cwd,
                         capture_output=True, text=True, start_new_session=True, check=True)
    pid = int(out.stdout.strip())
    process = psutil.Process(pid)
    try:
        wait_until(lambda: len(process.children(recursive=True)) >= children, what=f"{argv} starts its children")
        yield pid
    finally:
        for p in [*process.children(recursive=True), process]:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


def reported(d) -> set[int]:
    """The pids one poll of the driver's sensor reports."""
    return {p["pid"] for p in d.sensor.poll(d.focus)["processes"]}


def tree(pid: int) -> set[int]:
    import psutil

    return {pid} | {p.pid for p in psutil.Process(pid).children(recursive=True)}


def test_a_live_claude_code_sessions_tree_is_left_out_and_a_stale_record_leaves_out_nothing(
        drive, project, tmp_path, monkeypatch):
    # Another session's Claude Code process (recorded in Claude Code's sessions folder) whose Bash tool
    # runs `pytest 25` here: neither the wrapper nor the command is the user's work.
    import json

    monkeypatch.delenv("ATTEND_SESSION", raising=False)
    sessions = tmp_path / "claude" / "sessions"
    sessions.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    pytest_tool = script(project, "pytest", "sleep 60; :")
    d = drive("processes", ProcessesSensor, project, min_lifetime=0)
    command = f"cd {project} && /bin/sh {pytest_tool} 25; :"
    with detached(["/bin/bash", "-c", f"/bin/bash -c '{command}'; :"], project, children=3) as claude, \
            detached(["/bin/bash", "-c", f"/bin/bash -c '{command}'; :"], project, children=3) as stale, \
            detached(["sleep", "60"], project) as users:
        now_ms = time.time() * 1000
        (sessions / f"{claude}.json").write_text(json.dumps({"pid": claude, "sessionId": "b", "startedAt": now_ms}))
        # a record Claude Code left behind a crash, whose pid another process took since
        (sessions / f"{stale}.json").write_text(json.dumps({"pid": stale, "sessionId": "c", "startedAt": 1000}))
        (sessions / "999999.json").write_text(json.dumps({"pid": 999999, "sessionId": "gone", "startedAt": now_ms}))
        pids = reported(d)
        assert users in pids
        assert not pids & tree(claude), "the recorded session's tree was reported"
        assert tree(stale) <= pids


def test_a_process_running_claude_code_by_name_is_a_session_left_out_with_its_children(drive, project, tmp_path):
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.symlink_to("/bin/sh")  # the kernel names the process after the link: `claude`
    d = drive("processes", ProcessesSensor, project, min_lifetime=0)
    with detached([str(claude), "-c", "sleep 60; :"], project, children=1) as session, \
            detached(["sleep", "60"], project) as users:
        pids = reported(d)
        assert users in pids and not pids & tree(session)


def test_attend_hooks_and_commands_working_in_the_project_are_left_out_with_their_children(drive, project):
    # The plugin's launcher as Claude Code's hook runs it, from a session this test does not know of.
    launcher = script(project, "attend", "sleep 60; :")
    d = drive("processes", ProcessesSensor, project, include_session_processes=True, min_lifetime=0)
    hook = f'"{launcher}" drain --format hook --project "{project}"; :'
    with detached(["/bin/sh", "-c", hook], project, children=2) as shell, \
            detached(["/bin/sh", str(launcher), "drain", "--format", "hook"], project, children=1) as direct, \
            detached(["sleep", "60"], project) as users:
        pids = reported(d)
        assert users in pids
        assert not pids & (tree(shell) | tree(direct))


def test_a_process_is_reported_once_it_has_lived_the_minimum_and_a_short_one_never(drive, project):
    make = script(project, "make", "read line")
    d = drive("processes", ProcessesSensor, project, ignore_own_descendants=False, include_session_processes=True)
    assert d.sensor.min_lifetime == 2.0  # the shipped file's default
    d.poll()
    with sleeping(project) as young:
        tool = subprocess.Popen([str(make)], cwd=project, stdin=subprocess.PIPE)
        try:
            # a watched tool is reported at once; a plain process not before it has lived 2 s
            assert [f[0] for f in d.poll()] == ["watched-started"]
            d.sensor.clock = lambda: boot_clock() + 2.5  # the next poll's reading: both lived 2.5 s by then
            assert d.poll() == [("started", 0.5, f"started: sleep 60 (pid {young.pid})")]
        finally:
            tool.kill()
            tool.wait()
            tool.stdin.close()
    d.sensor.clock = boot_clock
    with sleeping(project):
        assert [f[0] for f in d.poll()] == ["exited", "watched-exited"]  # the young one is not seen
    assert d.poll() == []  # it ended before it had lived 2 s: neither its start nor its exit is reported


def test_background_starts_never_wake_the_agent_nine_of_them_are_nine_low_lines(drive, project, home):
    # Nine plain processes start (0.5 each, 4.5 together past the threshold): through the shipped file's
    # triggers, the store and the discloser, they go to stderr as low lines; stdout (the wake) gets nothing.
    import io

    from attend.runtime.kinds import PollOutcome
    from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
    from attend.runtime.store import Store

    d = drive("processes", ProcessesSensor, project, **OVERRIDES)
    store = Store(home.root / "attend.db", clock=lambda: 1000.0)
    out, err = io.StringIO(), io.StringIO()
    discloser = Discloser(store, {"processes": SensorTerms.of(d.compiled.lane, d.compiled.sensor.ir)}.get,
                          stdout=out, stderr=err, clock=lambda: 1000.0)
    try:
        record_poll(store, d.compiled, PollOutcome(result=d.sensor.poll(d.focus)), now=999.0)
        children = [subprocess.Popen(["sleep", "60"], cwd=project) for _ in range(9)]
        try:
            record_poll(store, d.compiled, PollOutcome(result=d.sensor.poll(d.focus)), now=1000.0)
        finally:
            for child in children:
                child.kill()
                child.wait()
        discloser.run_once()
    finally:
        store.close()
    assert out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 9 and all(line.startswith("[attend sensor=processes priority=low] started: sleep 60") for line in lines)
