"""`attend explain NAME[/TRIGGER] [--json]`: a merged sensor with provenance and each trigger's plan.

Shows every field of the merged sensor with the layer and file:line it came from (or `default`), the
effective lane and why, the overrides a reader should notice (`mcp.allow_unannotated: true`, a
`lane_exception`), what the daemon watches for it (`wake_on`, the file's and what a crate sensor
declares, resolved to folders as runtime/watching/targets.py does), and for each trigger its compiled
plan (`compiler.plan`; an invalid sensor's triggers show why none is shown instead, `plan_withheld`:
a plan built from the values the spec rejects would describe what never runs). Problems are listed in
`compile --check`'s order (`errors.by_position`). Exit codes: 0 shown;
1 shown, but the sensor is invalid or a trigger does not compile (the problems are listed);
2 unknown sensor or trigger.
Never imports trio or mcp.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from attend import ir
from attend.errors import EXIT_USAGE, CompileError
from attend.spec.headers import shown_value
from attend.text import json_text, printable

if TYPE_CHECKING:
    from typing import NotRequired, Protocol, TypedDict

    from attend.commands import JsonArgs
    from attend.compiler.plan import NoisePlan, TriggerPlan, WherePlan
    from attend.spec.loaded import MergedSensor

    class ExplainArgs(JsonArgs, Protocol):
        target: str

    # What `attend explain --json` prints (explain_data), piece by piece.
    class FieldRow(TypedDict):
        field: str
        value: object
        layer: str
        file: str | None
        line: int | None

    class OverrideRow(TypedDict):
        override: str
        meaning: str
        file: str | None
        line: int | None

    class WakeRow(TypedDict):
        pattern: str
        declared_by: str
        watch: str
        recursive: bool
        matches: str
        exists: bool
        refused: NotRequired[str]

    class WakeRows(TypedDict):
        paths: list[WakeRow]
        note: str

    class TriggerEntry(TypedDict):
        name: str
        fields: list[FieldRow]
        error: NotRequired[str]
        plan_withheld: NotRequired[str]
        plan: NotRequired[TriggerPlan]

    class FileRow(TypedDict):
        layer: str
        file: str

    class LaneRow(TypedDict):
        declared: str
        effective: str
        note: str

    class ExplainData(TypedDict):
        sensor: str
        status: str
        layer: str
        files: list[FileRow]
        lane: LaneRow
        fields: list[FieldRow]
        overrides: list[OverrideRow]
        wake_on: WakeRows
        triggers: list[TriggerEntry]
        diagnostics: list[dict[str, object]]
        stream: NotRequired[dict[str, str]]
        mcp: NotRequired[dict[str, str]]

__all__ = ["explain_data", "main", "render_text"]


#: Why an invalid sensor's triggers show no compiled plan (`plan_withheld` in `--json`).
INVALID_PLAN = "the sensor is invalid (its problems are listed above), so it never runs"


def _flatten(value: object, prefix: tuple[str, ...], out: list[tuple[tuple[str, ...], object]]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(v, prefix + (str(k),), out)
    else:
        out.append((prefix, value))


def _rows(sensor: MergedSensor, data: object, prefix: tuple[str, ...]) -> list[FieldRow]:
    """One row per leaf field of `data` (found at `prefix` in the sensor) with where it came from.

    Only a field's own origin counts: a default the spec filled into a block has none, so it shows as
    `default` rather than borrowing its block's file.
    """
    flat: list[tuple[tuple[str, ...], object]] = []
    _flatten(data, (), flat)
    rows: list[FieldRow] = []
    for keypath, value in flat:
        origin = sensor.origins.get(prefix + keypath)
        rows.append({
            "field": ".".join(keypath),
            "value": shown_value(prefix + keypath, value),  # a header's credential hidden, the rest redacted
            "layer": origin.layer if origin else "default",
            "file": origin.file if origin else None,
            "line": origin.line if origin else None,
        })
    return rows


def _fields(sensor: MergedSensor) -> list[FieldRow]:
    # the document as written (with its defaults filled in), field by field: explain shows the file, so it reads
    # `data`; everything it says a field does comes from the typed record, `sensor.ir`
    return _rows(sensor, {k: v for k, v in sensor.data.items() if k != "triggers"}, ())


def _overrides(sensor: MergedSensor, lane: str, note: str) -> list[OverrideRow]:
    out: list[OverrideRow] = []
    fields = sensor.ir
    if fields.mcp is not None and fields.mcp.allow_unannotated:
        origin = sensor.origin("mcp", "allow_unannotated")
        out.append({"override": "mcp.allow_unannotated: true",
                    "meaning": "the MCP tool may run without declaring readOnlyHint: true",
                    "file": origin.file if origin else None, "line": origin.line if origin else None})
    if fields.lane_exception:
        origin = sensor.origin("lane_exception")
        out.append({"override": f"lane_exception: {fields.lane_exception}",
                    "meaning": "message lane without author (honoured in shipped files only)",
                    "file": origin.file if origin else None, "line": origin.line if origin else None})
    if note:
        out.append({"override": f"lane: {fields.lane} → {lane}", "meaning": note, "file": None, "line": None})
    return out


def _crate_wake_on(sensor: MergedSensor, project_dir: Path, env: dict[str, str]) -> tuple[list[str], str]:
    """What a crate sensor's object declares in `wake_on(focus)`, and a note when it could not say."""
    fields = sensor.ir
    if fields.kind != "crate":
        return [], ""
    from attend.sensors.base import focus_from_env
    from attend.sensors.registry import load_sensor_class

    try:
        cls = load_sensor_class(fields.source or "")
        if not callable(getattr(cls, "wake_on", None)):
            return [], ""
        block = {k: v for k, v in fields.crate.items() if k != "timeout"}
        return [str(p) for p in cls(block).wake_on(focus_from_env(project_dir, env))], ""
    except Exception as exc:  # noqa: BLE001 - third-party code: say why, show the rest
        return [], f"the compiled sensor's wake_on could not be read: {type(exc).__name__}: {exc}"


def wake_rows(sensor: MergedSensor, project_dir: Path, env: dict[str, str]) -> WakeRows:
    """Each `wake_on` entry (the file's, then the crate's) with the folder the daemon watches for it."""
    from attend.runtime.watching.targets import (
        PROJECT_OUTSIDE,
        inside_project,
        watch_target,
    )

    origin = sensor.origin("wake_on")
    from_project = origin is not None and origin.layer == "project"
    declared = [(p, "file") for p in sensor.ir.wake_on]
    crate, note = _crate_wake_on(sensor, project_dir, env)
    declared += [(p, f"crate {sensor.ir.source}") for p in crate]
    from attend.runtime.kinds.process import branch_wake_on

    declared += [(p, "argv {branch}") for p in branch_wake_on(sensor.ir, project_dir)]
    rows: list[WakeRow] = []
    for pattern, by in declared:
        target = watch_target(pattern, project_dir, home=env.get("HOME"))
        row: WakeRow = {"pattern": pattern, "declared_by": by, "watch": str(target.base),
               "recursive": target.recursive, "matches": target.glob, "exists": target.base.is_dir()}
        if by == "file" and from_project and not inside_project(target, project_dir):
            row["refused"] = PROJECT_OUTSIDE
        rows.append(row)
    return {"paths": rows, "note": note}


def stream_rows(fields: ir.Sensor) -> dict[str, str]:
    """How a streaming command (`output: stream`) runs, as explain shows it."""
    from attend.bounds import STREAM_BUFFER_BYTES, STREAM_BUFFER_LINES
    from attend.compiler.triggers import STREAM_KEYS_KEPT
    from attend.spec.schema import DEFAULT_MAX_LINE

    block = fields.command
    cursor = block.cursor if block is not None else None
    return {
        "process": "one process for as long as the daemon runs, in its own process group; when it exits it is "
                   "started again after a jittered backoff (reset after a healthy minute)",
        "records": f"each line (at most {block.max_line if block is not None else DEFAULT_MAX_LINE} bytes: a longer one "
                   f"is cut and counted) read as {block.stream_format if block is not None else 'json'}; triggers see "
                   f"{{items: [the records since the last evaluation]}}, evaluated at most every {fields.min_interval:g}s",
        "buffer": f"at most {STREAM_BUFFER_LINES} lines / {STREAM_BUFFER_BYTES} bytes wait for an evaluation; more "
                  "coalesce (the oldest are dropped and counted in the status)",
        "keys": f"a keyed trigger's current items are the newest record per key, kept until a newer one comes (never "
                f"removed; the {STREAM_KEYS_KEPT} most recent keys are kept)",
        "cursor": (f"{cursor}: the last record's value is remembered (also across daemon restarts) and put into argv "
                   "as {cursor} when the process starts again; an argument with {cursor} is left out while none is "
                   "known") if cursor else "none: a restarted process starts wherever it starts",
    }


def explain_data(
    sensor: MergedSensor, only_trigger: str | None = None, *, project_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> ExplainData:
    """Everything explain shows about one sensor, as JSON-ready data.

    `project_dir` (default: the working directory) and `env` (default: os.environ) resolve the
    sensor's `wake_on` paths as the daemon would.
    """
    import os

    from attend.compiler.diagnostics import origins_by_trigger
    from attend.compiler.plan import trigger_plan
    from attend.compiler.sensors import effective_lane
    from attend.compiler.triggers import CompiledTrigger
    from attend.errors import by_position
    from attend.grammar import parse_trigger
    from attend.runtime.runnable import runnable

    # An invalid sensor never runs: a plan built from the values it rejects (a magnitude over its bound)
    # would describe something that cannot happen, so each trigger says why none is shown instead.
    withheld = "" if sensor.status != "invalid" or runnable(sensor) else INVALID_PLAN
    fields = sensor.ir
    compiled: dict[str, CompiledTrigger] = {}
    plans: list[TriggerEntry] = []
    by_trigger = origins_by_trigger(sensor.origins)
    for declared in fields.triggers:
        name, definition = declared.name, declared.definition
        if only_trigger is not None and name != only_trigger:
            continue
        origins = by_trigger.get(name, {})
        entry: TriggerEntry = {"name": name, "fields": _rows(sensor, definition, ("triggers", name))}  # as written
        try:
            trigger = CompiledTrigger(parse_trigger(definition, name, origins), fields.flap, stream=fields.is_stream)
        except CompileError as exc:
            entry["error"] = str(exc)
        else:
            compiled[name] = trigger
            if withheld:
                entry["plan_withheld"] = withheld
            else:
                plan = trigger_plan(trigger)
                plan["supersedes"] = _supersedes(name, fields.triggers)
                entry["plan"] = plan
        plans.append(entry)
    lane: str
    if only_trigger is None and len(compiled) == len(fields.triggers):
        lane, note = effective_lane(sensor, compiled)
    else:
        lane, note = fields.lane, ""
    data: ExplainData = {
        "sensor": sensor.name,
        "status": sensor.status,
        "layer": sensor.layer,
        "files": [{"layer": f.layer, "file": str(f.path)} for f in sensor.files],
        "lane": {"declared": fields.lane, "effective": lane, "note": note},
        "fields": _fields(sensor),
        "overrides": _overrides(sensor, lane, note),
        "wake_on": wake_rows(sensor, Path(project_dir or Path.cwd()), dict(os.environ if env is None else env)),
        "triggers": plans,
        "diagnostics": [d.to_json() for d in sorted(sensor.diagnostics, key=by_position)],
    }
    if fields.is_stream:
        data["stream"] = stream_rows(fields)
    if fields.kind == "mcp":
        data["mcp"] = _mcp_rows(fields)
    return data


def _mcp_rows(fields: ir.Sensor) -> dict[str, str]:
    from attend.runtime.mcp.servers import describe_mcp

    return describe_mcp(fields.mcp)


def _supersedes(name: str, triggers: tuple[ir.SensorTrigger, ...]) -> dict[str, list[str]]:
    """Which triggers `name` supersedes, and which supersede it (compiler/findings.py)."""
    return {"supersedes": [s for t in triggers if t.name == name for s in t.supersedes],
            "superseded_by": [t.name for t in triggers if name in t.supersedes]}


def _value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _where_lines(where: WherePlan | None) -> list[str]:
    if where is None:
        return ["    where:       (none: every item holds)"]
    lines = [f"    where:       {where['match']} of:"]
    for c in where["conditions"]:
        head = f"      {c['property']}  [{c['property_mode']}"
        if "compiled" in c:
            head += f"; compiled {c['compiled']}"
        lines.append(head + f"; when missing: {c['when_missing']}]")
        for t in c["tests"]:
            text = f"        {t['op']} {_value(t['operand'])}  ({t['mode']}"
            if "compiled" in t:
                text += f", pattern {t['compiled']!r}, {t['flags']}"
            if "note" in t:
                text += f"; {t['note']}"
            if t["bare"]:
                text += "; implied by a bare value"
            lines.append(text + ")")
    return lines


def _noise_lines(noise: NoisePlan) -> list[str]:
    """The noise controls of a plan: `for`, `clear_where`, `flap` (DESIGN.md, Noise controls)."""
    hold = noise["for"]
    lines = [f"    for:         {hold['seconds']:g}s: {hold['rule']}" if hold else "    for:         (none: a transition fires at once)"]
    if noise["clear_where"] is not None:
        lines += [line.replace("    where:      ", "    clear_where:", 1) for line in _where_lines(noise["clear_where"])]
        lines.append(f"                 {noise['hysteresis']}")
    flap = noise["flap"]
    lines.append(f"    flap:        {flap['rule']}  ({flap['from']})")
    return lines


def _plan_lines(plan: TriggerPlan) -> list[str]:
    lines = [f"    path:        {plan['path']['expression']}  ({plan['path']['walk']})"]
    lines += [f"      {s['segment']:<14} {s['selects']}" for s in plan["path"]["steps"]]
    lines += [f"      stage {st['stage']:<10} {st['segments'] or '$'}: {st['does']}" for st in plan["path"]["stages"]]
    lines.append(f"    key:         {plan['key'] or '(none)'}  → {plan['items']}")
    lines.append(f"    on:          {plan['on']}: fires on {plan['rule']}")
    lines += _where_lines(plan["where"])
    lines.append(f"    magnitude:   {plan['magnitude']:g}")
    parts = ", ".join(f"literal {_value(p['literal'])}" if "literal" in p else f"field {{{p['field']}}}"
                      for p in plan["description"]["parts"]) or "(empty)"
    lines.append(f"    description: {_value(plan['description']['template'])} = {parts}")
    if plan["author"]:
        lines.append(f"    author:      {plan['author']}")
    lines += _noise_lines(plan["noise"])
    rel = plan.get("supersedes") or {}
    if rel.get("supersedes"):
        lines.append(f"    supersedes:  {', '.join(rel['supersedes'])}: when this trigger fires, their fires of the "
                     "same poll are dropped (history: held: superseded by this trigger)")
    if rel.get("superseded_by"):
        lines.append(f"    superseded:  by {', '.join(rel['superseded_by'])}: a fire of theirs in the same poll "
                     "drops this trigger's fire")
    lines.append(f"    first poll:  {plan['state']['first_poll']}")
    lines.append(f"    state:       {_value(plan['state']['shape'])}")
    lines.append(f"                 keeps {plan['state']['keeps']}")
    lines.append(f"    definition:  {plan['definition_hash']}  (edits to path, key, on, where, clear_where, match, initial or author re-baseline)")
    return lines


def _origin(row: FieldRow) -> str:
    return "default" if row["file"] is None else f"{row['layer']}  {row['file']}:{row['line']}"


def _field_lines(rows: list[FieldRow]) -> list[str]:
    """One aligned line per field row: name, value and where it came from."""
    width = max((len(r["field"]) for r in rows), default=0)
    return [f"    {row['field']:<{width}}  {_value(row['value']):<28}  {_origin(row)}" for row in rows]


def render_text(data: ExplainData) -> str:
    """The human form of `explain_data`."""
    out = [f"sensor {data['sensor']}  (status {data['status']}, top layer {data['layer']})"]
    out += [f"  file ({f['layer']}): {f['file']}" for f in data["files"]]
    lane = data["lane"]
    out.append(f"  lane: {lane['effective']}" + (f"  (declared {lane['declared']}: {lane['note']})" if lane["note"] else ""))
    out.append("  fields:")
    out += _field_lines(data["fields"])
    if data["overrides"]:
        out.append("  overrides:")
        for o in data["overrides"]:
            where = f"  ({o['file']}:{o['line']})" if o["file"] else ""
            out.append(f"    {o['override']}: {o['meaning']}{where}")
    wake = data["wake_on"]
    if wake["paths"] or wake["note"]:
        out.append("  wakes on (a change polls at once, no sooner than min_interval):")
        for w in wake["paths"]:
            if "refused" in w:
                out.append(f"    {w['pattern']}  ({w['declared_by']})  → not watched: {w['refused']}")
                continue
            how = "recursively" if w["recursive"] else "flat"
            missing = "" if w["exists"] else "; not there yet: its nearest existing folder is watched"
            out.append(f"    {w['pattern']}  ({w['declared_by']})  → watches {w['watch']} {how}, "
                       f"wakes on {w['matches']}{missing}")
        if wake["note"]:
            out.append(f"    {wake['note']}")
    if data.get("stream"):
        out.append("  stream (output: stream):")
        out += [f"    {name}: {text}" for name, text in data["stream"].items()]
    if data.get("mcp"):
        out.append("  mcp (kind: mcp):")
        out += [f"    {name}: {text}" for name, text in data["mcp"].items()]
    if data["diagnostics"]:
        out.append("  problems:")
        out += [f"    {d['file']}:{d['line']}:{d['col']}: {d['severity']}: [{d['code']}] {d['message']}" for d in data["diagnostics"]]
    for t in data["triggers"]:
        out.append(f"  trigger {t['name']}:")
        out += _field_lines(t["fields"])
        if "error" in t:
            out.append(f"    does not compile: {t['error']}")
        elif "plan_withheld" in t:
            out.append(f"   compiled plan: not shown: {t['plan_withheld']}")
        else:
            out.append("   compiled plan:")
            out += _plan_lines(t["plan"])
    return "\n".join(out) + "\n"


def main(args: ExplainArgs) -> int:
    """`attend explain NAME[/TRIGGER] [--json]`."""
    from attend.spec import load_set

    name, _, trigger = args.target.partition("/")
    sset = load_set(Path(args.project_dir))
    sensor = sset.sensors.get(name)
    if sensor is None:
        known = ", ".join(sorted(sset.sensors)) or "none"
        print(f"attend: no sensor named {name!r} (known: {known})", file=sys.stderr)
        return EXIT_USAGE
    triggers = [t.name for t in sensor.ir.triggers]
    if trigger and trigger not in triggers:
        known = ", ".join(triggers) or "none"
        print(f"attend: sensor {name!r} has no trigger {trigger!r} (triggers: {known})", file=sys.stderr)
        return EXIT_USAGE
    data = explain_data(sensor, trigger or None, project_dir=Path(args.project_dir))
    if args.json:
        print(json_text(data, indent=2, default=str))
    else:
        sys.stdout.write(printable(render_text(data)))  # redacted and escaped, as every text (attend.text)
    broken = any("error" in t for t in data["triggers"])
    return 1 if sensor.status == "invalid" or broken else 0
