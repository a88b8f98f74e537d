"""Peer messages on disk: trays, channels and presence under `$XDG_CACHE_HOME/attend/peers/` (DESIGN.md, "Peers").

Layout (every name below is made here, never taken from a message or a user's path as is):

- `p-<hash>/`: the tray of one project (addressed mail), `<hash>` the first 16 hex digits of the
  SHA-256 of its resolved path; `p-<hash>/.project` names the path, so a sweep can tell a project
  that no longer exists.
- `open/`: the open channel, every live session's. `@<channel>/`: a named channel; its members (session
  ids) are in `channels.yaml`.
- `heartbeat/<session>`: presence, rewritten by every `attend run` (`HEARTBEAT` in runtime/serve.py)
  and written by a session's hooks (runtime/sessions/register.py). When it names the session's Claude
  Code process (`claude_pid`, `claude_start`: its host), the session is live while that process runs,
  however old the file is (a session its hooks alone serve writes it only now and then), and not a
  moment longer. Otherwise it is live while the file is younger than `LIVE_FOR` seconds (a SIGKILLed
  `attend run` stays live that long: its session may restart it, and mail sent meanwhile waits for
  it). A heartbeat is the process's that wrote it (its `pid`): a second `attend run` with the same
  session id neither rewrites nor removes it while that process runs, and a hook (no `pid`) never
  rewrites one whose `attend run` runs (`.heartbeat.lock` makes each check-and-write one step).

Decisions implemented here: one JSON file per message `{id, from, from_kind, from_id, on_behalf_of, project,
to, channel, re, text, ts}` (`from_id` and `on_behalf_of` came later: a file without them reads as `from_id`
= `from`, on behalf of nobody named), written to a hidden temporary file and renamed into place, so a reader never sees half a
message; readers never delete; the only removal is `sweep()`, of trays whose project is gone. A message
file that does not parse is skipped and reported (`Mailbox.corrupt`), never fatal.

Messages received together from the peers server (peers/natsbox.py: one fetch of its consumer) are one
batch file per folder instead, `<newest id>+<oldest id>.jsonl`, a message's JSON per line, oldest first
(`write_received`): a backlog of 10,000 is some ten files, not 10,000 (creating a file is what costs, and
what other processes' disk use makes slow). A file's name starts with the newest id it holds either way,
so readers list names (`stored_names`), read only the newest files they need (`newest_stored`) and read
both shapes alike (`read_stored`); a message id met twice (two receivers storing one redelivery) is one
message.
"""

from __future__ import annotations

import contextlib
import fcntl
import heapq
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from attend.bounds import MAX_PEER_BATCH_BYTES, MAX_PEER_MESSAGE_BYTES
from attend.errors import Refusal
from attend.files import WriteFailed, project_hash, read_regular_file, write_atomically, xdg_home

__all__ = [
    "BATCH_NAME_RE",
    "CHANNEL_RE",
    "LIVE_FOR",
    "MAX_PEER_FILE_BYTES",
    "MAX_TEXT",
    "MESSAGE_ID_RE",
    "Mailbox",
    "Message",
    "PeerError",
    "Presence",
    "Unavailable",
    "peers_dir",
    "read_json_bounded",
    "newest_stored",
    "read_peer_file",
    "read_stored",
    "skip_reason",
    "stored_names",
    "write_received",
]

#: A session is live while its heartbeat is younger than this (seconds).
LIVE_FOR = 90.0
#: The longest message text accepted (characters): a message is a note to a peer, not a file transfer.
MAX_TEXT = 8000
#: The largest message, heartbeat or `.project` file read (`bounds.MAX_PEER_MESSAGE_BYTES`).
MAX_PEER_FILE_BYTES = MAX_PEER_MESSAGE_BYTES
#: The latest time a message or heartbeat may carry (seconds; the year 3000): later is a bad file.
MAX_TIME = 32503680000.0
#: What a message id looks like (`new_id`): its time in milliseconds and 24 random bits.
MESSAGE_ID_RE = re.compile(r"[0-9]{13}-[0-9a-f]{6}\Z")
#: What a message file's name looks like (`new_id`): with batch files, the only files a sweep removes (and `.project`).
MESSAGE_NAME_RE = re.compile(r"[0-9]{13}-[0-9a-f]{6}\.json\Z")
#: What a batch file's name looks like (`write_received`): the newest and the oldest id it holds.
BATCH_NAME_RE = re.compile(r"([0-9]{13}-[0-9a-f]{6})\+([0-9]{13}-[0-9a-f]{6})\.jsonl\Z")
#: What a channel name may look like: it names a folder, so no separators and no dots.
CHANNEL_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}\Z")
#: The open channel's folder.
OPEN = "open"


class Unavailable(Exception):
    """The peers server (transport nats, peers/natslink.py) cannot be used: `state` is `unavailable` or
    `auth_failed`, `words` what was said (the server's or the connection's own words; never a credential)."""

    def __init__(self, state: str, words: str) -> None:
        super().__init__(f"{state}: {words}")
        self.state = state
        self.words = words


class PeerError(Refusal, ValueError):
    """A peer command that cannot be done as asked (bad channel name, text too long, nobody live): exit 1."""


def read_peer_file(path: Path) -> Any:
    """The JSON value of the peers file at `path`, read as untrusted (see the module docstring).

    Raises:
        OSError: it cannot be read, or is not a regular file of at most `MAX_PEER_FILE_BYTES`.
        ValueError: it is not UTF-8 or not JSON within the poll outputs' bounds (NaN, depth, digits).
    """
    return read_json_bounded(read_regular_file(path, MAX_PEER_FILE_BYTES))


def read_json_bounded(data: bytes) -> Any:
    """The JSON value of a peers file's or a delivered message's bytes, read as untrusted.

    Raises:
        ValueError: more than `MAX_PEER_FILE_BYTES`, not UTF-8, or not JSON within the poll outputs' bounds.
    """
    from attend.compiler.results import MalformedResult, read_json

    if len(data) > MAX_PEER_FILE_BYTES:
        raise ValueError(f"more than {MAX_PEER_FILE_BYTES} bytes")
    text = data.decode("utf-8")
    try:
        return read_json(text)
    except MalformedResult as exc:
        if exc.syntax:
            json.loads(text)  # not JSON at all: the parser's own JSONDecodeError, with its position
        raise ValueError(exc.message) from None


def _time(value: Any, name: str) -> float:
    """`value` as seconds since the epoch: a finite number from 0 to `MAX_TIME`, else `ValueError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} is not a number")
    if not 0 <= value <= MAX_TIME:  # NaN compares false; an integer compares exactly, however long
        raise ValueError(f"{name} is not a time (seconds from 0 to {MAX_TIME:.0f})")
    return float(value)


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _real_folder(folder: Path) -> Path:
    """`folder`, created if missing, when it is a folder and not a symlink (`WriteFailed` otherwise):
    nothing is written through a link out of the peers folder."""
    folder.mkdir(parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise WriteFailed(folder, "it is a symlink or not a folder; attend writes only inside the peers folder")
    return folder


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on the file at `path`, created if missing, never through a symlink."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def skip_reason(exc: BaseException) -> str:
    """Why a peers file was skipped, in a few words (its path is said beside it)."""
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"{type(exc).__name__}: {detail}"


def peers_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/attend/peers` (`~/.cache/attend/peers` when unset)."""
    return xdg_home(os.environ if env is None else env, "XDG_CACHE_HOME") / "attend" / "peers"


def tray_name(project: Path | str) -> str:
    """The folder name of a project's tray."""
    return "p-" + project_hash(project)


def check_channel(name: str) -> str:
    """`name` when it can name a channel; `PeerError` saying why otherwise."""
    if name == OPEN:
        return name
    if not CHANNEL_RE.fullmatch(name):
        raise PeerError(
            f"channel name {name[:40]!r} is not usable: lower-case letters, digits, _ and - only, "
            "starting with a letter or digit, at most 64 characters"
        )
    return name


#: A message as its file holds it (`Message.to_json`).
MessageJson = TypedDict("MessageJson", {
    "id": str, "from": str, "from_kind": str, "from_id": str, "on_behalf_of": str | None, "project": str,
    "to": str | None, "channel": str | None, "re": str | None, "text": str, "ts": float,
})


class PresenceJson(TypedDict):
    """A heartbeat as its file holds it (`Presence.to_json`)."""

    session: str
    project: str
    pid: int | None
    started: float
    claude_pid: int | None
    claude_start: str | None
    conduit: str | None


@dataclass(frozen=True, slots=True)
class Message:
    """One peer message."""

    id: str
    sender: str
    from_kind: str
    project: str
    to: str | None
    channel: str | None
    re: str | None
    text: str
    ts: float
    #: Who sent it (upstream ADR-401): the sending session's id, as `from` (which older files hold alone).
    from_id: str | None = None
    #: Whom the sender acts for (ADR-401): the user running the sending process, or what `--on-behalf-of` said.
    on_behalf_of: str | None = None

    def to_json(self) -> MessageJson:
        """The message as its file holds it (`from` kept beside `from_id`, so an older attend reads it)."""
        return {"id": self.id, "from": self.sender, "from_kind": self.from_kind, "from_id": self.sender_id,
                "on_behalf_of": self.on_behalf_of, "project": self.project, "to": self.to, "channel": self.channel,
                "re": self.re, "text": self.text, "ts": self.ts}

    @property
    def sender_id(self) -> str:
        """`from_id`, or for a file written before it existed, `from`."""
        return self.from_id if self.from_id is not None else self.sender

    @classmethod
    def from_json(cls, data: Any) -> Message:
        """The message of a parsed file; `ValueError` for anything that is not one."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            message = cls(str(data["id"]), str(data["from"]), str(data.get("from_kind", "session")),
                          str(data.get("project", "")), _text_or_none(data.get("to")),
                          _text_or_none(data.get("channel")), _text_or_none(data.get("re")),
                          str(data["text"]), _time(data["ts"], "ts"), _text_or_none(data.get("from_id")),
                          _text_or_none(data.get("on_behalf_of")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"missing or bad field: {exc}") from None
        return message

    @property
    def where(self) -> str:
        """`@channel`, `open`, or `to <project>`: how the message was addressed."""
        if self.channel and self.channel != OPEN:
            return f"@{self.channel}"
        if self.to:
            return f"to {self.to}"
        return "open"


def stored_names(folder: Path | str) -> list[str]:
    """The names of the message files and batch files in `folder` (none when it does not exist); hidden
    files, a write still under way, are left out."""
    try:
        with os.scandir(folder) as entries:
            return [e.name for e in entries if e.name.endswith((".json", ".jsonl")) and not e.name.startswith(".")]
    except OSError:
        return []


def _newest_in(name: str) -> str:
    """The newest message id a stored file's name says it holds (a message file's: its own)."""
    return name.removesuffix(".jsonl").removesuffix(".json").partition("+")[0]


def _oldest_in(name: str) -> str:
    """The oldest message id a stored file's name says it holds."""
    stem = name.removesuffix(".jsonl").removesuffix(".json")
    return stem.partition("+")[2] or stem


def read_stored(path: Path) -> tuple[list[Message], list[str]]:
    """The messages of a message file or a batch file, and why any of it was skipped (for a batch file's line,
    `line N: ...`). Read as untrusted: a regular file of at most `MAX_PEER_FILE_BYTES` (a batch file
    `MAX_PEER_BATCH_BYTES`), each message as `read_json_bounded` reads one."""
    try:
        if path.name.endswith(".json"):
            return [Message.from_json(read_peer_file(path))], []
        data = read_regular_file(path, MAX_PEER_BATCH_BYTES)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        return [], [skip_reason(exc)]
    messages, problems = [], []
    for n, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            try:
                messages.append(Message.from_json(read_json_bounded(line)))
            except ValueError as exc:
                problems.append(f"line {n}: {skip_reason(exc)}")
    return messages, problems


T = TypeVar("T")


def newest_stored(names: Iterable[tuple[str, T]], limit: int, read: Callable[[str, T], list[Message]], *,
                  before: str | None = None) -> list[tuple[Message, T]]:
    """The newest `limit` messages (by id, which starts with their time) of stored files, oldest first, each id
    once, each with where its file is.

    Args:
        names: (name, where) pairs: a name `stored_names` gave, and what the caller knows of its place
            (handed to `read` and back with each message).
        read: the messages of one stored file (`read_stored`'s, or a copy the caller keeps).
        before: only messages whose id sorts before this one.

    A file's name starts with the newest id it holds, so files are read newest first, and no further once
    `limit` messages newer than the next file's newest are found: 20 of 10,000 message files cost 20 reads,
    500 of a 10,000-message backlog a few batch files.
    """
    if limit <= 0:
        return []
    kept: list[tuple[str, Message, T]] = []  # a heap of the newest `limit` so far, the oldest of them first
    ids: set[str] = set()
    for name, where in sorted(names, key=lambda pair: _newest_in(pair[0]), reverse=True):
        if len(kept) >= limit and _newest_in(name) < kept[0][0]:
            break
        if before is not None and _oldest_in(name) >= before:
            continue
        for message in read(name, where):
            if message.id in ids or (before is not None and message.id >= before):
                continue
            ids.add(message.id)
            if len(kept) < limit:
                heapq.heappush(kept, (message.id, message, where))
            elif message.id > kept[0][0]:
                heapq.heapreplace(kept, (message.id, message, where))
    return [(message, where) for _, message, where in sorted(kept, key=lambda entry: entry[0])]


def write_received(folder: Path, messages: list[Message]) -> list[Path]:
    """Store `messages`, received together, in `folder` (a real folder: `_real_folder`), synced before it
    returns: one message as its message file, more as batch files of at most `MAX_PEER_BATCH_BYTES`, a line per
    message, oldest first, each named `<newest id>+<oldest id>.jsonl`. The files written.

    A batch file is never replaced: one of the same name (another receiver stored the same redelivery) is kept,
    and what it lacks is written beside it.

    Raises:
        OSError: a file could not be written (none is left half-written: `write_atomically`).
    """
    ordered = sorted({m.id: m for m in messages}.values(), key=lambda m: m.id)
    if len(ordered) == 1:
        path = folder / f"{ordered[0].id}.json"
        write_atomically(path, json.dumps(ordered[0].to_json(), ensure_ascii=False))
        return [path]
    written: list[Path] = []
    chunk: list[tuple[Message, bytes]] = []
    size = 0
    for message in ordered:
        line = json.dumps(message.to_json(), ensure_ascii=False).encode("utf-8") + b"\n"
        if chunk and size + len(line) > MAX_PEER_BATCH_BYTES:
            written += _write_batch(folder, chunk)
            chunk, size = [], 0
        chunk.append((message, line))
        size += len(line)
    if chunk:
        written += _write_batch(folder, chunk)
    return written


def _write_batch(folder: Path, chunk: list[tuple[Message, bytes]]) -> list[Path]:
    if len(chunk) == 1:
        return write_received(folder, [chunk[0][0]])
    path = folder / f"{chunk[-1][0].id}+{chunk[0][0].id}.jsonl"
    try:
        write_atomically(path, b"".join(line for _, line in chunk), exclusive=True)
    except FileExistsError:
        there = {m.id for m in read_stored(path)[0]}
        rest = [m for m, _ in chunk if m.id not in there]
        return write_received(folder, rest) if rest else []
    return [path]


@dataclass(frozen=True, slots=True)
class Presence:
    """A session's heartbeat: its `attend run` (`pid`, None when its hooks wrote it) and its Claude Code
    process (`claude_pid` and `claude_start`, `identity.process_start`; None when not known).

    Across machines (peers/natsbox.py) `project` is the project's identity (peers/machine.py), `machine` the
    machine the session runs on, `path` its folder there, `remote` true for another machine's session (whose
    transcript is not here: `activity`, its transcript's last write as its machine saw it, tells its status),
    and `conduit` how its lines reach it as its writer said (`monitor` or `hooks`; `current_conduit` is
    what a local session's processes say now).
    """

    session: str
    project: str
    pid: int | None
    started: float
    beat: float
    machine: str = ""
    path: str = ""
    remote: bool = False
    activity: float | None = None
    conduit: str | None = None
    claude_pid: int | None = None
    claude_start: str | None = None

    def to_json(self) -> PresenceJson:
        """The heartbeat as its file holds it."""
        return {"session": self.session, "project": self.project, "pid": self.pid, "started": self.started,
                "claude_pid": self.claude_pid, "claude_start": self.claude_start, "conduit": self.conduit}

    def live(self, now: float) -> bool:
        """Whether the session lives at `now`: its Claude Code process runs (when named), else the file is
        younger than `LIVE_FOR` seconds. (Another machine's session is its server's to tell: live.)"""
        from attend.peers.identity import host_runs

        if self.remote:
            return True
        if self.claude_pid is not None and self.claude_start is not None:
            return host_runs(self.claude_pid, self.claude_start)
        return now - self.beat <= LIVE_FOR

    def current_conduit(self) -> str:
        """How the session's lines reach it now: `monitor` while its `attend run` runs and prints them, else
        `hooks` (another machine's session: as its writer said, `unknown` when it said nothing)."""
        from attend.peers.identity import process_runs

        if self.remote:
            return self.conduit or "unknown"
        if self.pid is not None and process_runs(self.pid):
            return self.conduit or "monitor"
        return "hooks"


def _read_presence(path: Path) -> Presence:
    """The heartbeat at `path` (its time is the file's mtime).

    Raises:
        OSError: it cannot be read (removed meanwhile).
        ValueError, KeyError, TypeError: it does not parse.
    """
    beat = path.stat().st_mtime
    data = read_peer_file(path)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    pid, claude_pid = _pid(data.get("pid"), "pid"), _pid(data.get("claude_pid"), "claude_pid")
    start = data.get("claude_start")
    if start is not None and not isinstance(start, str):
        raise ValueError("claude_start is not text")
    conduit = data.get("conduit")
    return Presence(str(data["session"]), str(data["project"]), pid, _time(data.get("started", beat), "started"), beat,
                    claude_pid=claude_pid, claude_start=start, conduit=conduit if conduit in ("monitor", "hooks") else None)


def _pid(value: Any, name: str) -> int | None:
    """`value` as a process id (None for none); `ValueError` for anything else."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1 << 31):
        raise ValueError(f"{name} is not a process id")
    return value


@dataclass
class Mailbox:
    """The peers folder of one XDG home.

    Args:
        root: the folder (`peers_dir()`).
        clock: wall-clock seconds.
    """

    root: Path
    clock: Callable[[], float] = time.time
    #: Message files that could not be read in the last listing: (path, reason).
    corrupt: list[tuple[Path, str]] = field(default_factory=list)
    #: Heartbeat files that did not parse in the last `presences()`: (path, reason).
    corrupt_heartbeats: list[tuple[Path, str]] = field(default_factory=list)
    #: Why `channels.yaml` was unusable in the last `channels()` (then no channel has members), or None.
    corrupt_channels: str | None = None

    # -- presence ----------------------------------------------------------------------------------

    @contextmanager
    def _presence_locked(self) -> Iterator[Path]:
        """The heartbeat folder, with the presence lock held: a heartbeat's check-then-write or
        check-then-remove is one step for every process serving the same session."""
        folder = _real_folder(self.root / "heartbeat")
        with _locked(self.root / ".heartbeat.lock"):
            yield folder

    def _live_owner(self, path: Path, pid: int | None) -> Presence | None:
        """The heartbeat at `path` when it is live and another running process's than `pid` (None: a hook's)."""
        from attend.peers.identity import process_runs

        try:
            owner = _read_presence(path)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if owner.pid is None or owner.pid == pid or self.clock() - owner.beat > LIVE_FOR:
            return None
        return owner if isinstance(owner.pid, int) and process_runs(owner.pid) else None

    def beat(self, session: str, project: Path | str, *, pid: int | None, started: float,
             host: tuple[int, str] | None = None, conduit: str | None = None) -> Presence | None:
        """Record that `session` is alive in `project` (rewrites its heartbeat); None when written.

        `pid`: the `attend run` writing it, None for a hook. `host`: the session's Claude Code process
        (pid, `process_start`), when known. `conduit`: how its lines reach it (`monitor`, `hooks`). A
        heartbeat is its process's: while a live heartbeat names another running process (two `attend run`
        with one session id), nothing is written and that owner's presence is returned; a hook writes
        nothing while the session's `attend run` runs (it beats itself). Once the owner exits (its heartbeat
        removed, or its process gone), the next beat takes the heartbeat over.
        """
        with self._presence_locked() as folder:
            if (owner := self._live_owner(folder / session, pid)) is not None:
                return owner
            claude_pid, claude_start = host if host is not None else (None, None)
            presence = Presence(session, str(Path(project).resolve()), pid, started, self.clock(),
                                claude_pid=claude_pid, claude_start=claude_start, conduit=conduit)
            write_atomically(folder / session, json.dumps(presence.to_json()))
        return None

    def owner(self, session: str, pid: int) -> Presence | None:
        """`session`'s live heartbeat when another running process than `pid` holds it, else None."""
        return self._live_owner(self.root / "heartbeat" / session, pid)

    def leave_presence(self, session: str, *, pid: int | None = None) -> bool:
        """Remove `session`'s heartbeat (a clean exit); False when it was left.

        With `pid`, only a heartbeat that process wrote is removed: a second process serving the same
        session id leaves the first one's presence alone. The check and the removal are one step under
        the presence lock, so a heartbeat rewritten meanwhile by its owner is never removed.
        """
        if not (self.root / "heartbeat" / session).exists():
            return False
        with self._presence_locked() as folder:
            path = folder / session
            if pid is not None:
                try:
                    if _read_presence(path).pid != pid:
                        return False
                except (OSError, ValueError, KeyError, TypeError):
                    return False  # gone, or not a heartbeat this process wrote
            path.unlink(missing_ok=True)
        return True

    def presences(self, *, live_only: bool = True) -> list[Presence]:
        """The heartbeats, live ones only by default, the earliest started first."""
        folder = self.root / "heartbeat"
        now = self.clock()
        out = []
        self.corrupt_heartbeats = []
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path.name.startswith("."):
                continue
            try:
                presence = _read_presence(path)
            except FileNotFoundError:
                continue  # removed since the listing: that session just exited
            except (OSError, ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
                self.corrupt_heartbeats.append((path, skip_reason(exc)))
                continue
            if live_only and not presence.live(now):
                continue
            out.append(presence)
        return sorted(out, key=lambda p: (p.started, p.session))

    # -- channels ----------------------------------------------------------------------------------

    @contextmanager
    def _channels_locked(self) -> Iterator[dict[str, list[str]]]:
        self.root.mkdir(parents=True, exist_ok=True)
        with _locked(self.root / ".channels.lock"):
            members = self.channels()
            yield members
            # JSON is YAML 1.2 with every string quoted: a member or channel named like a number (`0o17`)
            # reads back as the same string through the strict loader.
            write_atomically(self.root / "channels.yaml", json.dumps(members, sort_keys=True, indent=2) + "\n")

    def channels(self) -> dict[str, list[str]]:
        """Every named channel and its members (read by the strict YAML 1.2 loader; an unreadable file is none)."""
        from attend.spec.loading import read_yaml_file

        path = self.root / "channels.yaml"
        self.corrupt_channels = None
        parsed = read_yaml_file(path) if os.path.lexists(path) else None
        if parsed is not None and parsed.diagnostics:
            first = parsed.diagnostics[0]
            self.corrupt_channels = f"line {first.line} column {first.col}: {first.message}"
        data = parsed.data if parsed is not None and not parsed.diagnostics else {}
        if not isinstance(data, dict):
            self.corrupt_channels = "not a mapping of channel names to member lists"
            return {}
        return {str(k): [str(m) for m in v] for k, v in data.items() if isinstance(v, list)}

    def join(self, channel: str, session: str) -> None:
        """Add `session` to `channel` (created when new)."""
        if check_channel(channel) == OPEN:
            raise PeerError("every session is on the open channel already")
        with self._channels_locked() as members:
            current = members.setdefault(channel, [])
            if session not in current:
                current.append(session)

    def leave(self, channel: str, session: str) -> bool:
        """Remove `session` from `channel`; False when it was not a member."""
        check_channel(channel)
        with self._channels_locked() as members:
            current = members.get(channel, [])
            if session not in current:
                return False
            current.remove(session)
            if not current:
                del members[channel]
            return True

    # -- the transport -----------------------------------------------------------------------------
    # The files transport needs no server: each of these is the seam peers/natsbox.py fills in.

    #: The transport's name (`attend.peers.transport`).
    transport = "files"

    def project_key(self, project: Path | str) -> str:
        """How messages and presence name `project` (a folder): its resolved path on this machine."""
        return str(Path(project).resolve())

    def tray_name(self, project: Path | str) -> str:
        """The folder name of `project`'s tray."""
        return tray_name(project)

    def tray_globs(self, project: Path | str) -> list[str]:
        """The message files a send to `project` (or a channel) lands in: what the messages sensor wakes on."""
        root = str(self.root)
        return [f"{root}/{folder}/*.{ext}" for folder in (self.tray_name(project), OPEN, "@*") for ext in ("json", "jsonl")]

    def receive(self, project: Path | str) -> None:
        """Bring what was sent to `project`'s sessions into this machine's folder (nothing to do here)."""

    def start_receiving(self, project: Path | str, before_ack: Any = None) -> None:
        """Keep receiving for `project` while this process runs (a running session; nothing to do here)."""

    def stop_receiving(self, project: Path | str) -> None:
        """Stop what `start_receiving` started."""

    def flush(self) -> int:
        """Send what waits to be sent; how many went (nothing waits here)."""
        return 0

    def waiting(self) -> int:
        """How many sent messages wait to go out (none here)."""
        return 0

    def failure(self) -> Unavailable | None:
        """Why the transport's server cannot be used, as this process last saw it (None: it can, or there is none)."""
        return None

    # -- messages ----------------------------------------------------------------------------------

    def _folder(self, *, to: str | None, channel: str | None) -> Path:
        if channel and channel != OPEN:
            return self.root / f"@{check_channel(channel)}"
        if to:
            return self.root / self.tray_name(to)
        return self.root / OPEN

    def _marker(self, to: str) -> str:
        """What a tray's `.project` names (a sweep removes a tray whose marker is a path that is gone)."""
        return str(Path(to).resolve())

    def post(self, message: Message, *, sync: bool = True) -> Path:
        """Write `message` into its tray or channel; return its file.

        `sync=False` leaves its fsync to the caller (a batch made durable at once: peers/natsbox.py).

        Raises:
            FileExistsError: a message with that id is there already (it is left as it was).
        """
        folder = _real_folder(self._folder(to=message.to, channel=message.channel))
        if message.to and not message.channel:
            marker = folder / ".project"
            if not marker.exists():
                write_atomically(marker, self._marker(message.to))
        path = folder / f"{message.id}.json"
        write_atomically(path, json.dumps(message.to_json(), ensure_ascii=False), exclusive=True, sync=sync)
        return path

    def new_id(self) -> str:
        """A fresh message id: sortable by time, unique across processes."""
        # os.urandom is what `secrets` draws from; `secrets` itself imports hmac and OpenSSL's hashlib (about
        # 5 ms of every peers command's start).
        return f"{int(self.clock() * 1000):013d}-{os.urandom(3).hex()}"

    def _read(self, name: str, folder: Path) -> list[Message]:
        """The messages of one stored file (`read_stored`), what does not parse noted in `corrupt`."""
        messages, problems = read_stored(folder / name)
        self.corrupt.extend((folder / name, why) for why in problems)
        return messages

    def read_folder(self, folder: Path) -> list[Message]:
        """The messages of one tray or channel folder, oldest first, each id once (corrupt files skipped and noted)."""
        out: dict[str, Message] = {}
        for name in sorted(stored_names(folder)):
            for message in self._read(name, folder):
                out.setdefault(message.id, message)
        return sorted(out.values(), key=lambda m: m.id)

    def _visible_folders(self, session: str, project: Path | str) -> list[Path]:
        folders = [self.root / self.tray_name(project), self.root / OPEN]
        return folders + [self.root / f"@{name}" for name, members in sorted(self.channels().items())
                          if session in members]

    def visible_to(self, session: str, project: Path | str) -> list[Message]:
        """What `session` in `project` receives: its project's tray, the open channel, its channels; oldest first."""
        self.corrupt = []
        messages = [m for folder in self._visible_folders(session, project) for m in self.read_folder(folder)]
        return sorted(messages, key=lambda m: (m.ts, m.id))

    def newest_visible(self, session: str, project: Path | str, limit: int, *, skip: int = 0,
                       before: str | None = None) -> list[Message]:
        """The newest `limit` messages of `visible_to`, oldest first, reading only the files it needs.

        A stored file's name starts with the newest id it holds, which starts with its time in milliseconds
        (`new_id`), so the newest files are found by name and only they are parsed (`newest_stored`): 20 of 10,000
        cost 20 reads, not 10,000. Corrupt files among those read are skipped and noted (`corrupt`); older ones
        are not read.

        Args:
            skip: how many of the newest messages to pass over first (a page further back: `inbox --page`).
            before: only messages whose id sorts before this one (older: `inbox --before ID`).
        """
        self.corrupt = []
        names = [(name, folder) for folder in self._visible_folders(session, project) for name in stored_names(folder)]
        found = [message for message, _ in newest_stored(names, limit + skip, self._read, before=before)]
        return sorted(found[:max(0, len(found) - skip)], key=lambda m: (m.ts, m.id))

    def find(self, message_id: str) -> Message | None:
        """The message with `message_id` in any tray or channel."""
        if not MESSAGE_ID_RE.fullmatch(message_id):
            return None
        for path in self.root.glob(f"*/{message_id}.json"):
            try:
                return Message.from_json(read_peer_file(path))
            except (OSError, ValueError):
                return None
        for folder in self._message_folders():  # else in a batch whose ids span it
            for name in stored_names(folder):
                span = BATCH_NAME_RE.fullmatch(name)
                if span and span.group(2) <= message_id <= span.group(1):
                    found = [m for m in read_stored(folder / name)[0] if m.id == message_id]
                    if found:
                        return found[0]
        return None

    def _message_folders(self) -> list[Path]:
        """The trays and channel folders there are (symlinks among them too)."""
        try:
            return sorted(f for f in self.root.iterdir() if f.name == OPEN or f.name.startswith(("@", "p-")))
        except OSError:
            return []

    def damaged(self) -> list[tuple[Path, str]]:
        """Every peers file or folder a reader skips, with why (what `attend doctor` lists): heartbeats
        and message files that are not what attend writes, an unusable `channels.yaml`, and trays or
        channels that are symlinks (never written or swept through)."""
        self.presences(live_only=False)
        found = list(self.corrupt_heartbeats)
        self.channels()
        if self.corrupt_channels is not None:
            found.append((self.root / "channels.yaml", self.corrupt_channels))
        self.corrupt = []
        for folder in self._message_folders():
            if os.path.islink(folder):
                found.append((folder, "a symlink: attend never writes or removes through it"))
                continue
            self.read_folder(folder)
        return found + self.corrupt

    def gone_trays(self) -> list[tuple[Path, str, list[str]]]:
        """The trays of projects that no longer exist: (folder, the project its marker names, the message
        and batch files attend wrote in it).

        Only what attend wrote counts: a tray that is a real folder (a symlink is never followed) with a
        `.project` marker that is a regular file naming an absolute path that is gone, and in it the message
        and batch files (`MESSAGE_NAME_RE`, `BATCH_NAME_RE`, regular files). A marker that is not a path (or
        not readable, or an identity across machines) keeps the tray.
        """
        found = []
        for folder in sorted(self.root.glob("p-*")) if self.root.is_dir() else []:
            marker = folder / ".project"
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode) or not stat.S_ISREG(os.lstat(marker).st_mode):
                    continue
                project = read_regular_file(marker, MAX_PEER_FILE_BYTES).decode("utf-8").strip()
                if not os.path.isabs(project) or "\0" in project or os.path.exists(project):
                    continue
                names = sorted(entry.name for entry in os.scandir(folder)
                               if (MESSAGE_NAME_RE.fullmatch(entry.name) or BATCH_NAME_RE.fullmatch(entry.name))
                               and entry.is_file(follow_symlinks=False))
            except (OSError, ValueError):
                continue
            found.append((folder, project, names))
        return found

    @staticmethod
    def remove_tray(folder: Path, names: list[str]) -> int:
        """Remove the message and batch files `names` of the tray `folder` (`gone_trays`); the folder and its marker
        too when that leaves nothing else in it (anything else is not attend's to remove). How many files went."""
        removed = 0
        for name in names:
            try:
                os.unlink(folder / name)
                removed += 1
            except OSError:
                continue
        with contextlib.suppress(OSError):
            if os.listdir(folder) == [".project"]:
                os.unlink(folder / ".project")
                os.rmdir(folder)
        return removed

    def sweep(self) -> int:
        """Remove the trays of projects that no longer exist (`gone_trays`); return how many messages went."""
        return sum(self.remove_tray(folder, names) for folder, _, names in self.gone_trays())
