"""A spec sensor compiled: its triggers, effective lane and output reading (DESIGN.md, Runtime).

`CompiledSensor` is what the runtime runs: `result_from_output` turns a command's stdout into the poll
result (JSON, or the legacy `magnitude|description` lines), and `step` runs every trigger on it,
keyed by definition hash so an edited trigger re-baselines. A `lines` sensor without triggers turns
each valid line into one fire of the pseudo-trigger `lines`.

The effective lane is `message` only when every trigger names its `author`; otherwise the sensor runs
on the event lane and `lane_note` says why. The one exception is a shipped file carrying
`lane_exception` (the keepwarm floor, ADR-182), honoured only in the shipped layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attend.compiler.digest import DIGEST_TRIGGER, compile_digest
from attend.compiler.findings import fold_fires, supersede
from attend.compiler.ops import RENDER_LIMIT
from attend.compiler.templates import FOCUS_SESSION
from attend.compiler.triggers import CompiledTrigger, Fire
from attend.errors import AttendError
from attend.redact import shorten
from attend.spec.loaded import MergedSensor
from attend.spec.schema import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from attend.vocab import Kind, Lane, Scope

__all__ = [
    "LINES_TRIGGER", "CompiledSensor", "Framer", "MalformedOutput", "SensorStep", "compile_sensor", "effective_lane", "evaluate_triggers",
    "parse_lines", "read_record",
]

#: The trigger name of a fire made from a `lines` output line when the sensor has no triggers.
LINES_TRIGGER = "lines"


class MalformedOutput(AttendError):
    """A poll's output that cannot be read as the sensor's `output` format (the `malformed` state)."""

    default_code = "malformed"


@dataclass(slots=True)
class SensorStep:
    """One poll's outcome across a sensor's triggers: fires, the new states by definition hash, warnings."""

    fires: list[Fire]
    states: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    #: When the earliest transition pending `for:` will have held long enough (None: none pending).
    due: float | None = None


def parse_lines(text: str) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """The legacy `magnitude|description` lines: valid items, and (line number, message) for the rest.

    Whitespace around the pipe is trimmed; blank lines are skipped; the magnitude is a float ≥ 0.
    """
    items: list[dict[str, Any]] = []
    errors: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        head, sep, tail = line.partition("|")
        if not sep:
            errors.append((number, f"line {number}: expected `magnitude|description`, got {line[:80]!r}"))
            continue
        try:
            magnitude = float(head.strip())
        except ValueError:
            errors.append((number, f"line {number}: the magnitude {head.strip()[:40]!r} is not a number"))
            continue
        if not magnitude >= 0 or magnitude == float("inf"):
            errors.append((number, f"line {number}: the magnitude must be a finite number ≥ 0, not {head.strip()}"))
            continue
        items.append({"magnitude": magnitude, "description": tail.strip()})
    return items, errors


class CompiledSensor:
    """A validated spec sensor with its triggers compiled. Build with `compile_sensor`."""

    def __init__(self, sensor: MergedSensor, triggers: dict[str, CompiledTrigger]) -> None:
        fields = sensor.ir
        self.name: str = sensor.name
        self.sensor = sensor
        self.kind: Kind | None = fields.kind
        self.triggers = triggers
        #: Whether the file declares triggers (all of them may be turned off with `enabled: false`).
        self.declares_triggers = bool(fields.triggers)
        block = fields.command if self.kind == "command" else None
        self.output: str | None = (block.output if block is not None else "json") if self.kind == "command" else None
        #: How a streaming command's stdout is read (the daemon's stream kind, `attend test`'s `records:`): each
        #: line's format (None: no stream) and its longest line in bytes (the spec's default for any other sensor).
        stream = block if self.output == "stream" else None
        self.stream_format: str | None = stream.stream_format if stream is not None else None
        self.max_line: int = stream.max_line if stream is not None else DEFAULT_MAX_LINE
        self.lane, self.lane_note = effective_lane(sensor, triggers)
        #: More than `digest.over` fires in one poll become one line (compiler/digest.py); None without.
        self.digest = compile_digest(fields.digest)
        #: Trigger name → the triggers its fire supersedes in the same poll (compiler/findings.py).
        self.supersedes: dict[str, tuple[str, ...]] = {
            t.name: t.supersedes for t in fields.triggers if t.supersedes and t.name in triggers
        }
        #: `project` (one poll for every session) or `session` (one poll per live session, DESIGN.md, Delivery).
        self.scope: Scope = fields.scope
        #: The trigger names its fires can carry: the triggers turned on, `digest` with a digest, `lines` for a
        #: lines-protocol command without triggers (what a test file's `expect` may name).
        self.fire_triggers: frozenset[str] = (
            frozenset({LINES_TRIGGER}) if not self.declares_triggers and self.output == "lines"
            else frozenset(triggers) | ({DIGEST_TRIGGER} if self.digest is not None else set())
        )
        #: Whether a line names its key (an MCP sensor's `(server=…, key=…)`): then only fires of one key fold.
        self.lines_name_key = self.kind == "mcp"

    def __repr__(self) -> str:
        return f"CompiledSensor({self.name!r}, triggers={list(self.triggers)})"

    def result_from_output(self, text: str, *, cap: int | None = None) -> tuple[Any, list[str]]:
        """A command's stdout as the poll result, and the lines that did not parse (for `lines`).

        `cap` is the `max_output` the text was read under: a JSON output may hold one value or key per
        `DATA_BYTES_PER_VALUE` bytes of it (`results.read_json`).

        Each line error is a message that starts with its line number (``line 4: ...``), the form
        `PollOutcome.line_errors` and the store keep.

        Raises:
            MalformedOutput: the output is not valid JSON (for `output: json`).
        """
        if self.output == "lines":
            items, errors = parse_lines(text)
            return items, [message for _, message in errors]
        from attend.compiler.results import MalformedResult, read_json

        try:
            return read_json(text, cap=cap), []
        except MalformedResult as exc:
            raise MalformedOutput(exc.message) from None

    def step(
        self, states: dict[str, Any] | None, result: Any, *, test: bool = False, detail: bool = True,
        now: float | None = None, digest: bool = True, session: str | None = None,
    ) -> SensorStep:
        """Run every trigger on one poll result.

        Args:
            states: stored state by definition hash (states of other hashes are ignored and dropped).
            result: the poll result (`result_from_output`'s first value, or a crate/mcp result).
            test: a test fire (see `CompiledTrigger.evaluate`).
            detail: build each trigger's verdict (`sensors poll`); the daemon may pass False to skip
                the extra pass over the items that per-condition counts cost.
            now: the poll's time (default `time.time()`), for `for:` and flap detection.
            digest: shape the fires into lines: superseded fires dropped, identical lines folded, more
                than `digest.over` fires as one (False: the caller does it itself, as the daemon does
                around shelving, with `supersede`, `fold` and `self.digest.apply`).
            session: the session a `scope: session` sensor is polled for: `{session}` in a description
                renders it (when the item has no `session` field of its own).

        Returns:
            The fires of all triggers in trigger order, the new states keyed by definition hash,
            and warnings prefixed with the trigger's name.
        """
        states = states or {}
        if not self.declares_triggers and self.output == "lines":
            fires = [
                Fire(LINES_TRIGGER, None, float(item["magnitude"]), shorten(str(item["description"]), RENDER_LIMIT),
                     item, None)
                for item in (result if isinstance(result, list) else [])
                if isinstance(item, dict)
            ]
            return SensorStep(fires, {}, [])
        token = FOCUS_SESSION.set(session)
        try:
            out = evaluate_triggers(self.triggers, states, result, test=test, detail=detail, now=now)
        finally:
            FOCUS_SESSION.reset(token)
        if digest:
            out.fires, _ = self.supersede(out.fires)
            out.fires, _ = self.fold(out.fires)
            if self.digest is not None:
                out.fires = self.digest.apply(out.fires)
        return out

    def supersede(self, fires: list[Fire]) -> tuple[list[Fire], list[tuple[Fire, dict[str, Any]]]]:
        """`fires` without those another firing trigger supersedes, and the dropped ones with why."""
        return supersede(fires, self.supersedes)

    def fold(self, fires: list[Fire]) -> tuple[list[Fire], list[tuple[Fire, dict[str, Any]]]]:
        """`fires` with those that render the same line folded into one, and the folded ones with why."""
        return fold_fires(fires, by_key=self.lines_name_key)


def evaluate_triggers(
    triggers: dict[str, CompiledTrigger], states: dict[str, Any], result: Any, *, test: bool = False, detail: bool = True,
    now: float | None = None,
) -> SensorStep:
    """Run several triggers on one poll result, selecting each distinct path (and key) only once.

    The items a keyed trigger compares are shared read-only between triggers with the same path and
    key: the common subexpression of a sensor whose triggers watch one list in different ways.
    """
    out = SensorStep([], {})
    shared: dict[Any, Any] = {}
    if now is None:
        now = time.time()
    for name, trigger in triggers.items():
        evaluation = trigger.evaluate(
            states.get(trigger.definition_hash), result, test=test, shared=shared, detail=detail, now=now
        )
        out.fires.extend(evaluation.fires)
        out.states[trigger.definition_hash] = evaluation.state
        out.warnings.extend(f"{name}: {w}" for w in evaluation.warnings)
        out.verdicts.append(evaluation.verdict)
        due = trigger.due(evaluation.state)
        if due is not None and (out.due is None or due < out.due):
            out.due = due
    return out


def effective_lane(sensor: MergedSensor, triggers: dict[str, CompiledTrigger]) -> tuple[Lane, str]:
    """The lane a sensor runs on, and a note saying why when that is not simply its declared lane."""
    declared = sensor.ir.lane
    if declared != "message":
        return declared, ""
    if sensor.ir.lane_exception:
        origin = sensor.origin("lane_exception")
        if origin is None or origin.layer == "shipped":
            return "message", f"message lane without author by {sensor.ir.lane_exception} (shipped exception)"
        return "event", "lane_exception is honoured in shipped files only; running on the event lane"
    missing = [name for name, t in triggers.items() if t.ir.author is None]
    if not triggers:
        return "event", "lane: message needs triggers with `author`; this sensor has none, so it runs on the event lane"
    if missing:
        return "event", f"lane: message needs `author` in every trigger; {', '.join(missing)} has none, so it runs on the event lane"
    return "message", ""


def compile_sensor(sensor: MergedSensor) -> CompiledSensor:
    """Compile a validated spec sensor.

    Raises:
        CompileError: the first trigger problem, positioned in the sensor's file.
    """
    from attend.compiler.diagnostics import origins_by_trigger
    from attend.grammar import parse_trigger

    fields = sensor.ir
    by_trigger = origins_by_trigger(sensor.origins)
    triggers = {
        t.name: CompiledTrigger(parse_trigger(t.definition, t.name, by_trigger.get(t.name, {})), fields.flap,
                                stream=fields.is_stream)
        for t in fields.triggers
        if t.enabled  # turned off: not evaluated
    }
    return CompiledSensor(sensor, triggers)


class Framer:
    """Splits a byte stream into lines of at most `max_line` bytes (longer ones cut and counted)."""

    def __init__(self, max_line: int, emit: Callable[[bytes], None]) -> None:
        self.max_line = max_line
        self.emit = emit
        self.partial = bytearray()
        self.cutting = False  # inside a line already cut: skip to its end
        self.cut = 0

    def _line(self, line: bytes) -> None:
        if line.strip():
            self.emit(line)

    def feed(self, chunk: bytes | bytearray) -> None:
        """Frame one chunk of stdout."""
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not self.cutting:
                    self.partial += chunk[start:]
                    if len(self.partial) > self.max_line:
                        self._cut()
                return
            if self.cutting:
                self.cutting = False
            else:
                self.partial += chunk[start:end]
                if len(self.partial) > self.max_line:
                    self._cut()
                    self.cutting = False
                else:
                    self._line(bytes(self.partial))
                    self.partial.clear()
            start = end + 1

    def _cut(self) -> None:
        self.cut += 1
        self._line(bytes(self.partial[: self.max_line]))
        self.partial.clear()
        self.cutting = True

    def close(self) -> None:
        """The stream ended: a last line without its newline still counts."""
        if self.partial and not self.cutting:
            self._line(bytes(self.partial))
        self.partial.clear()
        self.cutting = False


def read_record(line: str, stream_format: str = "json", max_line: int = DEFAULT_MAX_LINE) -> Any:
    """One line of a streaming command as its record: the JSON value (`json`), or `{"line": line}`.

    A `json` line holds at most one JSON value or key per `DATA_BYTES_PER_VALUE` bytes of `max_line`, as a
    command's output does of `max_output` (4,096 under the 64 KiB default): the parsed record stays within
    a few times `max_line` whatever its shape.

    Raises:
        MalformedOutput: a `json` line that is not a JSON value attend admits.
    """
    if stream_format == "lines":
        return {"line": line}
    from attend.compiler.results import MalformedResult, read_json

    try:
        return read_json(line, cap=max_line, cap_name="max_line")
    except MalformedResult as exc:
        raise MalformedOutput(exc.message) from None
