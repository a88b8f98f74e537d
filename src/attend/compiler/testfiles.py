"""`attend test`: sensor test files, a sequence of poll results and the notifications each must produce.

The format (DESIGN.md, CLI): `<name>.test.yaml` beside `<name>.yaml` (then `sensor:` is optional),
`polls:` a list, each with one of `result:` (the poll result inline), `result_file:` (a JSON file
relative to the test file), `lines:` (the raw output of an `output: lines` sensor) or `records:` (what a
streaming command printed since the last evaluation, `output: stream`: a list of records, or its raw
lines as one string; the poll result is `{items: [...]}`), and `expect:` a
list of `{trigger, description, magnitude}` matched against the poll's fires regardless of order
(`trigger` and `magnitude` checked when given, `description` exactly when given). A poll without
`expect` must fire nothing. The first poll starts from no stored state, and each poll's state feeds
the next through the same `CompiledSensor.step` the daemon runs.

`at:` (optional, a duration: `90`, `30s`, `10m`) is the poll's time counted from the start of the
test, what `for:` and flap detection measure against; a poll without it comes one `interval` of the
sensor after the previous one (the first at 0). Times never go backwards.

Without paths every `*.test.yaml` of every layer folder runs (the shipped `sensors.d` included).
The sensor is loaded through the layers: the file beside the test file merged with the other layers'
files of the same name. Exit codes: 0 every test passed (or none was found), 1 a failure or a
malformed test file (code `test-file`, positioned).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend.errors import AttendError, Diagnostic, reason
from attend.spec.schema import DEFAULT_INTERVAL, DEFAULT_MAX_LINE, NAME_PATTERN, NAME_RE

if TYPE_CHECKING:
    from attend.spec.loaded import KeyPath, MergedSensor, Origin
from attend.text import printable

__all__ = ["CheckedPoll", "TestFileResult", "match_fires", "run_test_file"]

#: The suffix that marks a sensor test file.
TEST_SUFFIX = ".test.yaml"

#: The fields a poll entry may hold.
_POLL_FIELDS = frozenset({"result", "result_file", "lines", "records", "expect", "at"})
#: The fields an expect entry may hold.
_EXPECT_FIELDS = frozenset({"trigger", "description", "magnitude"})


@dataclass(slots=True)
class CheckedPoll:
    """One poll of a test file: what was expected, what fired, and whether they match."""

    index: int
    line: int
    expected: list[dict[str, Any]]
    got: list[dict[str, Any]]
    ok: bool
    warnings: list[str] = field(default_factory=list)
    line_errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class TestFileResult:
    """One test file's outcome: per-poll results, or the diagnostics that kept it from running."""

    file: str
    sensor: str | None
    polls: list[CheckedPoll] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    #: The sensor files merged into what was tested, lowest layer first: `layer file` (a user or project
    #: file over the shipped one changes what the test sees; a failure names them).
    layers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file ran and every poll matched."""
        return not self.problems and all(p.ok for p in self.polls)

    def to_json(self) -> dict[str, Any]:
        """The `--json` form."""
        return {
            "file": self.file,
            "sensor": self.sensor,
            "ok": self.ok,
            "problems": [dict(d.to_json(), detail=d.detail) for d in self.problems],
            "layers": self.layers,
            "polls": [
                {
                    "poll": p.index,
                    "line": p.line,
                    "ok": p.ok,
                    "expected": p.expected,
                    "got": p.got,
                    "warnings": p.warnings,
                    "line_errors": p.line_errors,
                }
                for p in self.polls
            ],
        }


class _Malformed(AttendError):
    default_code = "test-file"


def _fire_json(fire: Any) -> dict[str, Any]:
    return {"trigger": fire.trigger, "key": fire.key, "magnitude": fire.magnitude, "description": fire.description}


def _satisfies(fire: dict[str, Any], expect: dict[str, Any]) -> bool:
    if "trigger" in expect and fire["trigger"] != expect["trigger"]:
        return False
    if "description" in expect and fire["description"] != expect["description"]:
        return False
    return not ("magnitude" in expect and abs(float(fire["magnitude"]) - float(expect["magnitude"])) > 1e-9)


def match_fires(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> bool:
    """True when the fires match the expectations one to one, in any order (a bipartite matching)."""
    if len(expected) != len(got):
        return False
    owner: dict[int, int] = {}  # fire index → expect index

    def assign(e: int, seen: set[int]) -> bool:
        for g, fire in enumerate(got):
            if g in seen or not _satisfies(fire, expected[e]):
                continue
            seen.add(g)
            if g not in owner or assign(owner[g], seen):
                owner[g] = e
                return True
        return False

    return all(assign(e, set()) for e in range(len(expected)))


class _Reader:
    """Reads one test file, raising positioned `test-file` errors."""

    def __init__(self, path: Path, origins: dict[KeyPath, Origin]) -> None:
        from attend.spec.validate import Locator

        self.path = path
        self.origins = origins
        self.locator = Locator(origins, str(path))

    def fail(self, message: str, *keypath: str, key: bool = False) -> _Malformed:
        origin = self.locator.origin(keypath)
        span = (origin.key_span if key else origin.span) if origin is not None else None
        return _Malformed(message, file=str(self.path), line=span.line if span else 1, col=span.col if span else 1)

    def line_of(self, *keypath: str) -> int:
        origin = self.origins.get(tuple(keypath))
        return origin.line if origin is not None else 0

    def poll_input(self, poll: Any, index: int, stream_format: str | None = None,
                   lines_output: bool = True, max_line: int = DEFAULT_MAX_LINE) -> tuple[Any, list[str]]:
        """One poll's result and line errors; `stream_format` is a streaming sensor's (None: not one);
        `lines_output` whether the sensor is an `output: lines` command (the only one `lines:` is for)."""
        at = ("polls", str(index))
        if not isinstance(poll, dict):
            raise self.fail("a poll must be a mapping with `result`, `result_file`, `lines` or `records`", *at)
        for name in poll:
            if name not in _POLL_FIELDS:
                raise self.fail(f"unknown poll field `{name}` (expected result, result_file, lines, records, expect "
                                "or at)", *at, str(name), key=True)
        given = [name for name in ("result", "result_file", "lines", "records") if name in poll]
        if len(given) != 1:
            raise self.fail("a poll needs exactly one of `result`, `result_file`, `lines` or `records`", *at)
        from attend.compiler.results import MalformedResult, admit, read_json

        if "records" in poll:
            return self.records(poll["records"], at, stream_format, max_line)

        if "result" in poll:
            try:
                return admit(poll["result"]), []
            except MalformedResult as exc:
                raise self.fail(f"`result` is not a usable poll result: {exc.message}", *at, "result") from None
        if "result_file" in poll:
            name = poll["result_file"]
            if not isinstance(name, str):
                raise self.fail("`result_file` must be a file name", *at, "result_file")
            target = self.path.parent / name
            from attend.bounds import MAX_INPUT_BYTES
            from attend.files import FileTooLarge, read_regular_file

            try:
                return read_json(read_regular_file(target, MAX_INPUT_BYTES).decode("utf-8")), []
            except FileTooLarge as exc:
                raise self.fail(f"result_file {name} is larger than {exc.limit} bytes (the cap on a poll result)",
                                *at, "result_file") from None
            except (OSError, ValueError) as exc:  # UnicodeDecodeError; ValueError: a NUL byte in the name
                raise self.fail(f"cannot read result_file {printable(name)}: {reason(exc)}", *at,
                                "result_file") from None
            except MalformedResult as exc:
                what = "valid JSON" if exc.syntax else "a usable poll result"
                raise self.fail(f"result_file {name} is not {what}: {exc.message}", *at, "result_file") from None
        text = poll["lines"]
        if not isinstance(text, str):
            raise self.fail("`lines` must be a string of `magnitude|description` lines", *at, "lines")
        if not lines_output:
            instead = "`records` (a list, or the stream's lines as one string)" if stream_format else "`result`"
            raise self.fail(f"`lines` is for an `output: lines` command; use {instead} here", *at, "lines")
        from attend.compiler.sensors import parse_lines

        items, errors = parse_lines(text)
        return items, [message for _, message in errors]

    def records(self, records: Any, at: tuple[str, ...], stream_format: str | None,
                max_line: int = DEFAULT_MAX_LINE) -> tuple[Any, list[str]]:
        """A streaming sensor's records as its poll result `{items: [...]}`, and the lines that did not read
        (or were cut: a line is framed as the daemon frames it)."""
        from attend.compiler.results import MalformedResult, admit
        from attend.compiler.sensors import Framer, MalformedOutput, read_record

        if stream_format is None:
            raise self.fail("`records` is for a streaming command (output: stream); use `result` here", *at, "records")
        if isinstance(records, str):
            items, errors = [], []
            for number, line in enumerate(records.splitlines(), start=1):
                framed: list[bytes] = []  # the daemon's framing: blank lines skipped, a long one cut to max_line
                framer = Framer(max_line, framed.append)
                framer.feed(line.encode("utf-8", "surrogatepass") + b"\n")
                if framer.cut:
                    errors.append(f"line {number}: longer than max_line ({max_line} bytes): cut")
                for raw in framed:
                    try:
                        items.append(read_record(raw.decode("utf-8", "replace"), stream_format, max_line))
                    except MalformedOutput as exc:
                        errors.append(f"line {number}: {exc.message}")
            return {"items": items}, errors
        if not isinstance(records, list):
            raise self.fail("`records` must be a list of records, or the stream's lines as one string", *at, "records")
        try:
            return {"items": admit(records)}, []
        except MalformedResult as exc:
            raise self.fail(f"`records` is not usable: {exc.message}", *at, "records") from None

    def time_of(self, poll: dict[str, Any], index: int, previous: float | None, interval: float) -> float:
        """The poll's `at:` in seconds, else one interval after the previous poll (the first at 0)."""
        from attend.spec.durations import ACCEPTED_FORMS, parse_duration

        if "at" not in poll:
            return 0.0 if previous is None else previous + interval
        try:
            at = parse_duration(poll["at"])
        except ValueError:
            raise self.fail(f"`at` must be {ACCEPTED_FORMS} (the time since the test started)", "polls", str(index), "at") from None
        if previous is not None and at < previous:
            raise self.fail(f"`at` ({poll['at']}) is before the previous poll ({previous:g}s): polls run forward in time",
                            "polls", str(index), "at")
        return at

    def expectations(self, poll: dict[str, Any], index: int, sensor: str, triggers: frozenset[str]) -> list[dict[str, Any]]:
        """The poll's `expect` entries; a `trigger` must be one the sensor's fires can carry (`triggers`)."""
        at = ("polls", str(index), "expect")
        expect = poll.get("expect") or []
        if not isinstance(expect, list):
            raise self.fail("`expect` must be a list of {trigger, description, magnitude}", *at)
        for n, entry in enumerate(expect):
            if not isinstance(entry, dict):
                raise self.fail("an expect entry must be a mapping of trigger, description, magnitude", *at, str(n))
            for name, value in entry.items():
                if name not in _EXPECT_FIELDS:
                    raise self.fail(f"unknown expect field `{name}` (expected trigger, description or magnitude)", *at, str(n), str(name), key=True)
                if name == "magnitude" and (isinstance(value, bool) or not isinstance(value, (int, float))):
                    raise self.fail("`magnitude` must be a number", *at, str(n), "magnitude")
                if name in ("trigger", "description") and not isinstance(value, str):
                    raise self.fail(f"`{name}` must be a string", *at, str(n), name)
                if name == "trigger" and value not in triggers:
                    known = ", ".join(sorted(triggers)) or "none"
                    raise self.fail(f"sensor {sensor} never fires a trigger named {value!r} (it fires: {known})",
                                    *at, str(n), name)
        return expect


def _load_sensor(name: str, beside: Path, project_dir: Path, env: dict[str, str]) -> MergedSensor | None:
    from attend.spec import load_paths, load_set

    if beside.exists():
        sset = load_paths([beside], project_dir, env)
        sensor = sset.sensors.get(name)
        if sensor is not None:
            return sensor
    return load_set(project_dir, env).sensors.get(name)


def run_test_file(path: Path, project_dir: Path, env: dict[str, str] | None = None) -> TestFileResult:
    """Run one sensor test file against its sensor, loaded through the layers.

    Args:
        path: the `.test.yaml` file.
        project_dir: the project (for the project layer and trust).
        env: the environment the layers are resolved from (default `os.environ`).

    Returns:
        The per-poll outcome, or the problems that kept the file from running.
    """
    from attend.compiler import compile_sensor
    from attend.spec.loading import read_yaml_file

    env = dict(os.environ if env is None else env)
    parsed = read_yaml_file(path, "", str(path))
    result = TestFileResult(str(path), None)
    if parsed.diagnostics:
        result.problems.extend(parsed.diagnostics)
        return result
    reader = _Reader(path, parsed.origins)
    try:
        doc = parsed.data
        if not isinstance(doc, dict):
            raise reader.fail("a test file is a mapping with `polls:` (and `sensor:` unless it sits beside the sensor)")
        for name in doc:
            if name not in ("sensor", "polls"):
                raise reader.fail(f"unknown field `{name}` (a test file holds `sensor` and `polls`)", str(name), key=True)
        stem = path.name[: -len(TEST_SUFFIX)] if path.name.endswith(TEST_SUFFIX) else path.stem
        name = doc.get("sensor", stem)
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise reader.fail(f"`sensor` must be a sensor name ({NAME_PATTERN}: lower-case letters, digits, _ and -), "
                              f"not {str(name)[:60]!r}", *(("sensor",) if "sensor" in doc else ()))
        result.sensor = name
        polls = doc.get("polls")
        if not isinstance(polls, list) or not polls:
            raise reader.fail("`polls` must be a non-empty list of polls", "polls")
        sensor = _load_sensor(name, path.with_name(f"{name}.yaml"), project_dir, env)
        if sensor is None:
            raise reader.fail(f"no sensor named {name!r} beside the test file or in any layer", *(("sensor",) if "sensor" in doc else ()))
        if sensor.status != "ok":
            result.problems.extend(sensor.diagnostics or [Diagnostic(str(path), 1, 1, "test-file", f"the sensor {name!r} is {sensor.status}")])
            return result
        result.layers = [f"{f.layer} {f.path}" for f in sensor.files]
        compiled = compile_sensor(sensor)
        interval = sensor.ir.interval or DEFAULT_INTERVAL
        states: dict[str, Any] | None = None
        now: float | None = None
        for index, poll in enumerate(polls):
            poll_result, line_errors = reader.poll_input(poll, index, compiled.stream_format, compiled.output == "lines",
                                                         compiled.max_line)
            expected = reader.expectations(poll, index, name, compiled.fire_triggers)
            now = reader.time_of(poll, index, now, interval)
            step = compiled.step(states, poll_result, now=now)
            states = step.states
            got = [_fire_json(f) for f in step.fires]
            result.polls.append(
                CheckedPoll(index + 1, reader.line_of("polls", str(index)), expected, got,
                            match_fires(expected, got), step.warnings, line_errors)
            )
    except AttendError as exc:
        diagnostic = exc.to_diagnostic()
        result.problems.append(diagnostic)
    return result








