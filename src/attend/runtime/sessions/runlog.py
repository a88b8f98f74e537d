"""What `attend run` says on stderr, kept where people and sessions can read it (DESIGN.md, "Delivery": Staying up).

Claude Code never shows a monitor's stderr, and a headless poller has none, so every line `attend run`
writes there about itself (`attend: ...`, not the low-priority notification lines) is also appended to
`run-<hash>.log` in the state folder, beside the project's run lock. `attend doctor` shows the
recoveries it holds, and a session's `SessionStart` status the lines of the last hour.

Decisions implemented here:

- Each line is stored as `<unix time> <pid> <text>`; the file is opened for each line (a state folder
  removed under a running process is made again by the next line) and is cut to its newer half once it
  passes `LOG_LIMIT` bytes.
- A line that cannot be written to the log is dropped from the log only: logging never stops `attend run`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from attend.runtime.clock import WALL_CLOCK, Clock

__all__ = ["LOG_LIMIT", "RECOVERED", "RunLog", "log_path", "read_log"]

#: The size (bytes) past which the log keeps only its newer half.
LOG_LIMIT = 64 * 1024
#: The word a line about a recovery carries (`attend doctor` lists those lines).
RECOVERED = "recovered"


def log_path(project_dir: Path | str, env: Mapping[str, str] | None = None) -> Path:
    """The run log of `project_dir`: beside its run lock, `run-<hash>.log`."""
    from attend.files import run_lock_path

    return run_lock_path(project_dir, env).with_suffix(".log")


class RunLog:
    """A text stream that writes to `stream` and appends each `attend: ...` line to the file at `path`."""

    def __init__(self, stream: TextIO, path: Path, *, clock: Clock = WALL_CLOCK) -> None:
        self.stream = stream
        self.path = path
        self._clock = clock
        self._partial = ""

    def write(self, text: str) -> int:
        try:
            self.stream.write(text)
        except (OSError, ValueError):
            pass  # nobody reads stderr (a closed pipe): the log still gets the line
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            if line.startswith("attend: "):
                self._append(line[len("attend: "):])
        return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _append(self, line: str) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as log:
                log.write(f"{self._clock():.3f} {os.getpid()} {line}\n")
                size = log.tell()
            if size > LOG_LIMIT:
                data = self.path.read_bytes()
                cut = data.find(b"\n", len(data) // 2) + 1
                tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
                tmp.write_bytes(data[cut:])
                os.replace(tmp, self.path)
        except OSError:
            pass


def read_log(path: Path, *, since: float = 0.0) -> list[tuple[float, int, str]]:
    """The log's lines written at or after `since`: (time, pid, text), oldest first; [] without a log."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3:
            continue
        try:
            when, pid = float(parts[0]), int(parts[1])
        except ValueError:
            continue
        if when >= since:
            out.append((when, pid, parts[2]))
    return out
