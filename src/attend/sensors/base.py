"""The contract a compiled ("crate") sensor implements (ADR-403 §1, the crate kind).

A crate sensor is a Python class registered in the ``attend.sensors`` entry-point group. attend builds
one instance per sensor name, passing the sensor file's ``crate:`` block as a plain dict, and calls
``poll(focus)`` in a worker thread on the sensor's cadence. The result is JSON-like data that the
file's triggers evaluate, exactly as they evaluate a command's JSON output. Every default lives in the
shipped sensor file; the class holds only the code a poll needs.

A poll whose upstream is not there (no git repository, no transcript) raises `SensorUnavailable`;
the crate kind records it as the sensor's ``unavailable`` state and leaves trigger state untouched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attend.spec.yamltext import yaml_text

if TYPE_CHECKING:
    from attend.peers.transcript import Transcript

__all__ = [
    "FOCUS_DESCRIPTION_VAR",
    "FOCUS_KEYWORDS_VAR",
    "Focus",
    "Sensor",
    "SensorConfigError",
    "SensorUnavailable",
    "expand_home",
    "focus_from_env",
    "focus_transcript",
    "require",
    "require_seconds",
]

#: Environment variable holding a one-line description of the current work (empty when unset).
FOCUS_DESCRIPTION_VAR = "ATTEND_FOCUS"

#: Environment variable holding the focus keywords, separated by commas (none when unset).
FOCUS_KEYWORDS_VAR = "ATTEND_FOCUS_KEYWORDS"


@dataclass(frozen=True, slots=True)
class Focus:
    """What the session is working on: its directory, a description and keywords, and the environment
    attend runs in.

    A sensor may use it to scope what it observes (the git sensor reads the repository at `cwd`).
    `session` is the session a `scope: session` sensor is polled for (its transcript is
    `<projects_dir>/<project folder>/<session>.jsonl`); empty for a project-wide poll. `env` is the
    environment the poll runs in (the daemon's, or a one-shot command's: `PollContext.env`): a sensor reads
    `HOME`, the XDG folders, `PATH` and the like from it (`expand_home`, `peers_dir(focus.env)`), never from
    `os.environ`, so a daemon given another environment polls in it. A Focus built without one (a test, a
    harness of its own) gets the process's environment. `transcript` is that
    session's transcript as Claude Code told its hooks, when it did (None otherwise).
    """

    cwd: Path
    description: str = ""
    keywords: tuple[str, ...] = ()
    session: str = ""
    env: Mapping[str, str] = field(default_factory=lambda: os.environ, compare=False, repr=False)
    transcript: Path | None = None


def focus_from_env(cwd: Path, env: Mapping[str, str], *, session: str | None = None,
                   transcript: Path | str | None = None) -> Focus:
    """The focus of a session in `cwd`, with description and keywords read from `env`.

    Args:
        cwd: The project directory.
        env: The daemon's environment; `ATTEND_FOCUS` and `ATTEND_FOCUS_KEYWORDS` (comma-separated)
            are read from it, and are empty when unset.
        session: the session a session-scoped sensor is polled for (None: a project-wide poll).
        transcript: that session's transcript as Claude Code told its hooks (None: not told).

    Returns:
        The Focus (its `env` is `env`).
    """
    keywords = tuple(k.strip() for k in env.get(FOCUS_KEYWORDS_VAR, "").split(",") if k.strip())
    return Focus(cwd=Path(cwd), description=env.get(FOCUS_DESCRIPTION_VAR, "").strip(), keywords=keywords,
                 session=session or "", env=env, transcript=Path(transcript) if transcript else None)


class SensorUnavailable(Exception):
    """The sensor's upstream is not there (no repository, no transcript, no /proc).

    The crate kind records the message as the sensor's `unavailable` state; nothing fires.
    """


class SensorAuthFailed(SensorUnavailable):
    """The sensor's upstream refused its credential (the peers server): the `auth_failed` state, never a prompt."""


def unavailable(exc: Any) -> SensorUnavailable:
    """A peers server's failure (`peers.mailbox.Unavailable`) as the sensor's state, in the server's words."""
    state = getattr(exc, "state", "unavailable")
    words = f"the peers server: {getattr(exc, 'words', exc)}"
    return SensorAuthFailed(words) if state == "auth_failed" else SensorUnavailable(words)


def newest_transcript(projects_dir: Path, project: str | Path) -> Transcript:
    """`peers.transcript.newest_transcript` for a sensor: no transcript is `SensorUnavailable`."""
    from attend.peers.transcript import NoTranscript
    from attend.peers.transcript import newest_transcript as newest

    try:
        return newest(projects_dir, Path(project))
    except NoTranscript as exc:
        raise SensorUnavailable(str(exc)) from None


def focus_transcript(projects_dir: Path, project: str | Path, session: str, transcript: Path | None = None) -> Transcript:
    """`peers.transcript.focus_transcript` for a sensor: the focused session's own transcript (a
    `scope: session` poll; `transcript`, the focus's, when Claude Code told it), else the project's
    newest; no transcript is `SensorUnavailable`."""
    from attend.peers.transcript import NoTranscript
    from attend.peers.transcript import focus_transcript as focused

    try:
        return focused(projects_dir, Path(project), session, transcript)
    except NoTranscript as exc:
        raise SensorUnavailable(str(exc)) from None


class SensorConfigError(ValueError):
    """The `crate:` block lacks a field the sensor needs, or holds one of the wrong type."""


@runtime_checkable
class Sensor(Protocol):
    """A compiled sensor.

    Construction: ``SensorClass(config)`` where `config` is the sensor file's ``crate:`` block (a dict,
    every default filled in by the shipped file). A missing or ill-typed field raises
    `SensorConfigError`, which the crate kind records as the `invalid` state.

    Optional methods, found by name: ``export_state() -> JSON-able`` and ``import_state(state)``. attend
    stores the exported state after every successful poll and hands it back to a new instance (after
    a restart, or to a one-shot ``attend sensors poll``) before its first poll.

    ``wake_on(focus) -> list of paths or globs``: files whose change should poll the sensor at once
    (the daemon watches them beside the file's own `wake_on`, and asks again after every poll). The
    git sensor declares its repository's HEAD, index, refs and packed-refs.

    ``skipped() -> list of str``: what the last successful poll skipped as unreadable (a corrupt file),
    one line each. The poll stays `ok`; its status message names them, so `attend sensors` shows them.
    """

    def poll(self, focus: Focus) -> Any:
        """Observe once and return a JSON-like result (dicts, lists, strings, numbers, booleans, None).

        Raises:
            SensorUnavailable: the upstream is not there; the message says what is missing.
        """
        ...


_TYPE_NAMES = {int: "a whole number", float: "a number", str: "a string", list: "a list", bool: "true or false", dict: "a mapping"}


def require(config: Mapping[str, Any], field: str, kind: type | tuple[type, ...]) -> Any:
    """The value of `field` in a crate block, checked against `kind`.

    Args:
        config: The crate block.
        field: The field name.
        kind: The accepted type(s); `float` also accepts whole numbers, never booleans.

    Returns:
        The value.

    Raises:
        SensorConfigError: the field is missing or of another type.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds:
        kinds = (*kinds, int)
    if field not in config:
        raise SensorConfigError(f"the crate block needs `{field}`")
    value = config[field]
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds if k is not int or float not in kinds)
        raise SensorConfigError(f"`{field}` must be {wanted}, not {yaml_text(value)}")
    return value


def expand_home(path: str, env: Mapping[str, str]) -> Path:
    """`path` with a leading `~` expanded to the home folder of `env` (its ``$HOME``; `files.home_folder`), as in a
    shipped file's fields (`projects_dir: ~/.claude/projects`); `~user` is that user's home."""
    from attend.files import home_folder

    if path == "~" or path.startswith("~/"):
        return home_folder(env) / path[2:]
    return Path(path).expanduser()


def require_seconds(config: Mapping[str, Any], field: str) -> float:
    """The duration in `field` of a crate block, in seconds (a number, or ``500ms``/``30s``/``5m``/``1h``).

    Raises:
        SensorConfigError: the field is missing or not a duration.
    """
    from attend.spec.durations import parse_duration

    if field not in config:
        raise SensorConfigError(f"the crate block needs `{field}`")
    try:
        return parse_duration(config[field])
    except ValueError as exc:
        raise SensorConfigError(f"`{field}`: {exc}") from None
