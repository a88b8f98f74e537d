"""The peers sensor: agent sessions on this machine start, exit, and go from working to waiting (DESIGN.md, "Peers").

Presence only: peer messages are the messages sensor's, on the message lane (the split upstream's
#139 asks for). The sessions are the live heartbeats under ``$XDG_CACHE_HOME/attend/peers/heartbeat/``
(`attend.peers.mailbox`); each one's status and context use come from its Claude Code transcript
(`attend.peers.presence`).

The result lists every live session, the polling session's own included: the journal is the
project's, printed by every session attached to it, and the session that polls changes (a takeover),
so leaving the poller out would report a takeover as the new poller's exit and never report the old
one's. Instead a session's Monitor stream leaves out the peers lines about itself
(`runtime/sessions/printer.py`, `PRESENCE_SENSOR`): its own start is not news to it.

Result::

    {"project": "/path/of/this/project",
     "sessions": [{"session": "s1", "project": "/p", "here": true, "pid": 4242, "started": 1767000000.0,
                   "status": "working", "context": 41.5, "context_tokens": 83000}],
     "statuses": [{"session": "s1", "project": "/p", "here": true, "status": "working"}]}

`statuses` holds only the sessions whose status is known (working or waiting), so a `changed` trigger
on it fires for working ↔ waiting and never for a session whose transcript appears or disappears.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attend.peers.mailbox import Unavailable, peers_dir
from attend.peers.presence import (
    PRESENCE_SENSOR,
    UNKNOWN,
    PresenceSettings,
    TranscriptReader,
)
from attend.sensors.base import (
    Focus,
    SensorConfigError,
    expand_home,
    require,
    require_seconds,
    unavailable,
)
from attend.text import printable, printable_path

__all__ = ["PeersSensor", "presence_settings", "settings_from_crate"]


def settings_from_crate(config: Mapping[str, Any], env: Mapping[str, str]) -> PresenceSettings:
    """The presence settings of a peers crate block (`~` in `projects_dir` is the home of `env`).

    Raises:
        SensorConfigError: a field is missing or of the wrong type.
    """
    window = require(config, "window", int)
    if window <= 0:
        raise SensorConfigError("`window` must be a positive number of tokens")
    return PresenceSettings(expand_home(require(config, "projects_dir", str), env), window,
                            require_seconds(config, "working_within"))


def presence_settings(project_dir: Path | str, env: Mapping[str, str]) -> PresenceSettings:
    """The peers sensor's crate block merged over its layers; the shipped file's when the merged one is unusable
    (what `attend peers list` reads, so one setting changes the sensor and the listing)."""
    from attend.spec import layer_paths, load_paths, read_sensor_file
    from attend.spec.reader import read_sensor

    shipped = layer_paths(project_dir, env).shipped / f"{PRESENCE_SENSOR}.yaml"
    try:
        sensor = load_paths([shipped], project_dir, env).sensors[PRESENCE_SENSOR]
        return settings_from_crate(sensor.ir.crate, env)
    except (KeyError, SensorConfigError, OSError):
        return settings_from_crate(read_sensor(read_sensor_file(shipped, "shipped").data or {}).crate, env)


class PeersSensor:
    """Reports the live sessions of this machine with their project, status and context use.

    Crate fields (set in ``sensors.d/peers.yaml``): `projects_dir` (Claude Code's transcripts, ``~``
    expanded), `window` (context window in tokens), `working_within` (a duration: a transcript written
    this recently means `working`). The peers folder is ``$XDG_CACHE_HOME/attend/peers`` and `~` the home
    of the poll's environment (`focus.env`), as for `attend peers`.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        settings_from_crate(config, {})  # a bad block is `invalid` at once, before any poll
        self.reader: TranscriptReader | None = None
        self._skipped: list[str] = []

    def skipped(self) -> list[str]:
        """The heartbeat files the last poll could not parse (left out of the sessions), one line each."""
        return self._skipped

    def _reader(self, focus: Focus) -> TranscriptReader:
        """The transcript reader of the poll's environment (built again only when its settings change)."""
        settings = settings_from_crate(self.config, focus.env)
        if self.reader is None or self.reader.settings != settings:
            self.reader = TranscriptReader(settings)
        return self.reader

    def wake_on(self, focus: Focus) -> list[str]:
        """The heartbeat folder: a session starting or exiting polls at once (no more often than `min_interval`)."""
        return [str(peers_dir(focus.env) / "heartbeat")]

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The live sessions, each with `here` (in this project), status and context use."""
        from attend.peers.transport import open_mailbox

        mailbox = open_mailbox(focus.env)
        here = mailbox.project_key(focus.cwd)
        now = time.time()
        sessions, statuses = [], []
        reader = self._reader(focus)
        try:
            presences = mailbox.presences()
        except Unavailable as exc:
            raise unavailable(exc) from None
        self._skipped = [f"heartbeat {printable_path(path)}: {printable(reason, one_line=True)}"
                         for path, reason in mailbox.corrupt_heartbeats]
        for presence in presences:
            state = reader.state(presence, now)
            item = {"session": presence.session, "project": presence.project, "here": presence.project == here,
                    "pid": presence.pid, "started": presence.started, "conduit": presence.current_conduit(),
                    **state.to_json()}
            if presence.machine:
                item["machine"] = presence.machine
            sessions.append(item)
            if state.status != UNKNOWN:
                statuses.append({"session": presence.session, "project": presence.project,
                                 "here": item["here"], "status": state.status})
        return {"project": here, "sessions": sessions, "statuses": statuses}
