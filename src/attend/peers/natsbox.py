"""The peers mailbox across machines: the files mailbox with a NATS JetStream server behind it (docs/peers.md, "Across machines").

`NatsMailbox` is `Mailbox` (peers/mailbox.py) with the transport's seam filled in; everything that reads
messages reads this machine's peers folder as before (the messages sensor, `peers inbox`, the cold start),
so one path delivers a message whichever machine sent it. What changes:

- A project is named by its identity (peers/machine.py), the same on every machine: its tray folder is
  `p-<hash of the identity>`, a message's `project` and `to` are identities, and `--to` takes a folder
  here or an identity `peers list` shows.
- `post` writes the message into this machine's folder (so this machine's sessions see it at once), then
  into the spool (`$XDG_STATE_HOME/attend/peers-spool/`, one file per message, named by when it was
  sent), then publishes the spool in order (`flush`), removing each file once the server stored it. With
  the server unreachable the message stays spooled: a running session's `attend run` publishes it when the
  server is back (serve.py), and so does the next send, ahead of its own message.
- Receiving: a running session keeps its machine's consumer for its project mirrored into the folder
  (`start_receiving`; what one fetch brings is one batch file per folder, or a message file when it is one
  message, written and fsynced before any of it is acked: mailbox.py `write_received`); a one-shot command
  (`peers inbox`, `reply`) drains it once (`receive`). A message whose id is already stored there (its own
  send, or a redelivery after a crash before the ack) is acked and dropped.
- Presence: the heartbeat file as before (it tells this machine's processes apart) and a key in the
  presence bucket; `presences()` lists the bucket, every machine's sessions. Channels' members are a
  bucket too (`channels`, `join`, `leave`).
- A server that cannot be used is `Unavailable` (natslink.py), which the sensors report as their state
  and the commands in one line; never a prompt, never a crash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attend.files import state_folder, write_atomically
from attend.peers.machine import identity_hash, machine_id, project_identity
from attend.peers.mailbox import (
    MESSAGE_ID_RE,
    OPEN,
    Mailbox,
    Message,
    Presence,
    _locked,
    _real_folder,
    _time,
    check_channel,
    read_stored,
    stored_names,
    write_received,
)
from attend.peers.natslink import (
    CHANNELS_BUCKET,
    PRESENCE_BUCKET,
    SUBJECT_PREFIX,
    NatsSettings,
    Unavailable,
    link,
    payload,
)

__all__ = ["NatsMailbox", "Unavailable"]


@dataclass
class NatsMailbox(Mailbox):
    """This machine's peers folder with the NATS server behind it (see the module docstring)."""

    settings: NatsSettings | None = None
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    #: The transcript's last write of a session in a folder (`activity(session, folder)`), sent with its heartbeat.
    activity: Callable[[str, str], float | None] | None = None

    transport = "nats"

    def __post_init__(self) -> None:
        assert self.settings is not None
        self.link = link(self.settings)
        self.machine = machine_id(self.env)
        self.spool = state_folder(self.env) / "peers-spool"
        self._checked: set[Path] = set()
        #: Per folder: the stored files' names this process has looked at, and the message ids they hold.
        self._stored: dict[Path, tuple[set[str], set[str]]] = {}

    # -- names -------------------------------------------------------------------------------------

    def project_key(self, project: Path | str) -> str:
        """A folder's identity; an identity (not an absolute path) as it is."""
        text = str(project)
        return project_identity(text, self.env) if os.path.isabs(text) else text

    def tray_name(self, project: Path | str) -> str:
        return "p-" + identity_hash(self.project_key(project))

    def _marker(self, to: str) -> str:
        return to  # an identity, never a path a sweep could find gone

    def _subject(self, message: Message) -> str:
        if message.channel and message.channel != OPEN:
            return f"{SUBJECT_PREFIX}.c.{message.channel}"
        if message.to:
            return f"{SUBJECT_PREFIX}.p.{identity_hash(message.to)}"
        return f"{SUBJECT_PREFIX}.open"

    def _consumer(self, project: Path | str) -> tuple[str, list[str]]:
        hashed = identity_hash(self.project_key(project))
        return (f"m-{self.machine}-{hashed}",
                [f"{SUBJECT_PREFIX}.p.{hashed}", f"{SUBJECT_PREFIX}.open", f"{SUBJECT_PREFIX}.c.>"])

    # -- sending -----------------------------------------------------------------------------------

    def post(self, message: Message, *, sync: bool = True) -> Path:
        """Write `message` here, spool it, and publish the spool in order (see the module docstring).

        Raises:
            FileExistsError: a message with that id is here already (nothing is spooled).
        """
        path = super().post(message, sync=sync)
        entry = {"subject": self._subject(message), "message": message.to_json()}
        write_atomically(self.spool / f"{time.time_ns():020d}-{message.id}.json", json.dumps(entry, ensure_ascii=False))
        with contextlib.suppress(Unavailable):
            self.flush()
        return path

    def _spooled(self) -> list[Path]:
        try:
            return sorted(p for p in self.spool.iterdir() if p.name.endswith(".json") and not p.name.startswith("."))
        except OSError:
            return []

    def waiting(self) -> int:
        return len(self._spooled())

    def flush(self) -> int:
        """Publish every spooled message, the oldest first, each removed once stored; how many went.

        Raises:
            Unavailable: the server could not take one (it and those after it stay spooled, in order).
        """
        if not self._spooled():
            return 0
        sent = 0
        self.spool.mkdir(parents=True, exist_ok=True)
        with _locked(self.spool / ".lock"):  # one publisher at a time keeps the order
            for path in self._spooled():
                try:
                    entry = json.loads(path.read_text(encoding="utf-8"))
                    subject, data = str(entry["subject"]), entry["message"]
                    message_id = str(data["id"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # not a spool entry attend wrote: left alone (`attend doctor` names it)
                self.link.publish(subject, payload(data), message_id)
                path.unlink(missing_ok=True)
                sent += 1
        return sent

    # -- receiving ---------------------------------------------------------------------------------

    def _hand_over(self, payloads: list[bytes]) -> set[int]:
        """Store what one fetch delivered in this machine's folders, synced before it returns (`write_received`:
        a batch file per folder, so 10,000 waiting messages are some ten files written, not 10,000); an id
        already stored there is dropped. The indexes of the payloads that are no message (acked never: terminated).

        Raises:
            OSError: they could not be stored (each is delivered again).
        """
        from attend.peers.mailbox import read_json_bounded

        refused: set[int] = set()
        received: dict[Path, list[Message]] = {}
        folders: dict[tuple[str | None, str | None], Path] = {}  # by (channel, to): a batch has few
        for n, data in enumerate(payloads):
            try:
                message = Message.from_json(read_json_bounded(data))
                # Whoever holds the credentials wrote this: the id must look like one attend draws (it names a
                # file), and `to` is taken as an identity, never resolved as a path here (no git run in a folder
                # it names).
                if not MESSAGE_ID_RE.fullmatch(message.id):
                    raise ValueError(f"message id {message.id[:40]!r} is not one attend draws")
                address = (message.channel, message.to)
                folder = folders.get(address)
                if folder is None:
                    if message.channel and message.channel != OPEN:
                        folder = self.root / f"@{check_channel(message.channel)}"
                    elif message.to:
                        folder = self.root / f"p-{identity_hash(message.to)}"
                    else:
                        folder = self.root / OPEN
                    folders[address] = folder
            except ValueError:  # PeerError (a bad channel name) is one
                refused.add(n)
                continue
            received.setdefault(folder, []).append(message)
        for folder, messages in received.items():
            if folder not in self._checked:  # once per folder: a real folder (never a link), its `.project` marker
                _real_folder(folder)
                to = messages[0].to
                if to and folder.name.startswith("p-") and not (folder / ".project").exists():
                    write_atomically(folder / ".project", self._marker(to))
                self._checked.add(folder)
            here = self._stored_ids(folder)
            new = [m for m in messages if m.id not in here]
            if new:
                self._stored[folder][0].update(path.name for path in write_received(folder, new))
                here.update(m.id for m in new)
        return refused

    def _stored_ids(self, folder: Path) -> set[str]:
        """The message ids stored in `folder` now: a message file's by its name, a batch file's by what it holds
        (read once by this process; another receiver of this machine may have written one since the last look)."""
        names, ids = self._stored.setdefault(folder, (set(), set()))
        for name in stored_names(folder):
            if name not in names:
                names.add(name)
                if name.endswith(".jsonl"):
                    ids.update(m.id for m in read_stored(folder / name)[0])
                else:
                    ids.add(name.removesuffix(".json"))
        return ids

    def receive(self, project: Path | str) -> None:
        """Bring what waits for `project` here now (a one-shot command); a running session's mirror suffices.

        Raises:
            Unavailable: the server cannot be used.
        """
        consumer, subjects = self._consumer(project)
        if self.link.mirroring(consumer):
            if self.link.failure is not None:
                raise self.link.failure
            return
        self.link.drain(consumer, subjects, self._hand_over)

    def start_receiving(self, project: Path | str, before_ack: Any = None) -> None:
        consumer, subjects = self._consumer(project)
        self.link.mirror(consumer, subjects, self._hand_over, before_ack)
        # A session starting or leaving on another machine rewrites nothing here: the presence bucket's watch
        # touches `heartbeat/.remote`, which the peers sensor wakes on (it watches the heartbeat folder).
        self.link.watch(PRESENCE_BUCKET, self._presence_changed)

    def stop_receiving(self, project: Path | str) -> None:
        self.link.stop_mirror(self._consumer(project)[0])
        self.link.stop_watch(PRESENCE_BUCKET)

    def _presence_changed(self) -> None:
        with contextlib.suppress(OSError):
            write_atomically(_real_folder(self.root / "heartbeat") / ".remote", f"{time.time()}\n", sync=False)

    def failure(self) -> Unavailable | None:
        """Why the server cannot be used now, as this process last saw it (None: it can)."""
        return self.link.failure

    # -- presence ----------------------------------------------------------------------------------

    def _key(self, session: str) -> str:
        return f"{self.machine}.{hashlib.sha256(session.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"

    def beat(self, session: str, project: Path | str, *, pid: int | None, started: float,
             host: tuple[int, str] | None = None, conduit: str | None = None) -> Presence | None:
        owner = super().beat(session, project, pid=pid, started=started, host=host, conduit=conduit)
        if owner is None:
            folder = str(Path(project).resolve())
            activity = self.activity(session, folder) if self.activity is not None else None
            value = {"session": session, "project": self.project_key(folder), "machine": self.machine,
                     "path": folder, "pid": pid, "started": started, "conduit": conduit, "activity": activity}
            self.link.put(PRESENCE_BUCKET, self._key(session), json.dumps(value).encode("utf-8"))
        return owner

    def leave_presence(self, session: str, *, pid: int | None = None) -> bool:
        left = super().leave_presence(session, pid=pid)
        if left:
            with contextlib.suppress(Unavailable):
                self.link.delete(PRESENCE_BUCKET, self._key(session), timeout=2.0)
        return left

    def presences(self, *, live_only: bool = True) -> list[Presence]:
        """Every machine's live sessions (the presence bucket's keys), the earliest started first.

        Raises:
            Unavailable: the server cannot be used.
        """
        from attend.peers.mailbox import read_json_bounded

        self.corrupt_heartbeats = []
        out = []
        now = self.clock()
        for key, value in self.link.entries(PRESENCE_BUCKET).items():
            try:
                data = read_json_bounded(value)
                pid = data.get("pid")
                if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 1 << 31):
                    raise ValueError("pid is not a process id")
                activity = data.get("activity")
                machine = str(data["machine"])
                out.append(Presence(
                    str(data["session"]), str(data["project"]), pid, _time(data.get("started", now), "started"), now,
                    machine=machine, path=str(data.get("path") or ""), remote=machine != self.machine,
                    activity=None if activity is None else _time(activity, "activity"),
                    conduit=None if data.get("conduit") is None else str(data["conduit"])))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self.corrupt_heartbeats.append((Path(f"nats:{PRESENCE_BUCKET}/{key}"), f"{type(exc).__name__}: {exc}"))
        return sorted(out, key=lambda p: (p.started, p.session))

    # -- channels ----------------------------------------------------------------------------------

    def channels(self) -> dict[str, list[str]]:
        """Every named channel and its members, on every machine.

        Raises:
            Unavailable: the server cannot be used.
        """
        from attend.peers.mailbox import read_json_bounded

        self.corrupt_channels = None
        out: dict[str, list[str]] = {}
        for name, value in self.link.entries(CHANNELS_BUCKET).items():
            try:
                members = read_json_bounded(value)
            except ValueError:
                self.corrupt_channels = f"channel {name}: not a list of members"
                continue
            if isinstance(members, list) and members:
                out[name] = [str(m) for m in members]
        return out

    def _change(self, channel: str, change: Callable[[list[str]], list[str]]) -> None:
        def apply(old: bytes | None) -> bytes | None:
            try:
                current = json.loads(old) if old else []
            except ValueError:
                current = []
            new = change([str(m) for m in current] if isinstance(current, list) else [])
            return json.dumps(new).encode("utf-8") if new else None
        self.link.update(CHANNELS_BUCKET, channel, apply)

    def join(self, channel: str, session: str) -> None:
        from attend.peers.mailbox import PeerError, check_channel

        if check_channel(channel) == OPEN:
            raise PeerError("every session is on the open channel already")
        self._change(channel, lambda members: members if session in members else [*members, session])

    def leave(self, channel: str, session: str) -> bool:
        from attend.peers.mailbox import check_channel

        check_channel(channel)
        if session not in self.channels().get(channel, []):
            return False
        self._change(channel, lambda members: [m for m in members if m != session])
        return True
