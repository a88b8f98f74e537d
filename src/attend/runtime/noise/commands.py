"""`attend sensors shelve|unshelve NAME[/TRIGGER]` and `attend sensors history NAME` (DESIGN.md, CLI).

- `shelve NAME[/TRIGGER] --for DURATION [--reason TEXT]`: the sensor (or one trigger) keeps polling and
  keeping state but delivers nothing until the shelf expires; shelving again replaces the shelf.
  Prints `shelved NAME[/TRIGGER] until <ISO time> (<duration>)[: reason]`; `--json` the shelf.
- `unshelve NAME[/TRIGGER]`: takes the shelf down (exit 1 when there was none).
- `history NAME [--trigger T] [--limit N] [--json]`: the last poll verdicts, newest first: per trigger
  what it selected, the transitions it found and what became of each (fired, or held and why).

Exit codes: 0 done, 1 nothing to unshelve (or an unusable store), 2 unknown sensor or trigger, a bad
duration or limit. Never imports trio or mcp.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

__all__ = ["ShelfRefused", "history", "render_history", "shelve", "shelve_target", "unshelve", "unshelve_target"]

EXIT_NOTHING = 1
EXIT_USAGE = 2


def _iso(t: float) -> str:
    """An ISO-8601 UTC time, as `attend sensors` shows times."""
    from attend.runtime.commands import iso_time

    return iso_time(t) or ""


class ShelfRefused(Exception):
    """A shelve or unshelve that did nothing: `message` for the user, `code` the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _resolve(project_dir: Any, text: str) -> tuple[Any, str, str | None]:
    """The sensor set, sensor name and trigger of `NAME[/TRIGGER]`; `ShelfRefused` (usage) when unknown."""
    from attend.spec import load_set

    name, _, trigger = text.partition("/")
    sensor_set = load_set(project_dir)
    sensor = sensor_set.sensors.get(name)
    if sensor is None:
        known = ", ".join(sorted(sensor_set.sensors)) or "none"
        raise ShelfRefused(f"no sensor named {name!r} (known: {known})", EXIT_USAGE)
    triggers = sensor.data.get("triggers") or {}
    if trigger and trigger not in triggers:
        known = ", ".join(triggers) or "none"
        raise ShelfRefused(f"sensor {name!r} has no trigger {trigger!r} (triggers: {known})", EXIT_USAGE)
    return sensor_set, name, trigger or None


def _target(args: Any, text: str) -> tuple[Any, str, str | None, int]:
    """The sensor set, sensor name and trigger of `NAME[/TRIGGER]`, or an exit code after a message."""
    try:
        sensor_set, name, trigger = _resolve(args.project_dir, text)
    except ShelfRefused as refused:
        print(f"attend: {refused.message}", file=sys.stderr)
        return None, text.partition("/")[0], None, refused.code
    return sensor_set, name, trigger, 0


def _store(sensor_set: Any) -> Any:
    from attend.runtime.store import open_project_store

    return open_project_store(sensor_set.paths)


def _reporting_store_errors(handler: Any) -> Any:
    from attend.runtime.commands import reports_unusable_store

    return reports_unusable_store(handler)


def shelve(args: Any) -> int:
    """`attend sensors shelve NAME[/TRIGGER] --for DURATION [--reason TEXT] [--json]`."""
    return _reporting_store_errors(_shelve)(args)


def shelve_target(project_dir: Any, target: str, duration: str, reason: str = "") -> Any:
    """Shelve `NAME[/TRIGGER]` for `duration` (`sensors shelve`; the sensors tab's `s`); the shelf.

    Raises:
        ShelfRefused: a bad duration, or an unknown sensor or trigger (usage).
    """
    from attend.spec.durations import ACCEPTED_FORMS, parse_duration

    try:
        seconds = parse_duration(duration)
    except ValueError:
        raise ShelfRefused(f"--for must be {ACCEPTED_FORMS}, not {duration!r}", EXIT_USAGE) from None
    if seconds <= 0:
        raise ShelfRefused("--for must be above zero (a shelf that expires at once would hold nothing)", EXIT_USAGE)
    sensor_set, name, trigger = _resolve(project_dir, target)
    with _store(sensor_set) as store:
        return store.put_shelf(name, trigger, until=time.time() + seconds, reason=reason or "")


def unshelve_target(project_dir: Any, target: str) -> str:
    """Take the shelf of `NAME[/TRIGGER]` down (`sensors unshelve`; the tab's `S`); the target's name.

    Raises:
        ShelfRefused: an unknown sensor or trigger (usage), or no shelf there (exit 1).
    """
    sensor_set, name, trigger = _resolve(project_dir, target)
    with _store(sensor_set) as store:
        removed = store.remove_shelf(name, trigger)
    shown = name if trigger is None else f"{name}/{trigger}"
    if not removed:
        raise ShelfRefused(f"{shown} is not shelved", EXIT_NOTHING)
    return shown


def _shelve(args: Any) -> int:
    try:
        shelf = shelve_target(args.project_dir, args.target, args.duration, args.reason or "")
    except ShelfRefused as refused:
        print(f"attend: {refused.message}", file=sys.stderr)
        return refused.code
    if args.json:
        print(json.dumps(shelf.to_json(), indent=2))
    else:
        print(f"shelved {shelf.target} until {_iso(shelf.until)} ({args.duration})" + (f": {shelf.reason}" if shelf.reason else ""))
    return 0


def unshelve(args: Any) -> int:
    """`attend sensors unshelve NAME[/TRIGGER]`."""
    return _reporting_store_errors(_unshelve)(args)


def _unshelve(args: Any) -> int:
    try:
        shown = unshelve_target(args.project_dir, args.target)
    except ShelfRefused as refused:
        print(f"attend: {refused.message}", file=sys.stderr)
        return refused.code
    print(f"unshelved {shown}")
    return 0


def history(args: Any) -> int:
    """`attend sensors history NAME [--trigger T] [--limit N] [--json]`."""
    return _reporting_store_errors(_history)(args)


def _history(args: Any) -> int:
    from attend.runtime.noise.query import sensor_noise

    if args.limit < 1:
        print(f"attend: --limit must be at least 1, not {args.limit}", file=sys.stderr)
        return EXIT_USAGE
    target = args.name if not args.trigger else f"{args.name}/{args.trigger}"
    sensor_set, name, trigger, code = _target(args, target)
    if code:
        return code
    with _store(sensor_set) as store:
        data = sensor_noise(store, name, limit=args.limit, trigger=trigger)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    sys.stdout.write(render_history(data))
    return 0


def render_history(data: dict[str, Any]) -> str:
    """The text form of `sensor_noise`'s data: shelves, flapping keys, then each poll, newest first."""
    from attend.runtime.noise.history import HOLD_REASONS

    out = []
    for shelf in data["shelves"]:
        target = shelf["sensor"] if shelf["trigger"] is None else f"{shelf['sensor']}/{shelf['trigger']}"
        out.append(f"shelved: {target} until {_iso(shelf['until'])}" + (f" ({shelf['reason']})" if shelf["reason"] else ""))
    for f in data["flapping"]:
        who = f"{f['trigger']}" + (f" key {f['key']}" if f["key"] is not None else "")
        out.append(f"flapping: {who} since {_iso(f['since'])}, {f['held']} fire(s) held")
    if not data["history"]:
        out.append(f"no polls recorded for {data['sensor']} yet")
    for trace in data["history"]:
        head = f"{_iso(trace['time'])}  {trace['state']}"
        if trace.get("message"):
            head += f"  {trace['message']}"
        out.append(head)
        for part in trace.get("triggers", []):
            out.append(f"  {part['trigger']}: selected {part['selected']}; {part['transition']}")
            for o in part.get("outcomes", []):
                if "more" in o:
                    out.append(f"    … {o['more']} more")
                    continue
                who = "value" if o.get("key") is None else f"key {o['key']}"
                what = o["outcome"]
                if what == "held":
                    reason = o.get("reason", "")
                    what = f"held: {reason}"
                    if o.get("until") is not None:
                        what += f" until {_iso(o['until'])}"
                    what += f" ({HOLD_REASONS.get(reason, reason)})"
                elif what == "queued":
                    what = "queued: waiting for the discloser"
                if o.get("note"):
                    what += f" [{o['note']} notice]"
                text = f"    {who}: {what}"
                if o.get("description"):
                    text += f"  \"{o['description']}\""
                out.append(text)
    return "\n".join(out) + "\n"
