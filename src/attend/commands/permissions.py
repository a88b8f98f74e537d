"""`attend permissions [--json]`: the permissions the enabled sensors require that Claude Code's settings do not
allow, as the JSON lines to add (settings/permissions.py decides; docs/settings.md).

Exit 1 when one is missing or blocked (by a deny or ask rule), 0 otherwise. A settings file that cannot be
read is said on stderr (its rules left out); a requirement that is not a rule at all is said too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from attend.commands import reports_refusals
from attend.errors import EXIT_FAILED
from attend.text import json_text, printable, printable_path

if TYPE_CHECKING:
    from attend.commands import JsonArgs
    from attend.spec.loaded import SensorSet

__all__ = ["main", "sensor_requirements"]


def sensor_requirements(sensor_set: SensorSet) -> dict[str, list[str]]:
    """The `requires:` of every sensor the runtime would run (enabled and runnable), by name."""
    from attend.runtime.runnable import runnable

    return {name: list(sensor.ir.requires)
            for name, sensor in sorted(sensor_set.sensors.items())
            if runnable(sensor) and sensor.enabled and sensor.ir.requires}


def _names(sensors: list[str]) -> str:
    return ", ".join(printable(s) for s in sensors)


@reports_refusals
def main(args: JsonArgs) -> int:
    from attend.settings.permissions import audit
    from attend.spec import load_set

    found = audit(sensor_requirements(load_set(args.project_dir, os.environ)), args.project_dir, os.environ)
    for path, why in found.unreadable:
        print(f"attend: {printable_path(path)} not read: {printable(why, one_line=True)}; its rules are left out",
              file=sys.stderr)
    for item in found.malformed:
        print(f"attend: requires: {printable(item.rule, one_line=True)} of {_names(item.sensors)} is not a "
              "permission rule (Tool or Tool(specifier), as Bash(gh:*))", file=sys.stderr)
    if args.json:
        print(json_text(found.to_json(), indent=2))
        return 0 if found.ok else EXIT_FAILED
    needed = len(found.allowed) + len(found.missing) + len(found.blocked)
    if not needed:
        print("no enabled sensor requires a permission")
    elif found.ok:
        print(f"all {needed} permission{'s' if needed != 1 else ''} the enabled sensors require "
              f"{'are' if needed != 1 else 'is'} allowed")
    for item in found.blocked:
        print(f"{printable(item.rule)} (for {_names(item.sensors)}) is refused by the {item.list} rule "
              f"{printable(item.by or '')} in {printable_path(item.file or '')}: an allow rule cannot override it")
    if found.missing:
        user = printable_path(Path(found.files[0]))
        local = printable_path(Path(found.files[2]))
        print(f"not allowed: {'; '.join(f'{printable(f.rule)} (for {_names(f.sensors)})' for f in found.missing)}")
        print(f'add to "permissions": {{"allow": [...]}} in {user} (every project) or {local} (this project):')
        print(",\n".join("    " + json.dumps(f.rule) for f in found.missing))
    return 0 if found.ok else EXIT_FAILED
