"""`attend sensors probe NAME [--confirm] [--json]`: the MCP read-only probe and its record (ADR-403 §4).

The MCP specification makes `readOnlyHint` advisory, so before an mcp sensor polls, the probe calls its
tool twice in a row and checks, by each keyed trigger's key, that the second result still holds every
item of the first (a cursor that advances or a listing that hides what it returned fails here). It then
asks the operator to confirm in another client that the items are untouched (read state the result
cannot show). The record (server, tool, args, both results, the verdict, the answer, the time and a
fingerprint of server, tool and args) goes into the store; the kind polls only with a record whose
fingerprint matches, whose comparison passed and whose items were confirmed.

Exit codes: 0 the comparison passed and the record was written (confirmed, or unconfirmed without a
terminal: the output says how to confirm); 1 the probe failed (items disappeared, the operator answered
no, or the tool could not be called: its state is printed); 2 usage (unknown sensor, not an mcp sensor,
an invalid sensor).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.errors import EXIT_USAGE, Refusal

if TYPE_CHECKING:
    from attend.compiler import CompiledSensor, CompiledTrigger
    from attend.runtime.mcp.servers import McpSettings
    from attend.runtime.store import Store
    from attend.spec.loaded import LayerPaths
    from attend.vocab import JSON

__all__ = [
    "CONFIRM_QUESTION", "ProbeComparison", "ProbeRefused", "ProbeRun",
    "compare_results", "probe_record", "probe_target",
]


#: How many lost keys a failed probe lists before summarising.
SHOWN_KEYS = 10


@dataclass(slots=True)
class ProbeComparison:
    """The verdict of comparing two back-to-back results.

    `lost` maps each trigger to the keys (or, for a keyless trigger, the values) of the first result that
    the second no longer holds; `items` counts what each trigger selected in the first; `notes` says what
    the comparison could not check.
    """

    lost: dict[str, list[str]] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    keyless: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        """True when the second result holds everything the first one did."""
        return not any(self.lost.values())


def compare_results(triggers: dict[str, CompiledTrigger], first: JSON, second: JSON) -> ProbeComparison:
    """Check that `second` holds every item of `first`, by each trigger's key (a pure function).

    A keyed trigger compares the keys of the items its path selects; a keyless one compares the selected
    values themselves (the watched value must not change between two immediate calls).

    Args:
        triggers: the sensor's compiled triggers by name (`CompiledTrigger`: `.ir.key`, `.ir.path`).
        first: the first call's result.
        second: the second call's result.
    """
    from attend.compiler import ops
    from attend.compiler.jsonpath import compile_path_ir

    verdict = ProbeComparison()
    if not triggers:
        verdict.notes.append("the sensor has no triggers; the whole results were compared")
        verdict.items["(result)"] = 1
        verdict.lost["(result)"] = [] if _canonical(first) == _canonical(second) else ["the result changed"]
        verdict.keyless.add("(result)")
        return verdict
    for name, trigger in triggers.items():
        select = compile_path_ir(trigger.ir.path)
        before, after = select(first), select(second)
        key = trigger.ir.key
        if key:
            def keys(nodes: list[Any], key: tuple[str, ...] = key) -> list[str]:
                found = (ops.get_dotted(node, key) for node in nodes)
                return [ops.key_text(k) for k in found if k is not ops.MISSING]

            held = set(keys(after))
            first_keys = keys(before)
            verdict.items[name] = len(first_keys)
            verdict.lost[name] = [ops.render_value(ops.key_value(k)) for k in dict.fromkeys(first_keys) if k not in held]
            if not first_keys:
                verdict.notes.append(
                    f"trigger {name}: the first call returned no items at {trigger.ir.path}, so nothing could be "
                    "compared; probe again when the tool has items to return"
                )
        else:
            verdict.keyless.add(name)
            held_values = {_canonical(v) for v in after}
            verdict.items[name] = len(before)
            verdict.lost[name] = [_canonical(v) for v in before if _canonical(v) not in held_values]
    return verdict


def probe_record(
    sensor: str, settings: McpSettings, server_name: str, first: JSON, second: JSON, verdict: ProbeComparison,
    confirmed: bool,
    *, now: float,
) -> dict[str, Any]:
    """The record the store keeps for `sensor` (JSON-serialisable), made at `now` (epoch seconds)."""
    return {
        "sensor": sensor,
        "server": settings.server,
        "server_name": server_name,
        "tool": settings.tool,
        "resource": settings.resource,
        "args": settings.args,
        "fingerprint": settings.fingerprint,
        "first": first,
        "second": second,
        "ok": verdict.ok,
        "lost": verdict.lost,
        "items": verdict.items,
        "notes": verdict.notes,
        "confirmed": bool(confirmed and verdict.ok),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
    }


class ProbeRefused(Refusal):
    """The sensor cannot be probed (unknown, not an mcp sensor, invalid): usage, exit 2."""

    default_code = EXIT_USAGE


@dataclass(slots=True)
class ProbeRun:
    """Two back-to-back calls of an mcp sensor's tool and their comparison, not yet recorded."""

    compiled: CompiledSensor
    settings: McpSettings
    server_name: str
    first: JSON
    second: JSON
    verdict: ProbeComparison

    def describe(self) -> str:
        """What the probe found, as `attend sensors probe` prints it before asking."""
        done = f"read {self.settings.target}" if self.settings.resource is not None else f"called {self.settings.tool}"
        return _describe(self.compiled.name, self.server_name, done, self.verdict)

    def record(self, store: Store, confirmed: bool) -> dict[str, Any]:
        """Write the probe record (confirmed only when the comparison passed) and return it."""
        record = probe_record(self.compiled.name, self.settings, self.server_name, self.first, self.second,
                              self.verdict, confirmed, now=store.now())
        store.put_probe(self.compiled.name, record)
        return record


def probe_target(project_dir: str | Path, name: str, env: dict[str, str]) -> tuple[CompiledSensor, LayerPaths]:
    """The compiled mcp sensor `name` and the layer paths, as the probe needs them.

    Raises:
        ProbeRefused: the sensor is unknown, not an mcp sensor, not runnable or does not compile.
    """
    from attend.compiler import compile_sensor
    from attend.errors import CompileError
    from attend.runtime.runnable import runnable
    from attend.spec import load_set

    sensors = load_set(project_dir, env)
    sensor = sensors.sensors.get(name)
    if sensor is None:
        raise ProbeRefused(f"no sensor named {name!r}")
    if sensor.kind != "mcp":
        raise ProbeRefused(f"sensor {name!r} is a {sensor.kind or 'kind-less'} sensor; only mcp sensors are probed")
    # The same rule the daemon uses: a message-lane file without `author` still runs (on the event
    # lane), so it must be probe-able too, or it would stay `unprobed` for good.
    if not runnable(sensor):
        problems = "\n".join(str(d) for d in sensor.diagnostics) or sensor.status
        raise ProbeRefused(f"sensor {name!r} is {sensor.status}:\n{problems}")
    try:
        compiled = compile_sensor(sensor)
    except CompileError as exc:
        raise ProbeRefused(f"sensor {name!r} does not compile: {exc}") from None
    assert sensors.paths is not None  # load_set always sets the paths it read
    return compiled, sensors.paths


#: The question the probe asks the operator (the terminal prompt and the sensors tab's dialog).
CONFIRM_QUESTION = (
    "Open {server}'s own client (the service's app or web page) and check that the items the tool returned are "
    "still unread or otherwise untouched."
)


def _describe(sensor: str, server: str, done: str, verdict: ProbeComparison) -> str:
    lines = [f"probe {sensor}: {done} on {server} twice"]
    for name, count in verdict.items.items():
        lost = verdict.lost.get(name, [])
        what = "watched value(s)" if name in verdict.keyless else "item(s)"
        if lost:
            shown = ", ".join(lost[:SHOWN_KEYS]) + (f" and {len(lost) - SHOWN_KEYS} more" if len(lost) > SHOWN_KEYS else "")
            lines.append(f"  {name}: FAILED — the second call lost {len(lost)} of {count} {what}: {shown}")
        else:
            lines.append(f"  {name}: ok — the second call holds all {count} {what} of the first")
    lines += [f"  note: {note}" for note in verdict.notes]
    if not verdict.ok:
        lines.append("the tool changes what it returns when called (a cursor or a read marker); the sensor stays unprobed")
    return "".join(line + "\n" for line in lines)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
