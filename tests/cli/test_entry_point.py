"""The real entry point, once per command: `python -m attend ...` in a child process gives what the
in-process runner (`home.attend`, `attend.cli.main`) gives, so the suite can run commands in-process."""

from __future__ import annotations

import pytest

#: One invocation per command group, each reading only the temporary home (no daemon needed).
COMMANDS = [
    ("--version",),
    ("compile", "--check"),
    ("explain", "git"),
    ("test",),
    ("sensors", "list", "--json"),
    ("sensors", "history", "git"),
    ("sensors", "poll", "nosuch"),
    ("sensors", "fire", "git", "--input", "-", "--dry-run"),
    ("sensors", "probe", "git"),
    ("sensors", "shelve", "git", "--for", "nonsense"),
    ("settings", "get", "attend.sensors.git.interval", "--json"),
    ("settings", "help", "attend.sensors.git.interval"),
    ("spec", "schema"),
    ("peers", "list", "--json"),
    ("drain",),
    ("drain", "--format", "hook"),
    ("doctor", "--json"),
    ("tui", "--help"),
    ("run", "--project", "/no/such/folder"),
    ("no-such-command",),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_each_command_gives_the_same_output_and_exit_code_in_a_child_process_and_in_process(home, args) -> None:
    stdin = '{"branch": "main"}' if "fire" in args else ""
    child = home.attend_process(*args, input=stdin)
    inside = home.attend(*args, input=stdin)
    assert "Traceback" not in child.stderr
    assert (inside.returncode, inside.stdout, inside.stderr) == (child.returncode, child.stdout, child.stderr)
