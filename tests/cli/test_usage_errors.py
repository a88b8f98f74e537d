"""Usage errors name the bad argument in the words of its own command; --version and --help end quietly on a closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _with_closed_stdout(home, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Run attend with a stdout pipe whose reader has already gone (`attend ... | true`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "attend", *args], cwd=home.project, env=home.env(**env),
                              stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("args", [("--version",), ("--help",), ("compile", "--help")])
def test_version_and_help_end_quietly_with_exit_0_when_the_reader_has_gone(home, args, unbuffered) -> None:
    done = _with_closed_stdout(home, *args, PYTHONUNBUFFERED=unbuffered)
    assert (done.returncode, done.stderr) == (0, b"")


def test_an_unknown_flag_alone_is_reported_as_unrecognized_not_as_a_missing_command(home) -> None:
    done = home.attend("--bogus")
    assert done.returncode == 2
    assert "unrecognized arguments: --bogus" in done.stderr and "required" not in done.stderr


def test_an_unknown_flag_is_reported_before_a_missing_required_one(home) -> None:
    done = home.attend("compile", "--bogus")
    assert done.returncode == 2
    assert "attend compile: error: unrecognized arguments: --bogus" in done.stderr


@pytest.mark.parametrize(("args", "prog"), [
    (("run", "--bogus"), "attend run"),
    (("doctor", "--bogus"), "attend doctor"),
    (("tui", "--bogus"), "attend tui"),
    (("settings", "set", "attend.sensors.git.interval", "5", "minutes"), "attend settings set"),
    (("sensors", "poll", "git", "--bogus"), "attend sensors poll"),
])
def test_an_unknown_argument_to_a_subcommand_shows_that_subcommands_usage(home, args, prog) -> None:
    done = home.attend(*args)
    assert done.returncode == 2
    usage, error = done.stderr.strip().splitlines()[0], done.stderr.strip().splitlines()[-1]
    assert usage.startswith(f"usage: {prog} ")
    assert error == f"{prog}: error: unrecognized arguments: {args[-1]}"


@pytest.mark.parametrize(("args", "message"), [
    ((), "attend: error: the following arguments are required: COMMAND (choose from run, compile, explain, test, "
         "sensors, settings, drain, peers, tune, permissions, cleanup, doctor, tui, spec)"),
    (("peers",), "attend peers: error: the following arguments are required: WHAT (choose from send, reply, inbox, "
                 "list, whoami, join, leave, channels)"),
    (("compile",), "attend compile: error: the following arguments are required: --check"),
    (("settings", "set", "attend.sensors.git.interval"), "attend settings set: error: the following arguments are required: VALUE"),
])
def test_a_missing_required_argument_alone_is_still_reported_as_missing(home, args, message) -> None:
    done = home.attend(*args)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == message
