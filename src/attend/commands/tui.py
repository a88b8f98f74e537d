"""`attend tui`: the sensors tab (`attend.tui.SensorsApp`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from attend.errors import EXIT_USAGE

if TYPE_CHECKING:
    from attend.commands import ProjectArgs


def _on_a_terminal() -> bool:
    """Whether stdin and stdout are both a terminal, as the full-screen tab needs."""
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout))


def main(args: ProjectArgs) -> int:
    """`attend tui [--project DIR]`: open the sensors tab (`--project` makes edits write the project layer).

    Without a terminal on stdin and stdout it is refused at once (exit 2): the tab would otherwise write
    escape codes into a file or pipe and wait forever for keys that never come.
    """
    if not _on_a_terminal():
        print("attend tui: needs a terminal (stdin and stdout); for a script use attend sensors --json",
              file=sys.stderr)
        return EXIT_USAGE
    from attend.runtime.store import StoreUnavailable
    from attend.tui.app import SensorsApp
    from attend.tui.model import SensorsModel

    model = SensorsModel(args.project_dir, layer="project" if args.project_layer else "user")
    try:
        model.reload()
    except StoreUnavailable as exc:
        print(f"attend: {exc}", file=sys.stderr)
        return 1
    try:
        SensorsApp(args.project_dir, model=model).run()
    finally:
        model.close()
    return 0
