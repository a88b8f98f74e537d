"""The messages sensor: peer messages this project's sessions receive (DESIGN.md, "Peers").

It reads the peers folder (peers/mailbox.py): the project's tray (addressed mail), the open channel,
and every named channel. Each message is one item keyed by its id; the file's triggers fire on `added`
by `kind` and carry `author: from`, so a session is never shown its own message (runtime/delivery.py,
`for_session`).

Decisions implemented here:

- Every named channel is listed, with `member` true when a live session of this project is on it
  (heartbeat and `channels.yaml`). A message stays in the result when its channel's members change,
  so joining a channel later never re-fires its old messages, and leaving one never reads as removal.
- `from` is the sending session's id, or `human` for a message sent from a plain terminal
  (`from_kind: human`): that is who composed it, and what the line shows.
- `text` is one line, control characters escaped, at most `text_limit` characters (`attend peers inbox
  ID` shows it whole). Only the newest `window` messages are listed: trigger state stays small with
  thousands stored, and a burst bigger than that is one digest line anyway.
- Message files never change once renamed into place, so a file parsed once is kept by name and only
  new names are read on the next poll. A file that does not parse is skipped and reported by
  `skipped()` (a line in `attend sensors`) while it is there, never a crash.
- `wake_on`: the message files of the tray, the open channel and the channels, so a send polls the
  sensor at once (no more often than the file's `min_interval`).

Result::

    {"messages": [{"id", "from", "from_kind", "kind": "addressed|channel|open", "channel", "member",
                   "re", "text", "ts"}], "count": N}
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attend.peers.mailbox import OPEN, Mailbox, Message, peers_dir, tray_name
from attend.peers.text import one_line
from attend.sensors.base import Focus, SensorConfigError, require, require_seconds

__all__ = ["MessagesSensor", "message_item"]


def message_item(message: Message, kind: str, *, member: bool, text_limit: int) -> dict[str, Any]:
    """One message as the sensor's result lists it."""
    return {
        "id": message.id,
        "from": message.sender if message.from_kind != "human" else "human",
        "from_kind": message.from_kind,
        "kind": kind,
        "channel": message.channel if kind == "channel" else None,
        "member": member,
        "re": message.re,
        "text": one_line(message.text, text_limit),
        "ts": message.ts,
    }


class MessagesSensor:
    """Lists the messages this project's sessions receive, newest `window` of them.

    Crate fields (set in ``sensors.d/messages.yaml``): `text_limit` (characters of text on the line),
    `window` (how many of the newest messages are listed), and the cold start's (runtime/cold_start.py)
    `cold_start_addressed` (how many addressed messages a new session is handed) and
    `cold_start_recent` (how young an open or channel message must be to be handed over). `env` is for
    callers that need another peers folder than `$XDG_CACHE_HOME/attend/peers`.
    """

    def __init__(self, config: Mapping[str, Any], env: Mapping[str, str] | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.text_limit: int = require(config, "text_limit", int)
        self.window: int = require(config, "window", int)
        self.cold_start_addressed: int = require(config, "cold_start_addressed", int)
        self.cold_start_recent = require_seconds(config, "cold_start_recent")
        if self.text_limit < 8 or self.window < 1 or self.cold_start_addressed < 0:
            raise SensorConfigError("`text_limit` must be at least 8, `window` at least 1 and "
                                    "`cold_start_addressed` at least 0")
        self.root = peers_dir(os.environ if env is None else env)
        self.mailbox = Mailbox(self.root) if clock is None else Mailbox(self.root, clock=clock)
        #: Each message file listed by the last poll: its message, or why it does not parse.
        self._parsed: dict[Path, Message | str] = {}

    def _read(self, folder: Path, parsed: dict[Path, Message | str]) -> list[Message]:
        """The messages of one folder; a file parsed by an earlier poll is not read again (it never changes).

        Every file listed goes into `parsed`, the cache of the next poll (so a removed file leaves it).
        """
        try:
            names = [e.name for e in os.scandir(folder) if e.name.endswith(".json") and not e.name.startswith(".")]
        except OSError:
            return []
        out = []
        for name in names:
            path = folder / name
            message = self._parsed.get(path)
            if message is None:
                try:
                    message = Message.from_json(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, UnicodeDecodeError, ValueError) as exc:
                    message = str(exc)  # corrupt: skipped, and reported by `skipped()` while it is there
            parsed[path] = message
            if isinstance(message, Message):
                out.append(message)
        return out

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The messages of the project's tray, the open channel and every named channel, newest last."""
        project = str(Path(focus.cwd).resolve())
        here = {p.session for p in self.mailbox.presences() if p.project == project}
        members = self.mailbox.channels()
        parsed: dict[Path, Message | str] = {}
        items: list[tuple[Message, str, bool]] = [
            (m, "addressed", True) for m in self._read(self.root / tray_name(project), parsed)]
        items += [(m, "open", True) for m in self._read(self.root / OPEN, parsed)]
        try:
            channels = sorted(e.name[1:] for e in os.scandir(self.root) if e.name.startswith("@") and e.is_dir())
        except OSError:
            channels = []
        for channel in channels:
            member = bool(here & set(members.get(channel, [])))
            items += [(m, "channel", member) for m in self._read(self.root / f"@{channel}", parsed)]
        self._parsed = parsed
        items.sort(key=lambda t: (t[0].ts, t[0].id))
        newest = items[-self.window:]
        listed = [message_item(m, kind, member=member, text_limit=self.text_limit) for m, kind, member in newest]
        return {"messages": listed, "count": len(listed)}

    def skipped(self) -> list[str]:
        """The message files of the last poll that do not parse, one line each (`attend sensors` shows them)."""
        return [f"message file {path}: {reason}" for path, reason in self._parsed.items() if isinstance(reason, str)]

    def wake_on(self, focus: Focus) -> list[str]:
        """The message files of the project's tray, the open channel and the named channels."""
        root = str(self.root)
        return [f"{root}/{tray_name(focus.cwd)}/*.json", f"{root}/{OPEN}/*.json", f"{root}/@*/*.json"]
