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
- `text` is one line, control characters escaped, when it is at most `text_limit` (260) characters; a
  longer one is split into at most `parts` (3) lines marked `(1/3)`, `(2/3)`, `(3/3)`, the rest cut with
  `attend peers inbox --id ID` to read it whole (`split_text`; the message lane prints each line of a
  description as a line of its own, runtime/delivery.py). `header` is the bracketed `[from_kind=...
  from_id=... on_behalf_of=... to=...]` (upstream ADR-401). Only the newest `window` messages are listed (a
  stored file's name starts with the newest id it holds, and ids sort by time, so only the files holding
  them are read: `mailbox.newest_stored`): trigger state and the poll stay small with thousands stored,
  and a burst bigger than that is one digest line anyway.
- Message and batch files never change once written, so a file parsed once is kept by name and only
  new names are read on the next poll. A file or a batch file's line that does not parse (or a file that is
  not a regular file within its bound, or a `ts` that is not a time) is skipped and reported by `skipped()`
  (a line in `attend sensors`, its name escaped) while it is there, never a crash.
- `wake_on`: the message and batch files of the tray, the open channel and the channels, so a send polls
  the sensor at once (no more often than the file's `min_interval`).

Result::

    {"messages": [{"id", "from", "from_kind", "from_id", "on_behalf_of", "to", "header",
                   "kind": "addressed|channel|open", "channel", "member", "re", "text", "ts"}], "count": N}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from attend.peers.mailbox import OPEN, Mailbox, Message, Unavailable, newest_stored, read_stored, stored_names
from attend.peers.transport import open_mailbox
from attend.sensors.base import Focus, SensorConfigError, require, require_seconds, unavailable
from attend.text import one_line, printable, printable_path

if TYPE_CHECKING:
    from attend.vocab import JSON, JSONObject

__all__ = ["FIELD_LIMIT", "PARTS", "MessagesSensor", "message_item", "split_text"]

#: The most characters of a message's id, sender, channel or `re` on a line (session ids are at most 128).
FIELD_LIMIT = 128


#: How many lines a message's text takes at most on the message lane (runtime/delivery.py `MESSAGE_LINES`).
PARTS = 3
#: How far back from a part's end a split looks for a space to break at (characters).
BREAK_WINDOW = 40


def split_text(text: str, size: int, parts: int, message_id: str) -> str:
    """A message's text as the line shows it: one line when it is at most `size` characters; else at most
    `parts` lines of about `size` characters each, joined by line breaks (the message lane prints each as a
    line of its own), marked `(1/3)`, `(2/3)`, `(3/3)`, each after the first naming the message again; what
    does not fit is cut, and the last line says how to read it whole.

    Printable and redacted first (`text.one_line`), so a break never splits an escape or leaves a secret's
    prefix; a line breaks at a space when one is near its end.
    """
    from attend.redact import cut

    whole = printable(text, one_line=True).strip()
    if len(whole) <= size:
        return whole
    chunks: list[str] = []
    rest = whole
    while rest and len(chunks) < parts - 1 and len(rest) > size:
        end = rest.rfind(" ", max(0, size - BREAK_WINDOW), size + 1)
        end = size if end <= 0 else end
        chunks.append(rest[:end].rstrip())
        rest = rest[end:].lstrip()
    if len(rest) > size:
        chunks.append(f"{cut(rest, size)} (cut: attend peers inbox --id {message_id} reads it whole)")
    elif rest:
        chunks.append(rest)
    n = len(chunks)
    marked = [f"({k}/{n}) {chunk}" if k == 1 else f"message {message_id} ({k}/{n}) {chunk}"
              for k, chunk in enumerate(chunks, 1)]
    return "\n".join(marked)


@overload
def _field(value: str) -> str: ...
@overload
def _field(value: str | None) -> str | None: ...


def _field(value: str | None) -> str | None:
    """A field of a message file on one line and bounded (None stays None)."""
    return None if value is None else one_line(str(value), FIELD_LIMIT)


def message_item(message: Message, kind: str, *, member: bool, text_limit: int, parts: int = PARTS) -> JSONObject:
    """One message as the sensor's result lists it; every field printable on one line, but `text`, whose lines
    are the parts of a long message (`split_text`: at most `parts` of `text_limit` characters).

    The fields come from a file anyone on the machine can write, so the sender, id, channel and `re`
    are escaped and bounded like the text (a line must never drive the reader's terminal). `header` names who
    sent it and for whom (upstream ADR-401): `from_kind`, `from_id`, `on_behalf_of` (when the file says), `to`
    (the project, `@channel` or `open`).
    """
    to = _field(message.to or "this project") if kind == "addressed" else f"@{_field(message.channel)}" if kind == "channel" \
        else "open"
    header = [f"from_kind={_field(message.from_kind)}", f"from_id={_field(message.sender_id)}"]
    if message.on_behalf_of is not None:
        header.append(f"on_behalf_of={_field(message.on_behalf_of)}")
    header.append(f"to={to}")
    return {
        "id": _field(message.id),
        "from": _field(message.sender) if message.from_kind != "human" else "human",
        "from_kind": _field(message.from_kind),
        "from_id": _field(message.sender_id),
        "on_behalf_of": _field(message.on_behalf_of),
        "to": to,
        "header": "[" + " ".join(header) + "]",
        "kind": kind,
        "channel": _field(message.channel) if kind == "channel" else None,
        "member": member,
        "re": _field(message.re),
        "text": split_text(message.text, text_limit, parts, _field(message.id)),
        "ts": message.ts,
    }


class MessagesSensor:
    """Lists the messages this project's sessions receive, newest `window` of them.

    Crate fields (set in ``sensors.d/messages.yaml``): `text_limit` (characters of text on the line),
    `window` (how many of the newest messages are listed), and the cold start's (runtime/sessions/cold_start.py)
    `cold_start_addressed` (how many addressed messages a new session is handed) and
    `cold_start_recent` (how young an open or channel message must be to be handed over). The peers folder
    is `$XDG_CACHE_HOME/attend/peers` of the poll's environment (`focus.env`), as for `attend peers`.
    """

    def __init__(self, config: Mapping[str, Any], clock: Callable[[], float] | None = None) -> None:
        self.text_limit: int = require(config, "text_limit", int)
        self.window: int = require(config, "window", int)
        self.cold_start_addressed: int = require(config, "cold_start_addressed", int)
        self.cold_start_recent = require_seconds(config, "cold_start_recent")
        self.parts = config.get("parts", PARTS)  # a file from before `parts` (a copy) splits as shipped
        if isinstance(self.parts, bool) or not isinstance(self.parts, int) or not 1 <= self.parts <= PARTS:
            raise SensorConfigError(f"`parts` must be a whole number from 1 to {PARTS}")
        if self.text_limit < 8 or self.window < 1 or self.cold_start_addressed < 0:
            raise SensorConfigError("`text_limit` must be at least 8, `window` at least 1 and "
                                    "`cold_start_addressed` at least 0")
        self._clock = clock
        #: The peers folder of the last poll's environment and its mailbox (`_mailbox`).
        self.root: Path | None = None
        self.mailbox: Mailbox | None = None
        #: Each stored file the last poll read (by path): its messages, and why any of it does not parse.
        self._parsed: dict[str, tuple[list[Message], list[str]]] = {}

    def poll(self, focus: Focus) -> JSONObject:
        """The newest `window` messages of the project's tray, the open channel and every named channel.

        File names are message ids, which sort by time, so only the newest `window` files are read.
        """
        mailbox = self._mailbox(focus)
        project = mailbox.project_key(focus.cwd)
        root = str(mailbox.root)
        try:
            mailbox.receive(focus.cwd)  # across machines: what the server holds for this project, here
        except Unavailable as exc:
            raise unavailable(exc) from None
        folders: list[tuple[str, str, bool, str | None]] = [
            (f"{root}/{mailbox.tray_name(project)}", "addressed", True, None), (f"{root}/{OPEN}", "open", True, None)]
        channels = sorted(name[1:] for name in self._names_of_channels(root))
        if channels:
            try:
                here = {p.session for p in mailbox.presences() if p.project == project}
                members = mailbox.channels()
            except Unavailable as exc:
                raise unavailable(exc) from None
            folders += [(f"{root}/@{c}", "channel", bool(here & set(members.get(c, []))), c) for c in channels]
        named = [(name, (folder, kind, member)) for folder, kind, member, _ in folders for name in stored_names(folder)]
        parsed: dict[str, tuple[list[Message], list[str]]] = {}

        def read(name: str, where: tuple[str, str, bool]) -> list[Message]:
            # A file read by an earlier poll is not read again; what does not parse is named by `skipped()`.
            path = f"{where[0]}/{name}"
            found = parsed[path] = self._parsed.get(path) or read_stored(Path(path))
            return found[0]

        listed: list[JSON] = [message_item(message, kind, member=member, text_limit=self.text_limit, parts=self.parts)
                  for message, (_, kind, member) in newest_stored(named, self.window, read)]
        self._parsed = parsed
        return {"messages": listed, "count": len(listed)}

    def _mailbox(self, focus: Focus) -> Mailbox:
        """The mailbox of the poll's environment (built again only when its folder or transport changes)."""
        mailbox = open_mailbox(focus.env, self._clock)
        if self.mailbox is None or (mailbox.root, mailbox.transport) != (self.mailbox.root, self.mailbox.transport):
            self.root, self.mailbox = mailbox.root, mailbox
        return self.mailbox

    @staticmethod
    def _names_of_channels(root: str) -> list[str]:
        try:
            with os.scandir(root) as entries:
                return [e.name for e in entries if e.name.startswith("@") and e.is_dir()]
        except OSError:
            return []

    def skipped(self) -> list[str]:
        """The message files of the last poll that do not parse, one line each (`attend sensors` shows them)."""
        return [f"message {printable_path(path)}: {printable(why, one_line=True)}"
                for path, (_, problems) in sorted(self._parsed.items()) for why in problems]

    def wake_on(self, focus: Focus) -> list[str]:
        """The message files of the project's tray, the open channel and the named channels."""
        return self._mailbox(focus).tray_globs(focus.cwd)
