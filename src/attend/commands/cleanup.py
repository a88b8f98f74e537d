"""`attend cleanup [--dry-run] [--all] [--json]`: remove the state of projects whose folder is gone (runtime/cleanup.py
says what a project's state is, when a project is gone, stopped or running, and what is never touched).

One line per project that goes (or, with `--dry-run`, would go), then one line for what stays. Exit 0,
whether or not anything went; a state folder that cannot be used is exit 1.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from attend.commands import reports_refusals
from attend.text import json_text, printable_path

if TYPE_CHECKING:
    from typing import Protocol

    from attend.commands import JsonArgs
    from attend.runtime.cleanup import ProjectState

    class CleanupArgs(JsonArgs, Protocol):
        dry_run: bool
        all: bool

__all__ = ["main"]

#: The store's tables as a line names them.
TABLE_NAMES = {"trigger_state": "trigger states", "sensor_status": "sensor statuses", "pending": "pending",
               "journal": "journal rows", "crate_state": "crate states", "sessions": "session records",
               "session_seen": "seen items", "shelves": "shelves", "poll_history": "poll traces"}


def _what(state: ProjectState) -> str:
    parts = [f"{n:,} {TABLE_NAMES.get(table, table)}" for table, n in state.rows.items()]
    if state.files:
        parts.append(", ".join(path.name for path in state.files))
    if state.tray is not None:
        parts.append(f"peers tray {state.tray[0].name} ({len(state.tray[1])} message{'s' if len(state.tray[1]) != 1 else ''})")
    return "; ".join(parts) or "nothing"


@reports_refusals
def main(args: CleanupArgs) -> int:
    from attend.runtime.cleanup import clean, survey

    states = survey(os.environ)
    chosen = [s for s in states if s.status == "gone" or (args.all and s.status == "stopped")]
    if not args.dry_run:
        clean(chosen, os.environ, include_stopped=args.all)
    if args.json:
        print(json_text({"dry_run": args.dry_run, "all": args.all, "projects": [s.to_json() for s in states]},
                        indent=2))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    for state in chosen:
        where = printable_path(state.project)
        if state.left:
            print(f"left {state.status} {where}: {state.left}")
        else:
            print(f"{verb} {state.status} {where}: {_what(state)}")
    if not chosen:
        print("nothing to clean up: no project attend keeps state about has lost its folder")
    running = [s for s in states if s.status == "running"]
    stopped = [s for s in states if s.status == "stopped" and not args.all]
    if running:
        print(f"kept {len(running)} running project{'s' if len(running) != 1 else ''} (a poller or a live session): "
              + ", ".join(printable_path(s.project) for s in running))
    if stopped:
        print(f"kept {len(stopped)} stopped project{'s' if len(stopped) != 1 else ''} (attend cleanup --all "
              "removes their state too): " + ", ".join(printable_path(s.project) for s in stopped))
    return 0
