"""The one reader of a sensor's fields: the merged, validated document → `ir.Sensor` (issue 38).

Every module outside `spec/` reads a sensor's fields from the record (`MergedSensor.ir`), never from the
document's dict, so a field has one road from the file to the compiler and the runtime, and its default one
place (`spec.schema`). Code that shows or edits the document itself (explain's rows as written, settings,
the trust gate's fingerprint) reads `MergedSensor.data`; it says so where it does.

The reader never raises: it reads the document `spec.validate` normalised (defaults filled in, durations as
float seconds), and a value of the wrong type, which only an invalid sensor holds (one that never runs),
reads as its default, so `explain`, `compile --check` and the sensors tab can read an invalid sensor too.
"""

from __future__ import annotations

from attend import ir
from attend.spec.durations import parse_duration
from attend.spec.schema import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_INTERVAL,
    DEFAULT_MAX_LINE,
    DEFAULT_MCP_TIMEOUT,
    SENSOR_SCHEMA,
)
from attend.vocab import KINDS, LANES, SCOPES

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from attend.vocab import Kind, Lane, Scope

__all__ = ["command_block", "mcp_block", "read_command", "read_digest", "read_mcp", "read_sensor"]

#: The schema's defaults the reader fills in where a value is missing or of the wrong type.
_DECAY_THRESHOLD: int = SENSOR_SCHEMA["decay_threshold"]["meta"]["default"]
_THRESHOLD: float = SENSOR_SCHEMA["threshold"]["meta"]["default"]
_DEFAULT_LANE: Lane = next(lane for lane in LANES if lane == SENSOR_SCHEMA["lane"]["meta"]["default"])
_DEFAULT_SCOPE: Scope = next(s for s in SCOPES if s == SENSOR_SCHEMA["scope"]["meta"]["default"])


def _kind(value: object) -> Kind | None:
    """A kind of the vocabulary, or None."""
    return next((k for k in KINDS if k == value), None)


def _lane(value: object) -> Lane:
    """A lane of the vocabulary, else the schema's default."""
    return next((lane for lane in LANES if lane == value), _DEFAULT_LANE)


def _scope(value: object) -> Scope:
    """A scope of the vocabulary, else the schema's default."""
    return next((s for s in SCOPES if s == value), _DEFAULT_SCOPE)




def _string(value: object) -> str | None:
    """A string, or None."""
    return value if isinstance(value, str) else None


def _text(value: object) -> str | None:
    """A non-empty string, or None."""
    return value if isinstance(value, str) and value else None


def _number(value: object) -> float | None:
    """An int or float (never a bool) as a float, or None (also for an int past float's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _integer(value: object) -> int | None:
    """An int (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value: object) -> tuple[str, ...]:
    """A list's entries as strings; () for anything else."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def read_command(block: object) -> ir.CommandBlock | None:
    """A `command:` block as its record (None when there is no block)."""
    return command_block(block) if isinstance(block, dict) else None


def command_block(block: Mapping[str, object]) -> ir.CommandBlock:
    """A `command:` mapping as its record (`{}`: every default)."""
    env = block.get("env")
    return ir.CommandBlock(
        argv=_strings(block.get("argv")),
        env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
        cwd=_text(block.get("cwd")) or ".",
        timeout=_number(block.get("timeout")) or DEFAULT_COMMAND_TIMEOUT,
        output=_text(block.get("output")) or "json",
        max_output=_integer(block.get("max_output")) or None,
        stream_format=_text(block.get("stream_format")) or "json",
        max_line=_integer(block.get("max_line")) or DEFAULT_MAX_LINE,
        cursor=_text(block.get("cursor")),
    )


def read_mcp(block: object) -> ir.McpBlock | None:
    """An `mcp:` block as its record (None when there is no block)."""
    return mcp_block(block) if isinstance(block, dict) else None


def mcp_block(block: Mapping[str, object]) -> ir.McpBlock:
    """An `mcp:` mapping as its record (`{}`: every default)."""
    server = block.get("server")
    resource = block.get("resource")
    args = block.get("args")
    timeout = _number(block.get("timeout"))
    return ir.McpBlock(
        server=server if isinstance(server, str | dict) else None,
        tool=_string(block.get("tool")),
        resource=_string(resource),
        subscribe=bool(block.get("subscribe", False)) and isinstance(resource, str),
        args=dict(args) if isinstance(args, dict) else {},
        allow_unannotated=bool(block.get("allow_unannotated", False)),
        timeout=timeout if timeout is not None and timeout > 0 else DEFAULT_MCP_TIMEOUT,
    )


def read_digest(block: object) -> ir.DigestBlock | None:
    """A `digest:` block as its record (None when there is none)."""
    if not isinstance(block, dict):
        return None
    description = block.get("description")
    return ir.DigestBlock(over=_integer(block.get("over")) or 0,
                          description=description if isinstance(description, str) else "")


def _trigger(name: object, definition: object) -> ir.SensorTrigger:
    mapping = definition if isinstance(definition, dict) else {}
    return ir.SensorTrigger(name=str(name), enabled=mapping.get("enabled") is not False,
                            supersedes=_strings(mapping.get("supersedes")), definition=definition)


def _crate_timeout(crate: Mapping[str, object]) -> float | None:
    """The crate block's `timeout` in seconds; None when it sets none (or none that reads as a duration)."""
    value = crate.get("timeout")
    if value is None:
        return None
    try:
        return parse_duration(value)
    except (TypeError, ValueError):
        return None


def read_sensor(data: Mapping[str, object]) -> ir.Sensor:
    """The merged, normalised document of one sensor (`MergedSensor.data`) as its typed record."""
    interval = _number(data.get("interval"))
    interval = DEFAULT_INTERVAL if interval is None else interval
    min_interval = _number(data.get("min_interval"))
    decay = _integer(data.get("decay_threshold"))
    threshold = _number(data.get("threshold"))
    triggers = data.get("triggers")
    crate = data.get("crate")
    crate = dict(crate) if isinstance(crate, dict) else {}
    return ir.Sensor(
        name=str(data.get("name", "")),
        spec=_integer(data.get("spec")),
        description=_string(data.get("description")) or "",
        kind=_kind(data.get("kind")),
        enabled=bool(data.get("enabled", True)),
        source=_text(data.get("source")),
        version=_text(data.get("version")),
        interval=interval,
        min_interval=interval if min_interval is None else min_interval,
        decay_threshold=_DECAY_THRESHOLD if decay is None else decay,
        wake_on=_strings(data.get("wake_on")),
        threshold=_THRESHOLD if threshold is None else threshold,
        lane=_lane(data.get("lane")),
        scope=_scope(data.get("scope")),
        lane_exception=_text(data.get("lane_exception")),
        requires=_strings(data.get("requires")),
        flap=ir.read_flap(data.get("flap")),
        digest=read_digest(data.get("digest")),
        triggers=tuple(_trigger(n, d) for n, d in triggers.items()) if isinstance(triggers, dict) else (),
        command=read_command(data.get("command")),
        mcp=read_mcp(data.get("mcp")),
        crate=crate,
        crate_timeout=_crate_timeout(crate),
    )
