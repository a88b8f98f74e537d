"""The command runner: real child processes, each fault ending in its failure state."""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path

import trio
from daemon_rig import alive

from attend.runtime.kinds.command import run_command
from waiting import PATIENCE

PY = sys.executable

#: The environment every command here runs with (a child gets only what it is given).
ENV = dict(os.environ)


async def test_a_command_prints_its_output() -> None:
    run = await run_command([PY, "-c", "print('{\"a\": 1}')"], env=ENV, timeout=5)
    assert run.state == "ok"
    assert run.stdout == b'{"a": 1}\n'


async def test_env_and_cwd_reach_the_child(tmp_path: Path) -> None:
    env = {**os.environ, "ATTEND_PROBE": "here"}
    run = await run_command(
        [PY, "-c", "import os; print(os.environ['ATTEND_PROBE'], os.getcwd())"], env=env, cwd=tmp_path
    )
    assert run.stdout.decode().split() == ["here", str(tmp_path)]


async def test_argv_is_never_given_to_a_shell(tmp_path: Path) -> None:
    run = await run_command([PY, "-c", "import sys; print(sys.argv[1])", "$HOME; echo hi"], env=ENV, timeout=5)
    assert run.stdout == b"$HOME; echo hi\n"


async def test_a_hanging_command_and_its_children_are_killed_on_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        f"c = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    run = await run_command([PY, "-c", script], env=ENV, timeout=1.5, kill_grace=0.5)
    assert run.state == "timeout"
    assert "1.5 s" in run.message
    assert time.monotonic() - started < 10
    grandchild = int(pidfile.read_text())
    await trio.sleep(0.2)
    assert not alive(grandchild)


async def test_a_command_that_ignores_sigterm_gets_sigkill() -> None:
    script = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)"
    run = await run_command([PY, "-c", script], env=ENV, timeout=1.0, kill_grace=0.3)
    assert run.state == "timeout"
    assert run.returncode == -9


async def test_a_command_flooding_stdout_is_cut_at_the_cap() -> None:
    script = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    run = await run_command([PY, "-c", script], env=ENV, timeout=10, max_output=100_000)
    assert run.state == "malformed"
    assert "larger than 100000 bytes" in run.message


async def test_a_non_zero_exit_reports_the_code_and_stderr_tail() -> None:
    script = "import sys\nprint('partial')\nprint('boom: no token', file=sys.stderr)\nsys.exit(3)"
    run = await run_command([PY, "-c", script], env=ENV, timeout=5)
    assert run.state == "exit"
    assert run.returncode == 3
    assert run.message == "exit code 3: boom: no token"


async def test_a_missing_program_is_an_exec_failure() -> None:
    run = await run_command(["/nonexistent/attend-no-such-program"], env=ENV, timeout=5)
    assert run.state == "exec_failed"
    assert "attend-no-such-program" in run.message


async def test_a_file_that_is_not_executable_is_an_exec_failure(tmp_path: Path) -> None:
    script = tmp_path / "sensor.sh"
    script.write_text("#!/bin/sh\necho 1\n")
    run = await run_command([str(script)], env=ENV, timeout=5)
    assert run.state == "exec_failed"
    assert "ermission" in run.message


async def test_a_poll_cancelled_from_outside_kills_the_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)"
    # Cancelled once the child runs (its pid written), not after a fixed second a loaded machine may need
    # just to start it.
    with trio.fail_after(PATIENCE):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(run_command, [PY, "-c", script], env=ENV, timeout=30))
            while not (pidfile.exists() and pidfile.read_text().strip()):
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert not alive(int(pidfile.read_text()))


async def test_a_command_that_exits_leaving_a_child_on_its_stdout_is_ok_and_the_child_is_killed(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys\n"
        f"c = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"  # inherits stdout
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "print('{\"a\": 1}')\n"
    )
    run = await run_command([PY, "-c", script], env=ENV, timeout=30, kill_grace=0.5)
    assert (run.state, run.returncode, run.stdout) == ("ok", 0, b'{"a": 1}\n')
    grandchild = int(pidfile.read_text())
    await trio.sleep(0.2)
    assert not alive(grandchild)


async def test_a_missing_working_directory_is_named_as_such_not_as_a_missing_program(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    run = await run_command(["echo", "{}"], cwd=missing, env=ENV, timeout=5)
    assert run.state == "exec_failed"
    assert run.message == f"the working directory {missing} does not exist (or is not a directory)"


async def test_a_directory_given_as_the_program_is_named_as_a_directory(tmp_path: Path) -> None:
    run = await run_command([str(tmp_path)], env=ENV, timeout=5)
    assert run.state == "exec_failed"
    assert run.message == f"cannot run {str(tmp_path)!r}: it is a directory"


async def test_an_argument_holding_a_nul_is_an_exec_failure_not_an_exception() -> None:
    # Python refuses it before any exec (ValueError, not OSError): it used to escape the runner.
    run = await run_command(["echo", "a\0b"], env=ENV, timeout=5)
    assert run.state == "exec_failed"
    assert run.message == "cannot run 'echo': embedded null byte"
