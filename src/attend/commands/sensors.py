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

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from attend.commands import reports_refusals
from attend.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    reason,
)
from attend.redact import redact_data
from attend.text import iso_time, json_text, printable

if TYPE_CHECKING:
    from typing import Protocol

    from attend.commands import JsonArgs, ProjectArgs
    from attend.compiler.sensors import CompiledSensor
    from attend.runtime.reports import SensorRow
    from attend.runtime.store import Store
    from attend.settings.manage import Managed
    from attend.spec.loaded import LayerPaths, SensorSet
    from attend.vocab import JSON

    class PollArgs(JsonArgs, Protocol):
        name: str
        dry_run: bool
        stream_for: str

    class ProbeArgs(JsonArgs, Protocol):
        name: str
        confirm: bool

    class FireArgs(JsonArgs, Protocol):
        target: str
        input: str | None
        dry_run: bool
        commit: bool

    class ShelveArgs(JsonArgs, Protocol):
        target: str
        duration: str
        reason: str | None

    class TargetArgs(ProjectArgs, Protocol):
        target: str

    class HistoryArgs(JsonArgs, Protocol):
        name: str | None
        trigger: str | None
        limit: int
        everything: bool

    class ManageArgs(ProjectArgs, Protocol):
        source: str
        dest: str

# What each command needs beyond these is imported inside it, so a command loads only its own: a test fire
# (`sensors fire`, whose line a person waits for) imports no trio, no MCP SDK and no settings' YAML editor.

__all__ = ["sensors_fire", "sensors_list", "sensors_poll"]



#: `sensors poll` shows at most this many characters of a result in text form.
RESULT_PREVIEW = 4000














def _load(args: ProjectArgs) -> SensorSet:
    from attend.spec import load_set

    return load_set(args.project_dir, os.environ)




def _run_command(project_dir: str) -> str:
    """The `attend run` that polls `project_dir`, ready to paste: `--project` (quoted) unless it is the working directory."""
    import shlex

    if os.path.abspath(os.getcwd()) == project_dir:
        return "attend run"
    return f"attend run --project {shlex.quote(project_dir)}"


@reports_refusals
def sensors_list(args: JsonArgs) -> int:
    """`attend sensors [list] [--json]`: every sensor with kind, layer and file, enabled, live state."""
    from attend.runtime.reports import sensor_rows
    from attend.runtime.sessions.handover import conduits
    from attend.runtime.sessions.status import project_sessions
    from attend.runtime.store import open_project_store

    sensor_set = _load(args)
    assert sensor_set.paths is not None  # load_set always sets the paths it read
    with open_project_store(sensor_set.paths) as store:
        sessions = project_sessions(args.project_dir, store=store, conduits=conduits(args.project_dir))
        rows = sensor_rows(sensor_set, store, args.project_dir, sessions=sessions)
    daemon = sessions.lock_pid is not None
    if getattr(args, "json", False):
        print(json_text(rows, indent=2))
        return 0
    if not rows:
        print(f"no sensors (user sensors go in {sensor_set.paths.user})")
        return 0
    print(_table(rows))
    if not daemon:
        print(f"(no daemon runs for {args.project_dir}: start one with `{_run_command(args.project_dir)}`)")
        if sessions.hooks:
            print(f"sessions: {sessions.describe()}")
    else:
        print(f"sessions: {sessions.describe()}")
    return 0




def _table(rows: list[SensorRow]) -> str:
    from attend.runtime.reports import DISABLED_STATE

    header = ("NAME", "KIND", "LAYER", "ENABLED", "STATE", "LANE", "LAST POLL", "NEXT POLL")
    cells: list[tuple[Any, ...]] = [
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
    # every cell and detail printable on its line: a status message holds a command's stderr, a file name
    # anything the file system allows (issue 28, item 10)
    cells = [tuple(printable(str(v), one_line=True) for v in c) for c in cells]
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
        if row.get("wake_error") and row["daemon_running"]:
            details.append(f"wake_on not watched: {row['wake_error']}")
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
        lines.extend(f"    {printable(d, one_line=True)}" for d in details)
    return "\n".join(lines)


def _find(sensor_set: SensorSet, name: str) -> tuple[CompiledSensor | None, int]:
    from attend.runtime.runnable import compiled_or_error, first_error, runnable

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








@reports_refusals
def sensors_poll(args: PollArgs) -> int:
    """`attend sensors poll NAME [--dry-run] [--json]`: one real poll, its result and each trigger's verdict."""
    from attend.runtime.reports import poll_report

    sensor_set = _load(args)
    compiled, code = _find(sensor_set, args.name)
    if compiled is None:
        return code
    from attend.spec import parse_duration

    try:
        stream_for = parse_duration(args.stream_for)
    except ValueError as exc:
        print(f"attend: --for {args.stream_for}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    session = None
    if compiled.scope == "session":  # polled for one session: its focus, its own trigger and crate state
        from attend.peers.identity import resolve_session

        focus = resolve_session(getattr(args, "session", None))  # a bad id is a SessionError: exit 2
        if not focus.resolved:
            print(f"attend: sensor {compiled.name} is scope: session: name the session to poll it for "
                  "(--session ID, or $ATTEND_SESSION)", file=sys.stderr)
            return EXIT_USAGE
        session = focus.id
    assert sensor_set.paths is not None  # load_set sets it
    report = poll_report(compiled, sensor_set.paths, args.project_dir, dict(os.environ), dry_run=args.dry_run,
                         stream_for=stream_for, session=session)
    if args.json:
        # Written as it is encoded: a result of max_output bytes is never held twice more as text.
        # Redacted as every --json is (attend.redact); json.dump's ASCII escapes leave nothing for a terminal.
        json.dump(redact_data(report), sys.stdout, indent=2, default=str)
        print()
    else:
        print(_poll_text(report))
    return 0 if report["state"] == "ok" else EXIT_FAILED




def _preview(result: object) -> str:
    """The result as indented JSON, cut after RESULT_PREVIEW characters: encoded only that far, so a large
    result costs no time or memory to show."""
    shown: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(indent=2, default=str).iterencode(redact_data(result)):  # redacted before the cut
        shown.append(chunk)
        size += len(chunk)
        if size > RESULT_PREVIEW:
            return "".join(shown)[:RESULT_PREVIEW] + "\n… (more; use --json for the whole result)"
    return "".join(shown)


def _poll_text(report: dict[str, Any]) -> str:
    collected = f"; a stream, collected for {report['collected_for']:g} s" if "collected_for" in report else ""
    lines = [f"sensor {report['sensor']}: {report['state']} ({report['seconds']:.3f} s{collected})"]
    if report["message"]:
        lines.append(f"  message: {report['message']}")
    if report["state"] != "ok":
        lines.append("  trigger state untouched")
        return "\n".join(printable(line) for line in lines)
    result = _preview(report["result"])
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


def _read_input(args: FireArgs) -> tuple[str | None, str]:
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
    from attend.files import FileTooLarge, read_regular_file

    try:
        return read_regular_file(source, cap).decode("utf-8"), ""
    except FileTooLarge:
        return None, too_large
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {source}: {reason(exc)}"


def _parse_result(compiled: CompiledSensor, text: str, name: str) -> tuple[JSON, str, list[str]]:
    """The synthetic result, an error message, and (for a lines sensor) the lines that did not parse."""
    if compiled.output == "lines":
        result, line_errors = compiled.result_from_output(text)
        return result, "", list(line_errors)
    result, error = _parse_document(text, name)
    if compiled.output == "stream" and isinstance(result, list):
        result = {"items": result}  # a list of records, as a test file's `records:`: what the triggers see
    return result, error, []


def _parse_document(text: str, name: str) -> tuple[JSON, str]:
    from attend.compiler.results import MalformedResult, admit, read_json

    try:
        return read_json(text), ""
    except MalformedResult as exc:
        if not exc.syntax:
            return None, f"the input is not a usable poll result: {exc.message}"
    from attend.spec.loading import (
        parse_yaml,  # the strict YAML 1.2 reader `attend test` uses too
    )

    parsed = parse_yaml(text, name)
    if parsed.diagnostics:
        problem = parsed.diagnostics[0]
        where = f"{problem.file}:{problem.line}:{problem.col}: {problem.message}"
        if problem.code == "yaml-syntax":
            return None, f"the input is neither JSON nor YAML: {where}"
        return None, f"the input is not a usable poll result: {where}"
    try:
        loaded = admit(parsed.data)
    except MalformedResult as exc:
        return None, f"the input is not a usable poll result: {exc.message}"
    if not isinstance(loaded, (dict, list)):
        # Any text that is not JSON is still a YAML plain scalar (a file of notes, a log). Read as a
        # string it would select nothing, and every stored item would fire as removed; so a YAML input
        # must be a mapping or a list (a JSON input may be any value).
        what = "plain text" if isinstance(loaded, str) else f"a single {type(loaded).__name__} value"
        return None, f"the input is not a poll result: it is not JSON, and as YAML it is {what}, not a mapping or a list"
    return loaded, ""


@reports_refusals
def sensors_fire(args: FireArgs) -> int:
    """`attend sensors fire NAME[/TRIGGER] [--input FILE|-] [--dry-run] [--commit]`: a synthetic poll result."""
    from attend.runtime.delivery import (
        format_line,
        highest,
        is_stdout_priority,
        priorities,
    )
    from attend.runtime.kinds import PollOutcome
    from attend.runtime.observations import observations_from
    from attend.runtime.store import open_project_store

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
    source = "<stdin>" if args.input in (None, "-") else args.input
    result, error, line_errors = _parse_result(compiled, text, source)
    if error:
        print(f"attend: {error}", file=sys.stderr)
        return EXIT_USAGE
    assert sensor_set.paths is not None  # load_set sets it
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
        observations = observations_from(fires, PollOutcome(result=result, server=_test_server(compiled)), time.time())
        prios = priorities([o.magnitude for o in observations])
        lines = [format_line(name, p, o.description, test=True, key=o.key, meta=o.meta, lane=compiled.lane)
                 for o, p in zip(observations, prios, strict=True)]
        if observations and not args.dry_run:
            store.journal_test(name, observations, lane=compiled.lane, priority=prios)
        if args.commit and not args.dry_run:  # --dry-run wins: nothing is written
            store.put_trigger_states(name, states)
    if getattr(args, "json", False):
        from attend.runtime.reports import fire_json

        print(json_text({
            "sensor": name,
            "trigger": trigger_name or None,
            "lane": compiled.lane,
            "priority": highest(prios),
            "fires": [fire_json(f) for f in fires],
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


def _test_server(compiled: CompiledSensor) -> str | None:
    """The server a real poll of `compiled` would name in its outcome (an MCP sensor's), else None."""
    if compiled.kind != "mcp":
        return None
    try:
        from attend.runtime.mcp.servers import sensor_settings  # not the mcp kind: it imports the MCP SDK

        return sensor_settings(compiled).label
    except Exception:  # noqa: BLE001 - a test line without the server name is still a test line
        return None


@reports_refusals
def sensors_probe(args: ProbeArgs) -> int:
    """`attend sensors probe NAME [--confirm]`: the MCP read-only probe (`runtime.mcp.probe`); writes the probe record."""
    from attend.runtime.mcp.probe import ProbeRefused, probe_target

    env = dict(os.environ)
    try:
        compiled, paths = probe_target(args.project_dir, args.name, env)
    except ProbeRefused as refused:
        return _probe_usage(str(refused))

    import trio

    from attend.runtime.store import open_project_store

    with open_project_store(paths) as store:
        return trio.run(_probe, compiled, paths, env, store, args)


async def _probe(compiled: CompiledSensor, paths: LayerPaths, env: dict[str, str], store: Store, args: ProbeArgs) -> int:
    from attend.errors import RuntimeFailure
    from attend.runtime.kinds.mcp import probe_calls  # the MCP SDK: only when a probe runs

    try:
        run = await probe_calls(compiled, paths, env, args.project_dir, store)
    except RuntimeFailure as failure:
        print(printable(f"attend: probe of {compiled.name}: {failure.state}: {failure.message}", one_line=True),
              file=sys.stderr)
        return EXIT_FAILED
    verdict, settings = run.verdict, run.settings
    out = sys.stdout
    if not args.json:
        out.write(printable(run.describe()))  # the lost keys are the server's words
    confirmed = False
    answer_no = False
    if verdict.ok:
        if args.confirm:
            confirmed = True
        elif sys.stdin.isatty() and not args.json:
            confirmed = _ask(out, run.server_name)
            answer_no = not confirmed
    record = run.record(store, confirmed)

    if args.json:
        print(json_text(record, indent=2, default=str), file=out)
    elif verdict.ok and confirmed:
        print(f"recorded: {compiled.name} may poll {settings.resource or settings.tool} on {run.server_name}", file=out)
    elif verdict.ok and not answer_no:
        print(
            f"recorded without confirmation: {compiled.name} stays unprobed until you check, in another client, that "
            f"the items are untouched and run `attend sensors probe {compiled.name} --confirm`",
            file=out,
        )
    elif answer_no:
        print(f"recorded as not confirmed: {compiled.name} stays unprobed", file=out)
    return EXIT_OK if verdict.ok and not answer_no else EXIT_FAILED


def _ask(out: TextIO, server: str) -> bool:
    from attend.runtime.mcp.probe import CONFIRM_QUESTION

    print(CONFIRM_QUESTION.format(server=server), file=out)
    out.write("Are they untouched? [y/N] ")
    out.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _probe_usage(message: str) -> int:
    print(f"attend: sensors probe: {message}", file=sys.stderr)
    return EXIT_USAGE


@reports_refusals
def sensors_shelve(args: ShelveArgs) -> int:
    """`attend sensors shelve NAME[/TRIGGER] --for DURATION [--reason TEXT] [--json]`."""
    from attend.runtime.noise.shelving import shelve_target

    shelf = shelve_target(args.project_dir, args.target, args.duration, args.reason or "")
    if args.json:
        print(json_text(shelf.to_json(), indent=2))
    else:
        print(f"shelved {shelf.target} until {iso_time(shelf.until)} ({args.duration})" + (f": {shelf.reason}" if shelf.reason else ""))
    return 0


@reports_refusals
def sensors_unshelve(args: TargetArgs) -> int:
    """`attend sensors unshelve NAME[/TRIGGER]`."""
    from attend.runtime.noise.shelving import unshelve_target

    print(f"unshelved {unshelve_target(args.project_dir, args.target)}")
    return 0


@reports_refusals
def sensors_history(args: HistoryArgs) -> int:
    """`attend sensors history [NAME] [--trigger T] [--limit N] [--all] [--json]`."""
    from attend.runtime.noise.history import render_history
    from attend.runtime.noise.query import sensor_noise
    from attend.runtime.noise.shelving import resolve_target
    from attend.runtime.store import open_project_store

    if args.limit < 1:
        print(f"attend: --limit must be at least 1, not {args.limit}", file=sys.stderr)
        return EXIT_USAGE
    if args.name is None:
        if args.trigger:
            print("attend: --trigger needs a sensor: attend sensors history NAME --trigger T", file=sys.stderr)
            return EXIT_USAGE
        return _every_sensor_history(args)
    target = args.name if not args.trigger else f"{args.name}/{args.trigger}"
    sensor_set, name, trigger = resolve_target(args.project_dir, target)
    assert sensor_set.paths is not None  # load_set sets it
    with open_project_store(sensor_set.paths) as store:
        data = sensor_noise(store, name, limit=args.limit, trigger=trigger, everything=args.everything)
    if args.json:
        print(json_text(data, indent=2))
        return 0
    sys.stdout.write(render_history(data))
    return 0


def _every_sensor_history(args: HistoryArgs) -> int:
    """`attend sensors history` without NAME: each sensor's history that has something to show (a poll that
    fired, held or failed something, a shelf, a flapping key; with `--all`, any poll), sensor by sensor; the
    command the away line (`N notifications while this session was away; attend sensors history`) names."""
    from attend.runtime.noise.history import render_history
    from attend.runtime.noise.query import sensor_noise
    from attend.runtime.store import open_project_store
    from attend.spec import load_set

    sensor_set = load_set(args.project_dir)
    assert sensor_set.paths is not None  # load_set sets it
    with open_project_store(sensor_set.paths) as store:
        every = [sensor_noise(store, name, limit=args.limit, everything=args.everything)
                 for name in sorted(sensor_set.sensors)]
    shown = [d for d in every if d["history"] or d["shelves"] or d["flapping"]]
    if args.json:
        print(json_text(shown, indent=2))
        return 0
    if not shown:
        print("no poll of any sensor fired or held anything" + ("" if args.everything else "; --all shows every poll"))
        return 0
    for data in shown:
        print(f"{data['sensor']}:")
        sys.stdout.write("".join(f"  {line}\n" for line in render_history(data).splitlines()))
    return 0


def _report_managed(done: Managed) -> int:
    for line in done.lines:
        print(line)
    for note in done.notes:
        print(note, file=sys.stderr)
    return EXIT_OK


def sensors_copy(args: ManageArgs) -> int:
    """`attend sensors copy SRC DST [--project]`: a sensor, shipped ones included, under a new name."""
    from attend.commands.settings import run_refusable
    from attend.settings.manage import copy_sensor
    from attend.settings.policy import target_layer

    layer = target_layer(args.project_layer)
    return run_refusable(lambda: _report_managed(copy_sensor(args.project_dir, args.source, args.dest, layer)))


def sensors_rename(args: ManageArgs) -> int:
    """`attend sensors rename OLD NEW [--project]`: a user or project file under a new name."""
    from attend.commands.settings import run_refusable
    from attend.settings.manage import rename_sensor
    from attend.settings.policy import target_layer

    layer = target_layer(args.project_layer)
    return run_refusable(lambda: _report_managed(rename_sensor(args.project_dir, args.source, args.dest, layer)))


def sensors_delete(args: ManageArgs) -> int:
    """`attend sensors delete NAME [--project]`: a user or project file (never a shipped one)."""
    from attend.commands.settings import run_refusable
    from attend.settings.manage import delete_sensor
    from attend.settings.policy import target_layer

    layer = target_layer(args.project_layer)
    return run_refusable(lambda: _report_managed(delete_sensor(args.project_dir, args.source, layer)))
