"""`attend tui`: the sensors tab (`attend.tui.SensorsApp`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from attend.tui.app import SensorsApp
from attend.tui.model import SensorsModel

if TYPE_CHECKING:
    from attend.commands import ProjectArgs


def main(args: ProjectArgs) -> int:
    """`attend tui [--project DIR]`: open the sensors tab (`--project` makes edits write the project layer)."""
    from attend.runtime.store import StoreUnavailable

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
