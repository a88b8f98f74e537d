"""The journal's bell: a store that committed journal rows tells the sessions printing them (issue 39).

A session's printer (runtime/sessions/printer.py) used to look at the journal every 0.2 s, which was
most of what an attached `attend run` cost at rest. It now waits on its bell and looks only when rung
(and on a slow fallback timer, so a bell that never rings delays a line, never loses it).

Decisions implemented here:

- The bell is a Unix datagram socket in Linux's abstract namespace, one per printing process and
  session (`bell_address`): nothing on disk to clean up after a crash, no path length limit, and
  waiting on it costs nothing (the event loop's epoll). A file watch on the database was the
  alternative; it would wake every session at each of the poller's commits (its status rows at every
  poll) and watchfiles looks for changes every step (50 ms) in a thread, which costs more at rest
  than the timer it replaced.
- Who rings: the connection that committed journal rows (`StoreConnection._write` calls `ring` once
  the outermost transaction committed, never inside it: a session woken before the commit would read
  the journal without the rows). It rings every session of the project whose row names a live process
  (`sessions.pid`, role polling or attached): one `sendto` each, never blocking, every error ignored
  (a process gone, a bell not bound: the fallback timer covers it).
- Where the abstract namespace does not exist (not Linux) the bell cannot bind; the printer says
  nothing and looks on its fallback timer.
- The doorbell (runtime/sessions/doorbell.py, one per session by its lock) has a bell of its own,
  `doorbell_address`, with no pid in it: the committing connection rings it for every session of the
  project that beat within `DOORBELL_LIVE` (a doorbell beats its session while it waits), a datagram that
  nobody bound costing one failed `sendto`. It waits on it with `wait_rung` and looks at the store when
  rung, and once a second besides (its liveness check), instead of every 0.2 s.
"""

from __future__ import annotations

import socket

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["DOORBELL_LIVE", "bell_address", "bind_bell", "doorbell_address", "ring", "wait_rung"]

#: Seconds since a session's last beat within which the committing connection rings its doorbell: a waiting
#: doorbell beats every 30 s (doorbell.py `BEAT`), and registers its session as it starts.
DOORBELL_LIVE = 90.0


def bell_address(scope: str, session: str, pid: int) -> bytes:
    """The abstract socket address of the bell of `session` of project `scope`, printed by process `pid`."""
    import zlib  # a C module, cheap: hashlib's OpenSSL start-up is what hooks avoid

    crc = zlib.crc32(f"{scope}\0{session}".encode("utf-8", "surrogateescape"))
    return f"\0attend-journal-{pid}-{crc:08x}".encode()


def doorbell_address(scope: str, session: str) -> bytes:
    """The abstract socket address of the doorbell of `session` of project `scope` (one per session)."""
    import zlib

    crc = zlib.crc32(f"{scope}\0{session}".encode("utf-8", "surrogateescape"))
    return f"\0attend-doorbell-{crc:08x}".encode()


def bind_bell(address: bytes) -> socket.socket:
    """A bell: a non-blocking datagram socket bound at `address` (a printer's, a doorbell's).

    Raises:
        OSError: it cannot be bound (no abstract namespace here, the address taken).
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def wait_rung(bell: socket.socket, seconds: float) -> bool:
    """Wait until `bell` rings or `seconds` pass (a caller without an event loop: the doorbell); whether it
    rang. The rings waiting are taken as one."""
    import select

    try:
        ready, _, _ = select.select([bell], [], [], max(seconds, 0.0))
    except (OSError, ValueError):  # a closed or broken bell: the caller's own timer looks
        return False
    rang = False
    try:
        while True:
            bell.recv(64)
            rang = True
    except OSError:  # BlockingIOError: every ring taken
        pass
    return bool(ready) and rang


def ring(scope: str, listeners: Iterable[tuple[str, int]], doorbells: Iterable[str] = ()) -> int:
    """Ring the bells of `listeners` ((session, pid) pairs) of project `scope`, and the doorbells of the
    sessions `doorbells`; return how many took it."""
    addresses = [bell_address(scope, session, pid) for session, pid in listeners]
    addresses += [doorbell_address(scope, session) for session in doorbells]
    rung = 0
    sock = None
    try:
        for address in addresses:
            if sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                sock.setblocking(False)
            try:
                sock.sendto(b"!", address)
                rung += 1
            except OSError:
                pass  # nobody listens there (gone, never bound), or its queue is full: it is rung already
    except OSError:
        pass  # no Unix sockets here: every printer looks on its fallback timer
    finally:
        if sock is not None:
            sock.close()
    return rung
