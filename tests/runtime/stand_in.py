"""A real process standing in for a Claude Code session: it records itself as Claude Code does and runs the
session's hooks and its Monitor as its own children.

Claude Code writes `~/.claude/sessions/<pid>.json` (`pid`, `sessionId`, `procStart`: its start in clock
ticks after boot) and runs each hook and each monitor as a child process, so attend finds the session's
Claude Code process by ancestry. The stand-in does the same in a test's home: a long-lived Python process
whose record names it, which runs what the test asks (a hook, with the hook's JSON on stdin; a Monitor,
`attend run`, whose stdout goes to a file), and which the test kills to end the session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import PATIENCE, wait_until

#: The stand-in: writes its record, then answers one JSON request per stdin line with one JSON line.
STAND_IN = r"""
import json, os, subprocess, sys
folder, session, cwd = sys.argv[1:4]
os.makedirs(folder, exist_ok=True)
with open(f"/proc/{os.getpid()}/stat") as stat:
    start = stat.read().rsplit(")", 1)[1].split()[19]
def record(session):
    tmp = os.path.join(folder, f".{os.getpid()}.tmp")
    with open(tmp, "w") as out:
        json.dump({"pid": os.getpid(), "sessionId": session, "cwd": cwd, "startedAt": 0, "procStart": start}, out)
    os.replace(tmp, os.path.join(folder, f"{os.getpid()}.json"))
record(session)
print(json.dumps({"pid": os.getpid(), "start": start}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    if "run" in ask:
        done = subprocess.run(ask["run"], input=ask["input"], env=ask["env"], cwd=ask["cwd"], capture_output=True,
                              text=True, timeout=ask["timeout"])
        answer = {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    elif "spawn" in ask:
        proc = subprocess.Popen(ask["spawn"], env=ask["env"], cwd=ask["cwd"], stdin=subprocess.DEVNULL,
                                stdout=open(ask["stdout"], "w"), stderr=open(ask["stderr"], "w"))
        answer = {"pid": proc.pid}
    else:
        record(ask["session"])
        answer = {}
    print(json.dumps(answer), flush=True)
"""


class Monitor:
    """An `attend run` the stand-in started as its Monitor: its pid, and what it printed so far."""

    def __init__(self, pid: int, stdout: Path, stderr: Path) -> None:
        self.pid = pid
        self.stdout_path = stdout
        self.stderr_path = stderr

    @property
    def stdout(self) -> list[str]:
        return self.stdout_path.read_text().splitlines()

    @property
    def stderr(self) -> list[str]:
        return self.stderr_path.read_text().splitlines()

    def wait_for_stderr(self, text: str) -> None:
        wait_until(lambda: any(text in line for line in self.stderr), what=f"{text!r} in the monitor's log")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Signal it, and wait until it is gone (or a zombie of the stand-in: exited, not yet collected)."""
        from attend.peers.identity import process_runs

        os.kill(self.pid, sig)
        wait_until(lambda: not process_runs(self.pid), what=f"the monitor (pid {self.pid}) ends")


class ClaudeStandIn:
    """A Claude Code session's process in `home`, for `project` (default the home's), named `session`."""

    def __init__(self, home, session: str, *, project: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.session = session
        self.project = Path(project or home.project)
        self.env = home.env(**(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", STAND_IN, str(home.root / ".claude" / "sessions"), session, str(self.project)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=self.env, cwd=self.project)
        hello = json.loads(self.proc.stdout.readline())
        self.pid: int = hello["pid"]
        self.start: str = hello["start"]
        self.monitors: list[Monitor] = []
        self._count = 0

    def _ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the stand-in ended"
        return json.loads(line)

    def transcript(self) -> Path:
        """Where Claude Code keeps this session's transcript (the path its hooks are told)."""
        from attend.peers.transcript import project_folder_name

        return self.home.root / ".claude" / "projects" / project_folder_name(self.project.resolve()) / f"{self.session}.jsonl"

    def hook(self, event: str, *, transcript: Path | None = None, **extra) -> dict:
        """Run the plugin's hook for `event` as Claude Code does (its JSON on stdin); its JSON answer ({} for none)."""
        payload = {"session_id": self.session, "transcript_path": str(transcript or self.transcript()),
                   "cwd": str(self.project), "hook_event_name": event, **extra}
        done = self._ask({"run": [sys.executable, "-m", "attend", "drain", "--format", "hook", "--project",
                                  str(self.project)],
                          "input": json.dumps(payload), "env": self.env, "cwd": str(self.project),
                          "timeout": PATIENCE})
        assert done["rc"] == 0, done["stderr"]
        return json.loads(done["stdout"]) if done["stdout"].strip() else {}

    def monitor(self) -> Monitor:
        """Start the plugin's Monitor (`attend run --project DIR`) as this process's child."""
        self._count += 1
        out = self.home.root / f"monitor-{self.pid}-{self._count}.out"
        err = out.with_suffix(".err")
        done = self._ask({"spawn": [sys.executable, "-m", "attend", "run", "--project", str(self.project)],
                          "env": self.env, "cwd": str(self.project), "stdout": str(out), "stderr": str(err)})
        monitor = Monitor(done["pid"], out, err)
        self.monitors.append(monitor)
        return monitor

    def doorbell(self) -> Monitor:
        """Start the plugin's Stop hook, the doorbell (`attend drain --format doorbell`), as this process's child
        (it waits in the background, as Claude Code runs an asyncRewake hook; its session named by `--session`)."""
        self._count += 1
        out = self.home.root / f"doorbell-{self.pid}-{self._count}.out"
        err = out.with_suffix(".err")
        done = self._ask({"spawn": [sys.executable, "-m", "attend", "drain", "--format", "doorbell", "--session",
                                    self.session, "--project", str(self.project)],
                          "env": self.env, "cwd": str(self.project), "stdout": str(out), "stderr": str(err)})
        return Monitor(done["pid"], out, err)

    def clear(self, session: str) -> None:
        """`/clear`: the process's record names a new session id."""
        self._ask({"record": True, "session": session})
        self.session = session

    def exit(self) -> None:
        """The session ends: its process is gone (its monitors with it)."""
        for monitor in self.monitors:
            try:
                os.kill(monitor.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=PATIENCE)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
