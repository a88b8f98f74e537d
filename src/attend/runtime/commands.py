"""The runtime's one-shot commands: `attend sensors [list]`, `sensors poll`, `sensors fire`, `drain`.

Decisions (docs/runtime.md has the user's view):
- `sensors [list]` loads every layer itself (a daemon need not run) and joins each sensor with its live
  status from the store. A sensor whose file stopped validating shows `invalid` with the error, and
  `running_last_good: true` when a daemon still runs its last good version.
- `sensors poll NAME` runs one real poll through the same code as the daemon (`pipeline.record_poll`),
  against the stored trigger state. Without `--dry-run` it stores the new trigger states, prints the
  fires' lines to the person who ran it and journals them as delivered (printed and drained) in the same
  transaction, so no daemon or drain replays them later as if current. `--dry-run` shows what would fire
  and writes nothing. A failed poll exits 1.
- `sensors fire NAME[/TRIGGER]` sends a synthetic result through the real evaluation (test mode: with
  no stored state it compares with an empty previous poll), the sensor's lane and delivery: the lines
  are printed here and written to the journal as test rows that a running daemon prints on its stdout.
  Engagement and the governor are skipped (a test would otherwise be held or spend the real budget).
  Without `--input` the result is read from standard input when it is not a terminal; otherwise it
  is a usage error (exit 2).
- `drain` prints what the journal holds undelivered on the message lane, then marks it drained (after
  printing: at least once). With `--format hook` it prints a Claude Code Stop-hook decision
  (`{"decision": "block", "reason": ...}`) when there is something and nothing otherwise (exit 0).
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attend.errors import reason
from attend.peers.text import printable
from attend.runtime.runnable import compiled_or_error, first_error, runnable
from attend.runtime.store import StoreUnavailable, open_project_store
from attend.runtime.store.sensor_status import LOAD_STATE, POLL_STATE

__all__ = [
    "DISABLED_STATE", "EXIT_FAILED", "EXIT_USAGE", "poll_report", "reports_unusable_store", "sensor_row",
    "sensor_rows", "sensors_fire", "sensors_list", "sensors_poll",
]

#: Exit code of a poll that failed, or a sensor that cannot poll.
EXIT_FAILED = 1
#: Exit code of a usage error (unknown sensor or trigger, missing input).
EXIT_USAGE = 2

#: The state `attend sensors` shows for a valid sensor turned off with `enabled: false` (it never polls).
DISABLED_STATE = "disabled"

#: `sensors poll` shows at most this many characters of a result in text form.
RESULT_PREVIEW = 4000


def reports_unusable_store(handler: Callable[[Any], int]) -> Callable[[Any], int]:
    """Wrap a command handler so an unusable state store is one line on stderr and exit 1.

    The state folder being a file, or the database a file that is not SQLite, is a problem of the
    user's machine, not a bug in attend, so it must not end as an internal error.
    """

    @functools.wraps(handler)
    def wrapper(args: Any) -> int:
        try:
            return handler(args)
        except StoreUnavailable as exc:
            print(f"attend: {exc}", file=sys.stderr)
            return EXIT_FAILED

    return wrapper


def iso_time(t: float | None) -> str | None:
    """A wall-clock time as ISO-8601 UTC to the second (None stays None): how commands show times."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="seconds")


def _overrides(sensor: Any) -> list[str]:
    """Fields whose value relaxes a safety default, shown beside the sensor."""
    out = []
    if (sensor.data.get("mcp") or {}).get("allow_unannotated"):
        out.append("mcp.allow_unannotated")
    if sensor.data.get("lane_exception"):
        out.append("lane_exception")
    return out


def probe_state(compiled: Any, record: dict[str, Any] | None) -> str | None:
    """An mcp sensor's `unprobed` message when its probe record would not let it poll now, else None.

    What the kind checks before each poll (`mcp_policy.probe_problem`), so a listing shows what the sensor
    would do now: `unprobed` before any daemon polled it, and no longer once a probe recorded it.
    """
    if compiled is None or compiled.kind != "mcp":
        return None
    from attend.runtime.mcp_config import McpSettings
    from attend.runtime.mcp_policy import probe_problem, unprobed_message

    problem = probe_problem(record, McpSettings(compiled.sensor.data.get("mcp")).fingerprint)
    return None if problem is None else unprobed_message(compiled.name, problem)


def sensor_row(
    sensor: Any, status: Any, probe: dict[str, Any] | None = None, compiled: tuple[Any, str] | None = None,
    *, daemon_running: bool = False,
) -> dict[str, Any]:
    """One sensor as `attend sensors list --json` shows it.

    The spec-level states (`invalid`, `refused` and their message) come from `sensor`, loaded from the
    files and config as they are now; the runtime ones (the last poll's state, failures, fires) from
    `status`. A state the daemon recorded at load (`state_source: load`) counts only while a daemon
    runs (it is that daemon's view, and it reloads at once on a change); with none running, a sensor
    now valid and trusted shows what a sensor that never polled shows.

    Args:
        sensor: the loaded sensor.
        status: its status row from the store (None: it never polled).
        probe: an mcp sensor's stored probe record.
        compiled: `compiled_or_error(sensor)` when the caller already has it (the sensors tab keeps it
            between refreshes); computed here otherwise.
        daemon_running: a daemon runs for the project.
    """
    if status is not None and status.state_source == LOAD_STATE and not daemon_running:
        status = _without_load_state(status)
    if compiled is None:
        compiled = compiled_or_error(sensor) if runnable(sensor) else (None, "")
    compiled, compile_error = compiled
    row: dict[str, Any] = {
        "name": sensor.name,
        "kind": sensor.kind,
        "layer": sensor.layer,
        "file": str(sensor.file) if sensor.file else None,
        "enabled": sensor.enabled,
        "description": sensor.data.get("description", ""),
        "state": "ok",
        "message": "",
        "since": None,
        "last_poll": None,
        "next_poll": None,
        "interval": sensor.data.get("interval"),
        "lane": sensor.data.get("lane", "event"),
        "lane_note": "",
        "overrides": _overrides(sensor),
        "requires": list(sensor.data.get("requires") or []),
        "line_errors": [],
        "failures": 0,
        "running_last_good": False,
    }
    if status is not None:
        row.update(
            state=status.state,
            message=status.message,
            since=iso_time(status.since),
            last_poll=iso_time(status.last_poll),
            next_poll=iso_time(status.next_poll) if sensor.enabled else None,
            line_errors=status.line_errors,
            failures=status.failures,
        )
        if status.interval is not None:
            row["interval"] = status.interval
    if compiled is not None:
        row.update(lane=compiled.lane, lane_note=compiled.lane_note or "")
    if not runnable(sensor) or compile_error:
        row.update(state="invalid" if compile_error else sensor.status, message=compile_error or first_error(sensor))
        row["running_last_good"] = bool(status is not None and status.file_error)
        if not row["running_last_good"]:
            row["next_poll"] = None
    elif not sensor.enabled:
        # Not `ok`: a sensor that never polls would otherwise read as healthy (its stored status, if
        # any, is from before it was turned off).
        row.update(
            state=DISABLED_STATE,
            message=f"enabled: false; turn it on with `attend settings set attend.sensors.{sensor.name}.enabled true`",
            next_poll=None,
        )
    else:
        unprobed = probe_state(compiled, probe)
        if unprobed is not None:
            row.update(state="unprobed", message=unprobed)
        elif row["state"] == "unprobed":
            row.update(state="ok", message="probed; the next poll calls the tool")  # the probe cleared it
    return row


def _without_load_state(status: Any) -> Any:
    """`status` with the state recorded at load dropped: the runtime facts (polls, failures) stay."""
    from dataclasses import replace

    return replace(status, state="ok", message="", since=None, state_source=POLL_STATE)


def _load(args: Any) -> Any:
    from attend.spec import load_set

    return load_set(args.project_dir, os.environ)


def sensor_rows(
    sensor_set: Any, store: Any, project_dir: str | Path, compiled: dict[str, tuple[Any, str]] | None = None,
    sessions: Any = None,
) -> list[dict[str, Any]]:
    """Every sensor of `sensor_set` joined with its live status, as `attend sensors list --json` shows it.

    Args:
        sensor_set: the loaded sensors.
        store: the open project store (its status rows are read once).
        project_dir: the project, whose daemon (if one runs) polls the sensors.
        compiled: each sensor's `compiled_or_error` when the caller keeps them (the sensors tab).
        sessions: the project's sessions (`session_status.project_sessions`) when the caller has them.
    """
    from attend.runtime.noise.query import sensor_noise
    from attend.runtime.session_status import project_sessions

    statuses = store.statuses()
    noise = {name: sensor_noise(store, name, limit=1) for name in sensor_set.sensors}
    sessions = sessions if sessions is not None else project_sessions(project_dir, store=store)
    probes = {name: store.get_probe(name) for name, s in sensor_set.sensors.items() if s.kind == "mcp"}
    daemon = sessions.lock_pid
    compiled = compiled or {}
    rows = [_guarded_row(s, statuses.get(name), probes.get(name), compiled.get(name), daemon_running=daemon is not None)
            for name, s in sorted(sensor_set.sensors.items())]
    for row in rows:
        row["shelves"] = noise[row["name"]]["shelves"]
        row["flapping"] = noise[row["name"]]["flapping"]
        row["daemon_running"] = daemon is not None
        row["polling_session"] = sessions.poller.session if sessions.poller else None
        row["attached_sessions"] = [s.session for s in sessions.attached]
        if daemon is None:
            row["next_poll"] = None  # nothing polls without a daemon
    return rows


def _run_command(project_dir: str) -> str:
    """The `attend run` that polls `project_dir`, ready to paste: `--project` (quoted) unless it is the working directory."""
    import shlex

    if os.path.abspath(os.getcwd()) == project_dir:
        return "attend run"
    return f"attend run --project {shlex.quote(project_dir)}"


@reports_unusable_store
def sensors_list(args: Any) -> int:
    """`attend sensors [list] [--json]`: every sensor with kind, layer and file, enabled, live state."""
    from attend.runtime.session_status import project_sessions

    sensor_set = _load(args)
    with open_project_store(sensor_set.paths) as store:
        sessions = project_sessions(args.project_dir, store=store)
        rows = sensor_rows(sensor_set, store, args.project_dir, sessions=sessions)
    daemon = sessions.lock_pid is not None
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no sensors (user sensors go in {sensor_set.paths.user})")
        return 0
    print(_table(rows))
    if not daemon:
        print(f"(no daemon runs for {args.project_dir}: start one with `{_run_command(args.project_dir)}`)")
    else:
        print(f"sessions: {sessions.describe()}")
    return 0


def _guarded_row(
    sensor: Any, status: Any, probe: dict[str, Any] | None = None, compiled: tuple[Any, str] | None = None,
    *, daemon_running: bool = False,
) -> dict[str, Any]:
    """`sensor_row`, with the last-resort guard: a bug showing one sensor shows it `invalid`, not a crash."""
    try:
        return sensor_row(sensor, status, probe, compiled, daemon_running=daemon_running)
    except Exception as exc:  # noqa: BLE001 - this sensor invalid, the rest listed
        return {"name": sensor.name, "kind": None, "layer": sensor.layer, "enabled": False,
                "file": str(sensor.file) if sensor.file else None, "description": "", "state": "invalid",
                "message": f"attend failed showing this sensor ({type(exc).__name__}: {exc}); this is a bug in "
                           "attend, please report it", "since": None, "last_poll": None, "next_poll": None,
                "interval": None, "lane": "event", "lane_note": "", "overrides": [], "requires": [],
                "line_errors": [], "failures": 0, "running_last_good": False}


def _table(rows: list[dict[str, Any]]) -> str:
    header = ("NAME", "KIND", "LAYER", "ENABLED", "STATE", "LANE", "LAST POLL", "NEXT POLL")
    cells = [
        (
            r["name"],
            r["kind"] or "-",
            r["layer"],
            "yes" if r["enabled"] else "no",
            r["state"],
            r["lane"],
            r["last_poll"] or "-",
            r["next_poll"] or "-",
        )
        for r in rows
    ]
    widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(len(header))]
    lines = []
    for row, cell in zip([None, *rows], [header, *cells], strict=True):
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(cell, widths, strict=True)).rstrip())
        if row is None:
            continue
        details = [f"file: {row['file']}"] if row["file"] else []
        if row["message"] and row["state"] != DISABLED_STATE:  # the STATE column says it; one line each is noise
            details.append(f"message: {row['message']}")
        if row["failures"] > 1:
            details.append(f"failed {row['failures']} polls in a row; polling every {row['interval']:g} s")
        if row["running_last_good"]:
            details.append("the daemon keeps running this sensor's last good version")
        for shelf in row.get("shelves", ()):
            target = "shelved" if shelf["trigger"] is None else f"trigger {shelf['trigger']} shelved"
            details.append(f"{target} until {iso_time(shelf['until'])}" + (f": {shelf['reason']}" if shelf["reason"] else ""))
        for f in row.get("flapping", ()):
            who = f["trigger"] + (f" key {f['key']}" if f["key"] is not None else "")
            details.append(f"flapping: {who} since {iso_time(f['since'])}, {f['held']} fire(s) held")
        if row["lane_note"]:
            note = row["lane_note"]  # the compiler's note may already open with `lane:`
            details.append(note if note.startswith("lane:") else f"lane: {note}")
        if row["overrides"]:
            details.append(f"overrides: {', '.join(row['overrides'])}")
        for err in row["line_errors"][:3]:
            details.append(f"line error: {err}")
        lines.extend(f"    {d}" for d in details)
    return "\n".join(lines)


def _find(sensor_set: Any, name: str) -> tuple[Any, int]:
    sensor = sensor_set.sensors.get(name)
    if sensor is None:
        known = ", ".join(sorted(sensor_set.sensors)) or "none"
        print(f"attend: no sensor named {name!r} (known: {known})", file=sys.stderr)
        return None, EXIT_USAGE
    if not runnable(sensor):
        print(f"attend: sensor {name} is {sensor.status}: {first_error(sensor)}", file=sys.stderr)
        return None, EXIT_FAILED
    compiled, error = compiled_or_error(sensor)
    if compiled is None:
        print(f"attend: sensor {name} is invalid: {error}", file=sys.stderr)
        return None, EXIT_FAILED
    return compiled, 0


async def _poll_once(compiled: Any, ctx: Any) -> Any:
    from attend.runtime import kinds

    if compiled.kind != "mcp":
        return await kinds.poll(compiled, ctx)
    from attend.runtime.mcp_pool import running_pool

    async with running_pool(ctx):
        return await kinds.poll(compiled, ctx)


def _poll_guarded(compiled: Any, ctx: Any) -> Any:
    """One poll; a kind's unforeseen exception is this poll's failure (as in the daemon), never a crash."""
    import trio

    from attend.runtime.kinds import PollOutcome

    try:
        return trio.run(_poll_once, compiled, ctx)
    except Exception as exc:  # noqa: BLE001 - a kind's bug: the poll failed, state untouched
        return PollOutcome.failed("unavailable", f"the poll raised {type(exc).__name__}: {exc}")


def _fire_json(fire: Any) -> dict[str, Any]:
    return {"trigger": fire.trigger, "key": fire.key, "magnitude": fire.magnitude, "description": fire.description}


@reports_unusable_store
def sensors_poll(args: Any) -> int:
    """`attend sensors poll NAME [--dry-run] [--json]`: one real poll, its result and each trigger's verdict."""
    sensor_set = _load(args)
    compiled, code = _find(sensor_set, args.name)
    if compiled is None:
        return code
    report = poll_report(compiled, sensor_set.paths, args.project_dir, dict(os.environ), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(_poll_text(report))
    return 0 if report["state"] == "ok" else EXIT_FAILED


def poll_report(
    compiled: Any, paths: Any, project_dir: str | Path, env: dict[str, str], *, dry_run: bool,
) -> dict[str, Any]:
    """One real poll of `compiled` and each trigger's verdict: what `attend sensors poll` reports.

    Args:
        compiled: the compiled sensor (the sensors tab passes a pending edit of it, not yet written).
        paths: the layer paths (the store's location).
        project_dir: the project directory.
        env: the environment the poll sees.
        dry_run: store nothing (`--dry-run`): evaluate against the trigger states the store holds (read,
            never written), what the next real poll would fire (the tab's preview). A real poll's fires are
            in the report's `lines`, which its caller shows: they are journaled as delivered.
    """
    from attend.runtime.delivery import format_line
    from attend.runtime.kinds import PollContext
    from attend.runtime.pipeline import record_poll

    with open_project_store(paths) as store:
        ctx = PollContext(project_dir=Path(project_dir), env=env, paths=paths, store=store)
        started = time.monotonic()
        outcome = _poll_guarded(compiled, ctx)
        elapsed = time.monotonic() - started
        # A dry run evaluates against the stored state (what the next real poll would fire) and writes
        # nothing; a real one shows its fires here and journals them as delivered (never replayed).
        record = record_poll(store, compiled, outcome, now=time.time(), dry_run=dry_run, shown=True)
    step = record.step
    lines = [format_line(compiled.name, prio, o.description, key=o.key, meta=o.meta)
             for o, prio in zip(record.observations, record.priorities, strict=True)]
    report = {
        "sensor": compiled.name,
        "state": record.state,
        "message": record.message,
        "seconds": round(elapsed, 3),
        "result": outcome.result,
        "line_errors": list(outcome.line_errors),
        "triggers": list(step.verdicts) if step is not None else [],
        "fires": [_fire_json(f) for f in step.fires if f not in record.shelved] if step is not None else [],
        "held": [
            {"trigger": part["trigger"], **{k: v for k, v in o.items() if k != "outcome"}}
            for part in record.trace.get("triggers", []) for o in part["outcomes"] if o.get("outcome") == "held"
        ],
        "warnings": list(step.warnings) if step is not None else [],
        "stored": not dry_run and record.state == "ok",
        "dry_run": bool(dry_run),
        "priority": record.priority if record.observations else None,
        "lines": lines,
        "delivered": bool(lines) and not dry_run,
    }
    if outcome.meta.get("server"):
        report["server"] = outcome.meta["server"]
    return report


def _poll_text(report: dict[str, Any]) -> str:
    lines = [f"sensor {report['sensor']}: {report['state']} ({report['seconds']:.3f} s)"]
    if report["message"]:
        lines.append(f"  message: {report['message']}")
    if report["state"] != "ok":
        lines.append("  trigger state untouched")
        return "\n".join(printable(line) for line in lines)
    result = json.dumps(report["result"], indent=2, default=str)
    if len(result) > RESULT_PREVIEW:
        result = result[:RESULT_PREVIEW] + f"\n… ({len(result) - RESULT_PREVIEW} more characters; use --json)"
    lines.append("result:")
    lines.extend(f"  {line}" for line in result.splitlines())
    for err in report["line_errors"]:
        lines.append(f"  line error: {err}")
    for verdict in report["triggers"]:
        lines.append(f"trigger {verdict.get('trigger')}: {verdict.get('transition', '')}")
    verb = "would fire" if report["dry_run"] else "fire"
    for fire in report["fires"]:
        lines.append(f"  {verb}: {printable(str(fire['description']), one_line=True)} (trigger {fire['trigger']}, magnitude {fire['magnitude']:g})")
    for held in report["held"]:
        who = "" if held.get("key") is None else f" key {held['key']}"
        until = f" until {iso_time(held['until'])}" if held.get("until") is not None else ""
        lines.append(f"  held: trigger {held['trigger']}{who}: {held.get('reason', '')}{until}")
    for warning in report["warnings"]:
        lines.append(f"  warning: {warning}")
    if report["dry_run"]:
        lines.append("dry run: nothing stored (evaluated against the stored trigger state: this is what a real poll would fire now)")
        return "\n".join(printable(line) for line in lines)
    lines.extend(report["lines"])
    if report["lines"]:
        lines.append("stored: trigger state; the lines above are journaled as delivered (no daemon prints them again)")
    else:
        lines.append("stored: trigger state")
    return "\n".join(printable(line) for line in lines)


def _read_input(args: Any) -> tuple[str | None, str]:
    """The synthetic result's text, or an error message."""
    source = args.input
    if source is None:
        if sys.stdin is None or sys.stdin.isatty():
            return None, "give the result with --input FILE (or - for standard input), or pipe it in"
        source = "-"
    from attend.bounds import MAX_INPUT_BYTES

    cap = MAX_INPUT_BYTES
    too_large = f"the input is larger than {cap} bytes (the cap on a poll result); nothing was read past it"
    if source == "-":
        text = sys.stdin.read(cap + 1)
        return (None, too_large) if len(text.encode("utf-8", "surrogateescape")) > cap else (text, "")
    try:
        with open(source, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None, f"cannot read {source}: not a regular file"
            data = handle.read(cap + 1)
        if len(data) > cap:
            return None, too_large
        return data.decode("utf-8"), ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {source}: {reason(exc)}"


def _parse_result(compiled: Any, text: str) -> tuple[Any, str, list[str]]:
    """The synthetic result, an error message, and (for a lines sensor) the lines that did not parse."""
    if compiled.output == "lines":
        result, line_errors = compiled.result_from_output(text)
        return result, "", list(line_errors)
    result, error = _parse_document(text)
    return result, error, []


def _parse_document(text: str) -> tuple[Any, str]:
    from attend.compiler.results import MalformedResult, admit, read_json

    try:
        return read_json(text), ""
    except MalformedResult as exc:
        if not exc.syntax:
            return None, f"the input is not a usable poll result: {exc.message}"
    import yaml

    try:
        loaded = admit(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        return None, f"the input is neither JSON nor YAML: {exc}"
    except MalformedResult as exc:
        return None, f"the input is not a usable poll result: {exc.message}"
    except (ValueError, RecursionError) as exc:  # an integer past Python's limit, a document too deep
        return None, f"the input is not a usable poll result: {type(exc).__name__}: {str(exc)[:200]}"
    if not isinstance(loaded, (dict, list)):
        # Any text that is not JSON is still a YAML plain scalar (a file of notes, a log). Read as a
        # string it would select nothing, and every stored item would fire as removed; so a YAML input
        # must be a mapping or a list (a JSON input may be any value).
        what = "plain text" if isinstance(loaded, str) else f"a single {type(loaded).__name__} value"
        return None, f"the input is not a poll result: it is not JSON, and as YAML it is {what}, not a mapping or a list"
    return loaded, ""


@reports_unusable_store
def sensors_fire(args: Any) -> int:
    """`attend sensors fire NAME[/TRIGGER] [--input FILE|-] [--dry-run] [--commit]`: a synthetic poll result."""
    from attend.runtime.delivery import format_line, highest, is_stdout_priority, priorities
    from attend.runtime.kinds import PollOutcome
    from attend.runtime.pipeline import observations_from

    name, _, trigger_name = args.target.partition("/")
    sensor_set = _load(args)
    compiled, code = _find(sensor_set, name)
    if compiled is None:
        return code
    if trigger_name and trigger_name not in compiled.triggers:
        known = ", ".join(compiled.triggers) or "none"
        print(f"attend: sensor {name} has no trigger {trigger_name!r} (known: {known})", file=sys.stderr)
        return EXIT_USAGE
    text, error = _read_input(args)
    if text is None:
        print(f"attend: {error}", file=sys.stderr)
        return EXIT_USAGE
    if not text.strip():
        print("attend: the input is empty: give a poll result (JSON or YAML; raw lines for a lines sensor)",
              file=sys.stderr)
        return EXIT_USAGE
    result, error, line_errors = _parse_result(compiled, text)
    if error:
        print(f"attend: {error}", file=sys.stderr)
        return EXIT_USAGE
    with open_project_store(sensor_set.paths) as store:
        stored = store.trigger_states(name)
        if trigger_name:
            trigger = compiled.triggers[trigger_name]
            evaluation = trigger.evaluate(stored.get(trigger.definition_hash), result, test=True)
            fires, states, warnings = evaluation.fires, {trigger.definition_hash: evaluation.state}, evaluation.warnings
            verdicts = [evaluation.verdict]
        else:
            step = compiled.step(stored, result, test=True)
            fires, states, warnings, verdicts = step.fires, step.states, step.warnings, step.verdicts
        held = [{"trigger": v["trigger"], **{k: x for k, x in o.items() if k != "outcome"}}
                for v in verdicts if v for o in v.get("outcomes", ()) if o.get("outcome") == "held"]
        observations = observations_from(fires, PollOutcome(result=result, meta=_test_meta(compiled)), time.time())
        prios = priorities([o.magnitude for o in observations], compiled.lane)
        lines = [format_line(name, p, o.description, test=True, key=o.key, meta=o.meta)
                 for o, p in zip(observations, prios, strict=True)]
        if observations and not args.dry_run:
            store.journal_test(name, observations, lane=compiled.lane, priority=prios)
        if args.commit and not args.dry_run:  # --dry-run wins: nothing is written
            store.put_trigger_states(name, states)
    if getattr(args, "json", False):
        print(json.dumps({
            "sensor": name,
            "trigger": trigger_name or None,
            "lane": compiled.lane,
            "priority": highest(prios),
            "fires": [_fire_json(f) for f in fires],
            "held": held,
            "lines": lines,
            "warnings": list(warnings),
            "line_errors": line_errors,
            "delivered": bool(observations) and not args.dry_run,
            "committed": bool(args.commit) and not args.dry_run,
        }, indent=2, default=str))
        if args.commit and args.dry_run:
            print(_COMMIT_IGNORED, file=sys.stderr)
        return 0
    for warning in warnings:
        print(f"attend: warning: {warning}", file=sys.stderr)
    for line_error in line_errors:  # never dropped silently (DESIGN.md, command kind); the valid lines count
        print(f"attend: line error: {line_error}", file=sys.stderr)
    if not observations:
        print(f"no fire: {name}{'/' + trigger_name if trigger_name else ''} produced nothing for this input")
    for h in held:  # a `for:` waits in the state even for a test fire (--commit keeps the wait)
        until = f" until {iso_time(h['until'])}" if h.get("until") is not None else ""
        print(f"held: trigger {h['trigger']}{'' if h.get('key') is None else ' key ' + str(h['key'])}: {h.get('reason', '')}{until}")
    for line, prio in zip(lines, prios, strict=True):
        if args.dry_run:
            print(f"would deliver ({compiled.lane} lane): {line}")
        else:
            print(line, file=sys.stdout if is_stdout_priority(prio) else sys.stderr)
    if args.commit and args.dry_run:
        print(_COMMIT_IGNORED, file=sys.stderr)
    elif args.commit:
        print(f"committed the trigger state of {name}: the next real poll compares with this input "
              "(its differences from the real result fire as real notifications)", file=sys.stderr)
    elif args.dry_run:
        print("dry run: nothing written", file=sys.stderr)
    return 0


#: What `sensors fire --dry-run --commit` says: the dry run wins.
_COMMIT_IGNORED = "dry run: --commit ignored, nothing written (no journal line, no trigger state)"


def _test_meta(compiled: Any) -> dict[str, Any]:
    """What a real poll of `compiled` would carry in its outcome's meta (an MCP sensor's server name)."""
    if compiled.kind != "mcp":
        return {}
    try:
        from attend.runtime.kinds.mcp import sensor_settings

        return {"server": sensor_settings(compiled).label}
    except Exception:  # noqa: BLE001 - a test line without the server name is still a test line
        return {}
