"""`attend peers send|reply|inbox|list|whoami|join|leave|channels` (DESIGN.md, "Peers").

Decisions implemented here: a message goes only where someone is live to read it: `--to PROJECT_DIR`
needs a live session in that project, `--channel NAME` a live member other than the sender, the open
channel any other live session; otherwise exit 1 naming who is live, and nothing is written. The sender
is this process's session (`resolve_session`); a process no session can be found for (a plain
terminal) sends as `human`. Text is kept as written (at most `MAX_TEXT` characters); what is printed
has its control characters escaped, so a message can never drive the reader's terminal.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from attend.errors import EXIT_FAILED, EXIT_USAGE, Refusal
from attend.peers.identity import resolve_session
from attend.peers.mailbox import (
    MAX_TEXT,
    MESSAGE_ID_RE,
    OPEN,
    Mailbox,
    Message,
    PeerError,
    Unavailable,
    check_channel,
    peers_dir,
)
from attend.peers.transport import open_mailbox
from attend.text import json_text, one_line, printable, printable_path

if TYPE_CHECKING:
    from typing import Protocol, final

    from attend.commands import JsonArgs
    from attend.peers.mailbox import Presence, PresenceJson
    from attend.peers.presence import SessionStateJson

    class PeersArgs(JsonArgs, Protocol):
        """`attend peers WHAT`: what each subcommand has of these (cli._add_peers); those only some have are
        read with getattr."""

        peers_command: str
        session: str | None
        text: str
        to: str | None
        channel: str | None
        re: str | None
        id: str | None
        all: bool
        name: str

    class _SessionFields(PresenceJson, SessionStateJson):
        beat: float

    @final
    class SessionRow(_SessionFields):
        """A live session of this machine as `attend peers list --json` shows it."""

    @final
    class RemoteSessionRow(_SessionFields):
        """Another machine's session: `machine` is that machine, `path` the project's folder there."""

        machine: str
        path: str

__all__ = ["main", "printable"]

#: How many fresh ids `send` tries when the one it drew is taken (24 random bits per millisecond).
ID_ATTEMPTS = 5
#: How many of the newest messages `inbox` shows without `--all`.
INBOX_SHOWN = 20
#: The most characters of a message's id, sender, channel or `re` on a line (session ids are at most 128).
FIELD_CHARS = 140

def _me(args: PeersArgs) -> tuple[str, str]:
    """(session id, from_kind) of this process."""
    session = resolve_session(getattr(args, "session", None))
    return session.id, "session" if session.resolved else "human"


def _line(m: Message) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(m.ts))
    text = one_line(m.text, 200)
    re_ = f" re {one_line(m.re, FIELD_CHARS)}" if m.re else ""
    sender = f"human ({m.sender})" if m.from_kind == "human" else m.sender  # the Monitor line says `human`
    return (f"{one_line(m.id, FIELD_CHARS)}  {when}  {one_line(sender, FIELD_CHARS)} "
            f"({one_line(m.where, FIELD_CHARS)}{re_}): {text}")


def _who(mailbox: Mailbox, me: str) -> str:
    live = [p for p in mailbox.presences() if p.session != me]
    if not live:
        return "no other session is live"
    return "live: " + ", ".join(f"{printable(p.session)} in {printable_path(p.project)}" for p in live)


def _require_utf8(text: str) -> None:
    """`PeerError` for text holding bytes that are not UTF-8 (the shell passes them as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start].encode("utf-8", "surrogateescape")
        raise PeerError(f"the message is not UTF-8 text (byte {bad!r} at character {exc.start + 1}); "
                        "messages are UTF-8") from None


def _project_path(to: str) -> str:
    """`--to`'s folder, `~` expanded and resolved; `PeerError` when it cannot be (an unknown user's `~`,
    a symlink loop, a NUL byte)."""
    try:
        return str(Path(to).expanduser().resolve())
    except (RuntimeError, OSError, ValueError) as exc:  # RuntimeError: no such user, or a symlink loop
        raise PeerError(f"--to {printable(to)}: cannot resolve it ({exc}); --to names a project's folder") from None


def _target(mailbox: Mailbox, to: str, live: list[Presence]) -> tuple[str, bool]:
    """(the project `--to` names, as messages name it; whether it is a folder here). Across machines `--to`
    may also be a project's identity as `peers list` shows it (another machine's project)."""
    if mailbox.transport != "files" and not os.path.isdir(os.path.expanduser(to)) and \
            any(p.project == to for p in live):
        return to, False
    path = _project_path(to)
    return mailbox.project_key(path), True




#: The most characters of `--on-behalf-of`.
BEHALF_CHARS = 128


def _on_behalf_of(args: PeersArgs) -> str | None:
    """Whom a message is sent for: `--on-behalf-of`, else the user this process runs as (its login name,
    from the user database: `$USER` can say anything), else nobody named."""
    given = getattr(args, "on_behalf_of", None)
    if given is not None:
        if not given.strip() or len(given) > BEHALF_CHARS or any(c in given for c in "\0\n\r"):
            raise PeerError(f"--on-behalf-of must be one line of 1 to {BEHALF_CHARS} characters")
        _require_utf8(given)
        return given.strip()
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):
        return None


def send(args: PeersArgs, *, text: str | None = None, re_: str | None = None, to: str | None = None,
         channel: str | None = None) -> int:
    """Post one message where it can be read; print its id."""
    mailbox = open_mailbox()
    me, kind = _me(args)
    text = args.text if text is None else text
    if not text.strip():
        raise PeerError("the message is empty")
    _require_utf8(text)
    if len(text) > MAX_TEXT:
        raise PeerError(f"the message is {len(text)} characters; at most {MAX_TEXT} are sent (put the rest in a file)")
    offline: Unavailable | None = None
    try:
        everyone = mailbox.presences()
    except Unavailable as exc:  # the server cannot be used: the send is spooled, and goes when it is back
        offline, everyone = exc, []
    live = [p for p in everyone if p.session != me]
    if to is not None:
        target, here = _target(mailbox, to, live)
        if not any(p.project == target for p in live):
            if here and not Path(_project_path(to)).is_dir():
                raise PeerError(f"{printable(_project_path(to))} is not a directory; --to names a project's folder")
            alone = any(p.project == target for p in everyone if p.session == me)
            where = "no other live session" if alone else "no live session"
            if mailbox.transport == "files":
                raise PeerError(f"{where} in {printable(target)}; {_who(mailbox, me)}")
            if offline is None:
                print(f"attend: {where} in {printable(target)} now; the message waits on the server for its "
                      "next session", file=sys.stderr)
    elif channel is not None and channel != OPEN:
        check_channel(channel)
        if offline is None:
            members = set(mailbox.channels().get(channel, []))
            if not any(p.session in members for p in live):
                raise PeerError(f"no other live member on channel {channel}; {_who(mailbox, me)}")
        target = None
    else:
        channel = OPEN
        if offline is None and not live:
            raise PeerError("no other session is live to read the open channel")
        target = None
    behalf = _on_behalf_of(args)
    mailbox.sweep()
    for attempt in range(ID_ATTEMPTS):
        message = Message(mailbox.new_id(), me, kind, mailbox.project_key(args.project_dir), target,
                          channel, re_, text, mailbox.clock(), me, behalf)
        try:
            mailbox.post(message)
            break
        except FileExistsError:  # the same millisecond and random part as another sender's: a fresh id
            if attempt == ID_ATTEMPTS - 1:
                raise
    print(message.id)
    if mailbox.waiting():
        failure = offline or mailbox.failure()
        print(f"attend: the peers server is {failure or 'unavailable'}; {mailbox.waiting()} message(s) wait in "
              "the spool and go out in order when it is back", file=sys.stderr)
    return 0


def _received(mailbox: Mailbox, project: str) -> None:
    """Bring what was sent to this project's sessions here (across machines); a server that cannot be used
    is said on stderr, and what is here already is still shown."""
    try:
        mailbox.receive(project)
    except Unavailable as exc:
        print(f"attend: the peers server is {exc}; showing what reached this machine", file=sys.stderr)


def reply(args: PeersArgs) -> int:
    """Answer message ID (one this session received), or the last message it received, where it came from."""
    wanted = getattr(args, "id", None)
    if wanted is not None and not MESSAGE_ID_RE.fullmatch(wanted):
        raise Refusal(f"{printable(wanted)} is not a message id (like 1764565200000-3f9a1c; attend peers inbox "
                      "shows them)", EXIT_USAGE)
    mailbox = open_mailbox()
    me, _ = _me(args)
    _received(mailbox, args.project_dir)
    received = [m for m in mailbox.visible_to(me, args.project_dir) if m.sender != me]
    if wanted is not None:
        received = [m for m in received if m.id == wanted]
        if not received:
            raise PeerError(f"no message {wanted} among those this session received; attend peers inbox lists them")
    if not received:
        raise PeerError("no message to reply to: this session has received none")
    last = received[-1]
    # where the reply goes (the message's own address, `to` this project, is not it)
    if last.channel and last.channel != OPEN:
        goes, kwargs = f"on @{last.channel}", {"channel": last.channel}
    elif last.to:
        goes, kwargs = f"to {last.project}", {"to": last.project}
    else:
        goes, kwargs = "on the open channel", {"channel": OPEN}
    print(f"attend: replying to {last.id} from {printable(last.sender)} in {printable_path(last.project)}: "
          f"the reply goes {printable(goes)}", file=sys.stderr)
    return send(args, re_=last.id, **kwargs)


def inbox(args: PeersArgs) -> int:
    """The messages this session receives, newest last; one in full with ID (`--id ID`); a page of them with
    `--limit`, `--page` and `--before`."""
    wanted = args.id or getattr(args, "message_id", None)
    limit, page, before = getattr(args, "limit", None), getattr(args, "page", 1), getattr(args, "before", None)
    if wanted and (limit is not None or page != 1 or before is not None or args.all):
        raise Refusal("inbox ID shows one message: --all, --limit, --page and --before list messages", EXIT_USAGE)
    if args.all and (limit is not None or page != 1):
        raise Refusal("--all lists every message: --limit and --page choose a page of them", EXIT_USAGE)
    if before is not None and not MESSAGE_ID_RE.fullmatch(before):
        raise Refusal(f"--before {printable(before)}: not a message id (like 1764565200000-3f9a1c; "
                      "attend peers inbox shows them)", EXIT_USAGE)
    mailbox = open_mailbox()
    me, _ = _me(args)
    _received(mailbox, args.project_dir)
    if wanted:
        message = mailbox.find(wanted)
        if message is None:
            print(f"attend: no message {printable(wanted)!s}", file=sys.stderr)
            return EXIT_FAILED
        if args.json:
            print(json_text(message.to_json(), indent=2))
        else:
            print(_line(message).split(": ", 1)[0])
            print(printable(message.text))
        return 0
    if args.all:
        messages = [m for m in mailbox.visible_to(me, args.project_dir) if before is None or m.id < before]
    else:
        shown = INBOX_SHOWN if limit is None else limit
        messages = mailbox.newest_visible(me, args.project_dir, shown, skip=(page - 1) * shown, before=before)
    for path, reason in mailbox.corrupt:
        print(f"attend: skipped {printable_path(path)}: {reason}", file=sys.stderr)
    if args.json:
        print(json_text([m.to_json() for m in messages], indent=2))
    elif not messages:
        print("no messages")
    else:
        print("\n".join(_line(m) for m in messages))
    return 0


def list_sessions(args: PeersArgs) -> int:
    """The live sessions: session, project, status (working/waiting from the transcript's age), context use,
    conduit (`monitor`: its `attend run` prints its lines; `hooks`: its hooks alone carry them) and pids."""
    from attend.peers.presence import TranscriptReader
    from attend.sensors.peers import presence_settings

    mailbox = open_mailbox()
    live = mailbox.presences()
    reader = TranscriptReader(presence_settings(args.project_dir, os.environ))
    now = mailbox.clock()
    rows = [_session_row(p, reader.state(p, now).to_json()) for p in live]
    if args.json:
        print(json_text(rows, indent=2))
    elif not rows:
        print("no live sessions")
    else:
        for row in rows:
            context = row["context"] if row["context"] == "unknown" else f"{row['context']:g}%"
            machine = f"  on {printable_path(row['machine'])}" if "machine" in row else ""  # another machine's
            pids = [f"pid {row['pid']}"] if row["pid"] is not None else []
            pids += [f"Claude Code pid {row['claude_pid']}"] if row["claude_pid"] is not None else []
            print(f"{printable_path(row['session'])}  {printable_path(row['project'])}  {row['status']}  "
                  f"context {context}  {row['conduit']}  ({', '.join(pids) or 'no pid'}{machine})")
    return 0


def _session_row(p: Presence, state: SessionStateJson) -> SessionRow | RemoteSessionRow:
    """`p` as `peers list` shows it: its heartbeat, when it beat, its conduit now, where it runs (another
    machine's session) and what it is doing (`state`)."""
    if p.machine:
        return {**p.to_json(), "beat": p.beat, "conduit": p.current_conduit(), "machine": p.machine, "path": p.path,
                **state}
    return {**p.to_json(), "beat": p.beat, "conduit": p.current_conduit(), **state}


def whoami(args: PeersArgs) -> int:
    """This process's session, where it came from, and the project; with `--machine`, this machine's id
    (peers/machine.py: what names it across machines) and name (its host name)."""
    if getattr(args, "machine", False):
        import socket

        from attend.peers.machine import machine_id

        machine = {"machine": machine_id(), "name": socket.gethostname()}
        if args.json:
            print(json_text(machine, indent=2))
        else:
            print(f"{printable(machine['machine'])} ({printable(machine['name'])})")
        return 0
    session = resolve_session(getattr(args, "session", None))
    info = {"session": session.id, "source": session.source, "resolved": session.resolved,
            "from_kind": "session" if session.resolved else "human",
            "project": str(Path(args.project_dir).resolve())}
    mailbox = open_mailbox()
    if mailbox.transport != "files":  # across machines: the project's name there, and this machine's
        info["identity"] = mailbox.project_key(args.project_dir)
        info["machine"] = getattr(mailbox, "machine", "")
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        across = f" ({printable_path(info['identity'])} on {info['machine']})" if "identity" in info else ""
        print(f"{session.id} ({info['from_kind']}, from {session.source}) in {printable_path(info['project'])}"
              f"{across}")
    return 0


def join(args: PeersArgs) -> int:
    me, _ = _me(args)
    mailbox = open_mailbox()
    if me in mailbox.channels().get(check_channel(args.name), []):
        print(f"{me} is already on {args.name}")
        return 0
    mailbox.join(args.name, me)
    print(f"{me} joined {args.name}")
    return 0


def leave(args: PeersArgs) -> int:
    me, _ = _me(args)
    if not open_mailbox().leave(args.name, me):
        print(f"attend: {me} is not on channel {args.name}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{me} left {args.name}")
    return 0


def channels(args: PeersArgs) -> int:
    found = open_mailbox().channels()
    if args.json:
        print(json_text(found, indent=2))
    elif not found:
        print("no channels (join one with `attend peers join NAME`)")
    else:
        for name, members in sorted(found.items()):
            print(f"{printable_path(name)}: {', '.join(printable_path(m) for m in members)}")
    return 0


#: The subcommands besides `send` (which takes its own arguments).
_HANDLERS = {"reply": reply, "inbox": inbox, "list": list_sessions, "whoami": whoami,
             "join": join, "leave": leave, "channels": channels}


def main(args: PeersArgs) -> int:
    """Dispatch `attend peers WHAT`; a refused request is one line on stderr and exit 1 (2 for a bad id)."""
    try:
        if args.peers_command == "send":
            return send(args, re_=args.re, to=args.to, channel=args.channel)
        return _HANDLERS[args.peers_command](args)
    except Refusal as refusal:  # PeerError (exit 1), SessionError (a bad id: exit 2)
        print(f"attend: {refusal.message}", file=sys.stderr)
        return refusal.code
    except (UnicodeEncodeError, UnicodeDecodeError, UnicodeTranslateError) as exc:  # not UTF-8 (a lone surrogate)
        print(f"attend: cannot write {exc.object[exc.start:exc.end]!a} as UTF-8: peer messages, their "
              "projects and what is printed of them must be UTF-8", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        raise  # the reader went away (`attend peers list | head -1`): the CLI ends quietly, exit 0
    except Unavailable as exc:  # the peers server (transport nats) cannot be used: its state and words
        print(f"attend: the peers server is {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        print(f"attend: cannot use the peers folder {peers_dir()}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILED
