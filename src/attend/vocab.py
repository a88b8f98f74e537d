"""attend's vocabulary: the words that name a sensor's state, a lane, a priority, a fire's outcome and a
conduit, each list declared once (issue 38).

Each is a `Literal` alias for type checkers and a tuple of the same words for the code that lists or
checks them (a schema's `allowed`, a validation). The words are what the store, the wire and `--json`
carry: a stored or received word is still checked where it is read (the store is data anyone could have
damaged), and only then is it one of these.

The aliases exist only for type checkers (typing stays unimported at run time: the hooks' and lint
path's start-up); tests/unit/test_vocab.py checks that each tuple lists its alias's words, in order.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Literal, TypeAlias

    #: A failed poll's state (DESIGN.md, Failure states): `PollOutcome.failed`, `attend sensors`.
    FailureState: TypeAlias = Literal[
        "timeout", "exit", "malformed", "exec_failed", "auth_failed", "refused", "unprobed", "invalid",
        "unsupported", "unavailable",
    ]
    #: A sensor's state: `ok`, or the failure its last poll (or load) ended in.
    SensorState: TypeAlias = Literal["ok", FailureState]
    #: Who recorded a sensor's state: a poll's outcome, or the daemon loading its files and config.
    StateSource: TypeAlias = Literal["poll", "load"]
    #: A sensor's kind.
    Kind: TypeAlias = Literal["crate", "command", "mcp"]
    #: A delivery lane (DESIGN.md, Delivery): event (engagement and governor) or message.
    Lane: TypeAlias = Literal["event", "message"]
    #: A sensor's scope: one poll for the project, or one per live session of it.
    Scope: TypeAlias = Literal["project", "session"]
    #: A line's priority, lowest first.
    Priority: TypeAlias = Literal["low", "medium", "high"]
    #: What became of one fire in a poll's trace (`attend sensors history`): the compiler's word
    #: (`fired`, or flap detection's `flapping`/`settled`, or `held`), then the runtime's (`queued` until
    #: the discloser decides, then `fired` or `held`).
    FireOutcome: TypeAlias = Literal["fired", "flapping", "settled", "held", "queued"]
    #: How a live session is served: its `attend run`'s Monitor stream, its hooks with its doorbell armed,
    #: or its hooks alone.
    Conduit: TypeAlias = Literal["monitor", "doorbell", "hooks"]
    #: `attend.delivery.conduits`: which conduits may carry a session's lines.
    ConduitChoice: TypeAlias = Literal["auto", "monitor", "hooks"]
    #: A session row's role (the store's `sessions` table): its `attend run` polls, is attached, or stopped.
    SessionRole: TypeAlias = Literal["polling", "attached", "stopped"]
    #: A live session's role (`attend sessions`): polling, attached, or served by its hooks alone.
    LiveRole: TypeAlias = Literal["polling", "attached", "hooks"]

    #: A JSON value: what a poll's output, a crate's exported state and the store's JSON columns hold once
    #: read (`compiler.results.read_json`, `store.rows.json_column`). Narrow it (`isinstance`) before use.
    JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
    #: A JSON object.
    JSONObject: TypeAlias = dict[str, JSON]

__all__ = [
    "CONDUITS", "CONDUIT_CHOICES", "FAILURE_STATES", "FIRE_OUTCOMES", "KINDS", "LANES", "OK", "PRIORITIES", "SCOPES",
    "SENSOR_STATES", "SESSION_ROLES", "STATE_SOURCES",
]

#: The healthy state.
OK: Literal["ok"] = "ok"
#: Every failure state, as `attend sensors` shows it.
FAILURE_STATES: tuple[FailureState, ...] = (
    "timeout", "exit", "malformed", "exec_failed", "auth_failed", "refused", "unprobed", "invalid", "unsupported",
    "unavailable",
)
#: Every state a sensor can be in.
SENSOR_STATES: tuple[SensorState, ...] = (OK, *FAILURE_STATES)
STATE_SOURCES: tuple[StateSource, ...] = ("poll", "load")
KINDS: tuple[Kind, ...] = ("crate", "command", "mcp")
LANES: tuple[Lane, ...] = ("event", "message")
SCOPES: tuple[Scope, ...] = ("project", "session")
#: The priorities, lowest first (their rank is their index).
PRIORITIES: tuple[Priority, ...] = ("low", "medium", "high")
FIRE_OUTCOMES: tuple[FireOutcome, ...] = ("fired", "flapping", "settled", "held", "queued")
CONDUITS: tuple[Conduit, ...] = ("monitor", "doorbell", "hooks")
CONDUIT_CHOICES: tuple[ConduitChoice, ...] = ("auto", "monitor", "hooks")
SESSION_ROLES: tuple[SessionRole, ...] = ("polling", "attached", "stopped")
