"""A command's process, for the polled command kind (command.py) and the streamed one (stream.py) alike:
its resolved settings (argv with `{session}`, environment, cwd, timeout, output cap) and the words for a child
that could not start (`attend.children` starts and ends it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend import ir
from attend.runtime.kinds import PollContext
from attend.spec.reader import command_block
from attend.spec.schema import DEFAULT_COMMAND_TIMEOUT

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor

__all__ = ["BRANCH_PLACEHOLDER", "DEFAULT_TIMEOUT", "SESSION_PLACEHOLDER", "SESSION_VAR", "STDERR_TAIL", "branch_argv",
           "branch_wake_on", "command_settings", "exec_failure"]

#: Seconds a command may run when its file sets no `timeout` (the spec's default).
DEFAULT_TIMEOUT = DEFAULT_COMMAND_TIMEOUT


#: Bytes of stderr kept for a failure message.
STDERR_TAIL = 2048


def exec_failure(argv: list[str], cwd: Path | str | None, exc: Exception) -> str:
    """Why the child could not start, naming the real culprit: the OS reports a missing working
    directory as ENOENT, which would read as a missing program. `exc` is an OSError, or whatever else
    kept it from starting (a NUL in an argument is Python's ValueError)."""
    if cwd is not None and not os.path.isdir(cwd):
        return f"the working directory {cwd} does not exist (or is not a directory)"
    if os.sep in str(argv[0]) and os.path.isdir(argv[0]):
        return f"cannot run {str(argv[0])!r}: it is a directory"
    return f"cannot run {str(argv[0])!r}: {getattr(exc, 'strerror', None) or exc}"


#: In a session-scoped command sensor's argv, replaced by the session id it is polled for.
SESSION_PLACEHOLDER = "{session}"


#: The environment variable naming that session.
SESSION_VAR = "ATTEND_SESSION"


#: In a polled command sensor's argv, replaced by the branch checked out in the project at each poll.
BRANCH_PLACEHOLDER = "{branch}"


def branch_wake_on(fields: ir.Sensor, project_dir: Path | str) -> list[str]:
    """The HEAD file a polled command sensor whose argv names `{branch}` wakes on (a branch switch polls it at
    once; the daemon and `attend explain` both ask here); none for any other sensor."""
    block = fields.command
    if (fields.kind != "command" or block is None or block.output == "stream"
            or not any(BRANCH_PLACEHOLDER in a for a in block.argv)):
        return []
    from attend.sensors.git import git_dirs

    found = git_dirs(Path(project_dir))
    return [str((found[0] if found is not None else Path(project_dir) / ".git") / "HEAD")]


def branch_argv(argv: list[str], project_dir: Path | str) -> list[str] | str:
    """`argv` with `{branch}` replaced by the branch checked out in `project_dir` (HEAD read from git's files,
    `sensors.git.read_head`), or why there is none (a str): no repository, or a detached HEAD."""
    if not any(BRANCH_PLACEHOLDER in a for a in argv):
        return argv
    from attend.sensors.git import read_head

    head = read_head(Path(project_dir))
    if head is None:
        return f"argv names {BRANCH_PLACEHOLDER}, and {project_dir} is in no git repository"
    if not head.branch:
        return f"argv names {BRANCH_PLACEHOLDER}, and HEAD is detached in {project_dir}: no branch is checked out"
    return [a.replace(BRANCH_PLACEHOLDER, head.branch) for a in argv]


def command_settings(compiled: CompiledSensor, ctx: PollContext) -> dict[str, Any]:
    """The argv, environment, cwd, timeout and output cap of a command sensor, resolved."""
    block = compiled.sensor.ir.command or command_block({})
    env = dict(ctx.env)
    env.update(block.env)
    argv = list(block.argv)
    if ctx.session is not None:
        # A session-scoped poll: the session it is for, as `{session}` in argv and ATTEND_SESSION.
        env[SESSION_VAR] = ctx.session
        argv = [a.replace(SESSION_PLACEHOLDER, ctx.session) for a in argv]
    return {
        "argv": argv,
        "env": env,
        "cwd": Path(ctx.project_dir) / block.cwd,
        "timeout": block.timeout,
        "max_output": block.max_output or ctx.stdout_cap,
    }
