"""The decisions an mcp poll makes, as pure functions (ADR-403 §4; DESIGN.md, Runtime: MCP).

- the read-only gate: may attend call this tool at all?
- the poll result: which part of a tool result becomes the document the triggers see;
- the failure state of a tool error (`auth_failed` when the server reports a credential problem);
- the restart backoff of a server that died;
- whether a probe record still lets a sensor poll.

No I/O, no trio: the session pool (`mcp_pool.py`) and the kind (`kinds/mcp.py`) call these.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attend.vocab import FailureState

__all__ = [
    "AUTH_PATTERN",
    "unprobed_message",
    "RESTART_BACKOFF_FACTOR",
    "RESTART_BACKOFF_INITIAL",
    "RESTART_BACKOFF_MAX",
    "gate_refusal",
    "probe_problem",
    "restart_delay",
    "result_document",
    "tool_error_state",
]

#: Seconds before the first restart of a server that died or failed to start.
RESTART_BACKOFF_INITIAL = 1.0

#: Each further consecutive failure multiplies the wait by this.
RESTART_BACKOFF_FACTOR = 2.0

#: The longest wait between two restart attempts (5 minutes).
RESTART_BACKOFF_MAX = 300.0

#: A tool error whose text matches this reports a missing or expired credential: `auth_failed`, not `exit`.
#: Servers word it many ways ("401 Unauthorized", "invalid_grant", "token expired", "not authenticated",
#: "missing credentials", "please log in"); docs/mcp.md lists what counts.
AUTH_PATTERN = re.compile(
    r"\b40[13]\b|unauthori[sz]ed|unauthenticated|not (authenticated|logged in)|forbidden|credential"
    r"|authenticat(e|ion)\s+(failed|required|error)|re-?authenticate|invalid_grant|invalid_token"
    r"|(access|auth|api|bearer|oauth|refresh)[ _-]?(token|key)"
    r"|token\s+(has\s+)?(expired|missing|invalid|revoked)|(expired|missing|invalid|revoked)\s+token"
    r"|\b(log|sign)\s?in\b",
    re.IGNORECASE,
)


def gate_refusal(tool: str, annotations: dict[str, Any] | None, *, listed: bool, allow_unannotated: bool) -> str | None:
    """The read-only gate: why attend refuses to call `tool`, or None when it may.

    The tool must exist and declare `readOnlyHint: true`. `allow_unannotated` lets a tool that says
    nothing about it through (the sensor file takes responsibility, and `attend sensors` / `explain`
    show the override); a tool that declares `readOnlyHint: false` says it writes and is refused anyway.

    Args:
        tool: the tool's name.
        annotations: the tool's annotations as the server sent them (the JSON object: `readOnlyHint`), or None.
        listed: whether the server lists the tool.
        allow_unannotated: the sensor's `mcp.allow_unannotated`.
    """
    if not listed:
        return f"the server offers no tool named {tool!r}"
    hint = (annotations or {}).get("readOnlyHint")
    if hint is True:
        return None
    if hint is False:
        return f"tool {tool!r} declares readOnlyHint: false (it may modify its environment)"
    if hint is not None:  # a string "true", a number 1: not the JSON value true, and not silence either
        return (f"tool {tool!r} declares readOnlyHint: {json.dumps(hint)[:40]}, not the JSON value true; only "
                "`readOnlyHint: true` lets attend call a tool")
    if allow_unannotated:
        return None
    return (
        f"tool {tool!r} does not declare readOnlyHint: true; set `allow_unannotated: true` in the sensor's "
        "mcp block to call it anyway (shown as an override)"
    )


def result_document(structured: Any, texts: list[str]) -> Any:
    """The poll result of a tool call: `structured_content`, else the text parsed as JSON, else `{"text": ...}`.

    Args:
        structured: the result's `structured_content` (None when the server sent none).
        texts: the text of each text content block, in order (joined with newlines).
    """
    if structured is not None:
        return structured
    text = "\n".join(texts)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {"text": text}


def tool_error_state(message: str) -> FailureState:
    """The failure state of a tool call the server answered with `isError`: `auth_failed` or `exit`.

    `exit` is the analogue of a command's non-zero exit: the call ran and reported failure.
    """
    return "auth_failed" if AUTH_PATTERN.search(message) else "exit"


def restart_delay(failures: int) -> float:
    """Seconds to wait before starting a server again after `failures` consecutive failures (≥ 1)."""
    from attend.runtime.cadence import backoff

    if failures <= 0:
        return 0.0
    return backoff(RESTART_BACKOFF_INITIAL, failures - 1, factor=RESTART_BACKOFF_FACTOR, limit=RESTART_BACKOFF_MAX)


def unprobed_message(sensor: str, problem: str, resource: bool = False) -> str:
    """What an `unprobed` sensor shows: why, and the command that lets it poll (`resource`: a resource
    sensor, which reads a resource instead of calling a tool)."""
    what = "a read of its resource" if resource else "a call of its tool"
    return (f"{problem}; check in another client that {what} leaves the items untouched, then run "
            f"`attend sensors probe {sensor} --confirm`")


def probe_problem(record: dict[str, Any] | None, current_fingerprint: str) -> str | None:
    """Why a sensor's probe record does not let it poll, or None when it does.

    A sensor polls only with a record taken with its current server, tool and args (the fingerprint),
    whose call comparison passed and whose items the operator confirmed untouched.

    Args:
        record: the stored probe record, or None.
        current_fingerprint: `mcp.servers.fingerprint` of the sensor's server, tool and args now.
    """
    if not record:
        return "not probed yet"
    if record.get("fingerprint") != current_fingerprint:
        return "the probe record was taken with another server, tool or args"
    if not record.get("ok"):
        return "the last probe failed: the second call lost items of the first"
    if not record.get("confirmed"):
        return "the operator has not confirmed that the probed items stayed untouched"
    return None
