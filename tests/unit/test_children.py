"""attend.children, the one way attend starts a child: real processes proving, for the synchronous face
(`run`) and the trio face (`open_child`) alike, that a timed-out child's whole group is ended, that a child
dies with the process that started it (SIGKILLed, so no cleanup of its own runs), and that a child's
environment is exactly the one stated."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from attend import children
from attend.children import ChildTimeout, open_child, run
from waiting import PATIENCE, exits, wait_until

PY = sys.executable
SRC = str(Path(__file__).resolve().parents[2] / "src")

#: A child that starts a grandchild in its own group, writes the grandchild's pid to argv[1] and sleeps.
WITH_GRANDCHILD = (
    "import subprocess, sys, time\n"
    f"g = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(600)'])\n"
    "open(sys.argv[1], 'w').write(str(g.pid))\n"
    "time.sleep(600)\n"
)

#: A child that writes its own pid to argv[1] and sleeps.
SLEEPER = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(600)\n"


def pid_in(path: Path) -> int:
    wait_until(lambda: path.exists() and path.read_text().strip(), what=f"a pid in {path}")
    return int(path.read_text())


def test_run_returns_the_exit_code_and_whole_output() -> None:
    done = run([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
               env=dict(os.environ), timeout=PATIENCE)
    assert (done.returncode, done.out_text, done.err_text) == (3, "out\n", "err\n")


def test_run_past_its_timeout_ends_the_childs_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    # The grandchild is started before the timeout runs out: a loaded machine may need seconds to start two
    # interpreters, so the timeout is the patience, and the child is held until then.
    with pytest.raises(ChildTimeout):
        run([PY, "-c", WITH_GRANDCHILD, str(pidfile)], env=dict(os.environ), timeout=3.0, kill_grace=0.2)
    assert exits(pid_in(pidfile))


async def test_open_child_left_by_a_cancel_ends_the_childs_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    with trio.fail_after(PATIENCE):
        async with open_child([PY, "-c", WITH_GRANDCHILD, str(pidfile)], env=dict(os.environ),
                              stop_grace=0.2) as child:
            while not (pidfile.exists() and pidfile.read_text().strip()):
                await trio.sleep(0.01)
            with trio.move_on_after(0):  # the caller's deadline passes while the child runs
                await child.wait()
    assert child.returncode is not None
    assert exits(int(pidfile.read_text()))


def test_run_gives_the_child_exactly_the_stated_environment() -> None:
    stated = {"ATTEND_ONLY": "this", "PATH": os.environ["PATH"]}
    done = run(["env", "-0"], env=stated, timeout=PATIENCE)
    assert dict(v.split("=", 1) for v in done.out_text.split("\0") if v) == stated


async def test_open_child_gives_the_child_exactly_the_stated_environment() -> None:
    stated = {"ATTEND_ONLY": "that", "PATH": os.environ["PATH"]}
    out = bytearray()
    async with open_child(["env", "-0"], env=stated) as child:
        while chunk := await child.stdout.receive_some():
            out.extend(chunk)
        assert await child.wait() == 0
    assert dict(v.split("=", 1) for v in out.decode().split("\0") if v) == stated


#: A parent that starts SLEEPER through one face and then waits for it (argv[1]: the face, argv[2]: the pid file).
PARENT = f"""
import os, sys, trio
sys.path.insert(0, {SRC!r})
from attend.children import open_child, run
argv = [{PY!r}, "-c", {SLEEPER!r}, sys.argv[2]]
if sys.argv[1] == "run":
    run(argv, env=dict(os.environ), timeout=600)
else:
    async def main():
        async with open_child(argv, env=dict(os.environ)) as child:
            await child.wait()
    trio.run(main)
"""


@pytest.mark.parametrize("face", ["run", "open_child"])
def test_a_child_dies_when_the_process_that_started_it_is_sigkilled(tmp_path: Path, face: str) -> None:
    pidfile = tmp_path / "child"
    parent = subprocess.Popen([PY, "-c", PARENT, face, str(pidfile)], stdin=subprocess.DEVNULL)
    try:
        child = pid_in(pidfile)
        fd = os.pidfd_open(child)  # held before the kill, so the pid cannot be another process's meanwhile
    finally:
        parent.kill()
        parent.wait()
    try:
        assert select.select([fd], [], [], PATIENCE)[0], f"the child {child} outlived its SIGKILLed parent"
    finally:
        os.close(fd)


def test_a_child_outlives_the_thread_that_asked_for_it(tmp_path: Path) -> None:
    # The death signal follows the thread that forked. A child asked for by a passing thread (a trio worker
    # ends after 10 s idle; a compiled sensor's poll thread) must not die with that thread, only with the
    # process: the one spawner thread forks every child.
    script = ("import signal\n"
              "signal.signal(signal.SIGUSR1, lambda *_: print('alive', flush=True))\n"
              "print('ready', flush=True)\n"
              "while True: signal.pause()\n")
    asked: list[subprocess.Popen[bytes]] = []
    asker = threading.Thread(target=lambda: asked.append(
        children._spawn([PY, "-c", script], dict(os.environ), None, subprocess.PIPE, subprocess.DEVNULL).result()))
    asker.start()
    asker.join()
    (child,) = asked
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        gone = Path(f"/proc/self/task/{asker.native_id}")
        wait_until(lambda: not gone.exists(), what="the asking thread's end")  # its death signal, if any, is sent
        child.send_signal(signal.SIGUSR1)
        assert child.stdout.readline() == b"alive\n"
    finally:
        child.kill()
        child.communicate()
