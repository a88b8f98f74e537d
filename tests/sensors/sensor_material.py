"""Real material for the sensor tests: the shipped files compiled, a poll-and-step driver, a git repo."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attend
from attend.compiler import compile_sensor
from attend.sensors.base import Focus
from attend.spec import load_paths

#: The shipped sensor folder inside the package.
SHIPPED = Path(attend.__file__).parent / "sensors.d"


def shipped_sensor(name: str, project: Path):
    """The shipped file `name.yaml` loaded, validated and compiled."""
    sset = load_paths([SHIPPED / f"{name}.yaml"], project, os.environ)
    sensor = sset.sensors[name]
    assert sensor.status == "ok", [str(d) for d in sensor.diagnostics]
    return compile_sensor(sensor)


@dataclass
class Driver:
    """Polls a crate sensor object and runs the shipped file's triggers on each result."""

    compiled: Any
    sensor: Any
    focus: Focus
    states: dict[str, Any] | None = None
    results: list[Any] = field(default_factory=list)

    def poll(self) -> list[tuple[str, float, str]]:
        """One poll through the triggers: the fires as (trigger, magnitude, description)."""
        result = self.sensor.poll(self.focus)
        self.results.append(result)
        step = self.compiled.step(self.states, result)
        self.states = step.states
        assert not step.warnings, step.warnings
        return sorted((f.trigger, f.magnitude, f.description) for f in step.fires)


class GitRepo:
    """A real git repository in a temporary folder, with a fixed identity."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org",
               "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org",
               "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
        done = subprocess.run(["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def write(self, name: str, text: str) -> None:
        (self.path / name).parent.mkdir(parents=True, exist_ok=True)
        (self.path / name).write_text(text)

    def commit(self, message: str, *files: str) -> str:
        for f in files:
            self.write(f, f"{message}\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


class Transcripts:
    """Claude Code transcripts written the way Claude Code writes them, for one project."""

    def __init__(self, projects_dir: Path, project: Path) -> None:
        from attend.peers.transcript import project_folder_name

        self.projects_dir = projects_dir
        self.folder = projects_dir / project_folder_name(project)

    def path(self, session: str) -> Path:
        return self.folder / f"{session}.jsonl"

    def turn(self, session: str, tokens: int, *, minute: float = 0.0, sidechain: bool = False,
             model: str = "claude-sonnet-4-5", tool: bool = False, said: str = "go on") -> None:
        """Append a user entry (`said`) and an assistant turn holding `tokens` (split like real usage): its text
        ends the turn, or with `tool` it calls a tool (the turn goes on)."""
        from datetime import UTC, datetime, timedelta

        stamp = (datetime(2026, 1, 5, 9, 0, tzinfo=UTC) + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")
        usage = {"input_tokens": 3, "cache_creation_input_tokens": tokens // 10,
                 "cache_read_input_tokens": tokens - 3 - tokens // 10, "output_tokens": 120}
        entries = [
            {"type": "user", "sessionId": session, "timestamp": stamp, "isSidechain": sidechain,
             "message": {"role": "user", "content": said}},
            {"type": "assistant", "sessionId": session, "timestamp": stamp, "isSidechain": sidechain,
             "message": {"role": "assistant", "model": model, "usage": usage,
                         "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make"}}]
                         if tool else [{"type": "text", "text": "done"}]}},
        ]
        self.append(session, *entries)

    def append(self, session: str, *entries: dict[str, Any]) -> None:
        """Append transcript entries as they are (one JSON line each)."""
        import json

        self.folder.mkdir(parents=True, exist_ok=True)
        with self.path(session).open("a") as fh:
            for entry in entries:
                fh.write(json.dumps(entry) + "\n")


#: The fake gh's source (a real executable once copied onto PATH; see FakeGh).
FAKE_GH_SOURCE = Path(__file__).with_name("fake_gh.py")


class FakeGh:
    """A fake `gh` on PATH: tests/sensors/fake_gh.py copied into `folder` as an executable named `gh`, replaying
    the answers this object writes beside it (read again at every call, so a change reaches the next poll)."""

    def __init__(self, folder: Path) -> None:
        import sys

        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        script = folder / "gh"
        script.write_text(f"#!{sys.executable}\n" + FAKE_GH_SOURCE.read_text())
        script.chmod(0o755)
        self.answers: dict[str, dict[str, Any]] = {}
        self._write()

    def answer(self, command: str, data: Any = None, *, stdout: str | None = None, stderr: str = "",
               exit: int = 0) -> None:
        """How gh answers `command` ("pr checks", "run list", "pr view", "api user") from now on."""
        self.answers[command] = {"data": data, "stdout": stdout, "stderr": stderr, "exit": exit}
        self._write()

    def _write(self) -> None:
        import json

        tmp = self.folder / "answers.json.tmp"
        tmp.write_text(json.dumps(self.answers))
        tmp.replace(self.folder / "answers.json")  # atomic: a call never reads half a file

    def calls(self) -> list[dict[str, Any]]:
        """Each call so far: its arguments, GH_PROMPT_DISABLED, and whether stdin was a terminal."""
        import json

        log = self.folder / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def env(self, base: Any = None) -> dict[str, str]:
        """`base` (the process's environment) with this gh first on PATH."""
        base = dict(os.environ if base is None else base)
        return {**base, "PATH": f"{self.folder}{os.pathsep}{base.get('PATH', '')}"}
