"""`attend tui` without a terminal on stdin and stdout is refused at once (exit 2, one line on stderr),
instead of writing escape codes into a file and waiting for keys forever (newuser item 2); on a terminal
it still opens the tab."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

REFUSAL = "attend tui: needs a terminal (stdin and stdout); for a script use attend sensors --json\n"


def _tui(home, stdin, stdout) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "attend", "tui"], cwd=home.project, env=home.env(),
                          stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60)


@pytest.mark.parametrize("which", ["both", "stdin", "stdout"])
def test_attend_tui_without_a_terminal_on_stdin_or_stdout_exits_2_with_one_line_and_writes_nothing(
        home, tmp_path, which):
    out = tmp_path / "out.txt"
    controller, terminal = pty.openpty()
    try:
        with out.open("w") as stdout:
            result = _tui(home, stdin=terminal if which == "stdout" else subprocess.DEVNULL,
                          stdout=terminal if which == "stdin" else stdout)
    finally:
        os.close(terminal)
        os.close(controller)
    assert result.returncode == 2
    assert result.stderr == REFUSAL
    assert out.read_text() == ""


def _read_until(fd: int, wanted: bytes, deadline: float) -> bytes:
    seen = b""
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{wanted!r} never came; the terminal saw {seen[-400:]!r}"
        if select.select([fd], [], [], left)[0]:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
    return seen


def _drain_until_exit(fd: int, child: subprocess.Popen[bytes], deadline: float) -> int:
    """Read what the child paints (a full terminal buffer would block it) until it exits."""
    while child.poll() is None:
        left = deadline - time.monotonic()
        assert left > 0, "the tab did not quit"
        if select.select([fd], [], [], min(left, 0.2))[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
    return child.wait()


def test_attend_tui_on_a_terminal_opens_the_tab_and_quits_on_q(home):
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "attend", "tui"], cwd=home.project,
                             env=home.env(TERM="xterm-256color"),
                             stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    try:
        _read_until(controller, b"git", time.monotonic() + 60)  # a shipped sensor's row: the tab is painted
        os.write(controller, b"q")
        assert _drain_until_exit(controller, child, time.monotonic() + 60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(controller)
