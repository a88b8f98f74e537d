"""`attend tune [--projects N] [--sessions N] [--apply] [--json]`: engagement settings from the user's own pace
(runtime/tune.py says what is read and how each value is derived; docs/settings.md).

Prints each derived setting with the figures it came from; `--apply` writes them into the user layer's
config.yaml through `attend settings set`'s write path (a refused value writes nothing, exit 3; a key the
project layer overrides, exit 4; a file that cannot be written, exit 5). No transcript, or no gap to derive
anything from: said, exit 1, nothing written.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from attend.commands import reports_refusals
from attend.errors import EXIT_FAILED, EXIT_WRITE_FAILED
from attend.text import json_text, printable_path

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Protocol

    from attend.commands import JsonArgs
    from attend.runtime.tune import Derived, Tuning
    from attend.spec.loaded import LayerPaths

    class TuneArgs(JsonArgs, Protocol):
        projects: int | None
        sessions: int | None
        apply: bool

__all__ = ["main"]


def _seconds(value: object) -> str:
    return "unset" if value is None else f"{value:g}s" if isinstance(value, int | float) else str(value)


def _line(derived: Derived) -> str:
    low, high = derived.bounds
    if derived.measured is None:
        return f"{derived.key}: not derived (no {derived.statistic.split(' ', 1)[1]} in these transcripts)"
    times = f"{derived.factor} x " if derived.factor != 1 else ""
    return (f"{derived.key}: {derived.value}s (now {_seconds(derived.current)}) = {times}the {derived.statistic} "
            f"over {derived.gaps} gap{'s' if derived.gaps != 1 else ''} ({derived.measured:.1f}s), "
            f"within {low:g}s..{high:g}s")


def _apply(tuning: Tuning, paths: LayerPaths) -> Path:
    """Write the derived settings into the user layer's config.yaml through `attend settings set`'s path
    (`plans.set_config`): every one is checked first, so a refused one leaves the file as it was; the file
    written."""
    from attend.settings.keys import parse_key
    from attend.settings.plans import set_config

    chosen = [(parse_key(d.key), d.value) for d in tuning.settings if d.value is not None]
    for key, value in chosen:
        set_config(paths, key, value, "user", write=False)
    return [set_config(paths, key, value, "user").path for key, value in chosen][-1]


@reports_refusals
def main(args: TuneArgs) -> int:
    from attend.files import WriteFailed
    from attend.runtime.tune import PROJECTS, SESSIONS, derive
    from attend.spec import layer_paths, load_config
    from attend.spec.config import config_default

    paths = layer_paths(args.project_dir, os.environ)
    current = {**config_default(("engagement",)), **load_config(paths).engagement}
    tuning = derive(os.environ, projects=args.projects or PROJECTS, sessions=args.sessions or SESSIONS,
                    current=current)
    derived = [d for d in tuning.settings if d.value is not None]
    written = None
    if derived and args.apply:
        try:
            written = _apply(tuning, paths)
        except WriteFailed as exc:
            print(f"attend: {exc}; the file is as it was", file=sys.stderr)
            return EXIT_WRITE_FAILED
    if args.json:
        print(json_text({**tuning.to_json(), "applied": written is not None,
                         "file": None if written is None else str(written)}, indent=2))
    else:
        where = printable_path(tuning.projects_dir)
        if not tuning.transcripts:
            print(f"no Claude Code transcripts under {where}; nothing to tune from")
        else:
            print(f"read {len(tuning.transcripts)} transcript{'s' if len(tuning.transcripts) != 1 else ''} of "
                  f"{tuning.projects} project{'s' if tuning.projects != 1 else ''} under {where} (newest first): "
                  f"{tuning.prompts} prompt{'s' if tuning.prompts != 1 else ''}")
            print("\n".join(_line(d) for d in tuning.settings))
            if written is not None:
                print(f"written to the user layer ({printable_path(written)})")
            elif derived:
                print(f"not written: attend tune --apply writes them to the user layer ({printable_path(paths.config_file)})")
    return 0 if derived else EXIT_FAILED
