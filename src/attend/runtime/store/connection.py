"""The store's SQLite connection: WAL mode, busy timeout, one write transaction at a time.

Decision implemented here: every write goes through `_write()`, one `BEGIN IMMEDIATE` transaction
committed on success and rolled back on any exception, so the table modules can put every change that
decides whether a notification happens into ONE transaction with the change it causes.

The daemon and the one-shot CLI commands open the same file; WAL lets readers run beside the writer and
`busy_timeout` makes short write overlaps wait instead of failing.

A store that was deleted, emptied or replaced is never taken up again without a word (issue 28, item 6):
the store holds a random id (`store_info`), and the state folder remembers it in `attend.db.id`. An
open that finds a store whose id is not the remembered one says so through `location.notice` (a
command prints it on stderr) and records the reset in the new store, where `attend doctor` shows it.
A table missing from a current store is created again, empty, and said the same way.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.store.location import StoreUnavailable, make_state_folder, notice
from attend.runtime.store.tables import SchemaMismatch, check_tables, migrate

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BUSY_TIMEOUT_MS", "StoreConnection"]

#: The store files this process wrote again after they were removed or replaced: path → the new file's
#: identity, so a second connection of the same process reopens it instead of writing it once more.
_RESTORED: dict[Path, tuple[int, int]] = {}

#: How long a writer waits for another process's transaction before giving up (milliseconds).
BUSY_TIMEOUT_MS = 10_000


class StoreConnection:
    """One connection to the store file, scoped to one project. One instance per process; not shared
    between threads. The table classes (trigger state, status, pending, journal ...) build on it.

    Args:
        path: the database file; its folder is created when missing.
        scope: the project the rows belong to (`scope_for(project_dir)`); every table but `probes`
            is per project, so two daemons for two projects share the file without sharing state.
        clock: wall-clock function for row times (tests may pass a fake one).
        busy_timeout_ms: how long a write waits for another process's transaction.
    """

    #: The connection; None only once closed (or when opening failed), after which nothing reads it.
    _db: sqlite3.Connection

    def __init__(
        self,
        path: Path | str,
        *,
        scope: str = "",
        clock: Clock = WALL_CLOCK,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        self.scope = scope
        make_state_folder(self.path.parent)
        self._clock = clock
        self._busy_timeout_ms = busy_timeout_ms
        self._db = None  # type: ignore[assignment]  # None until opened: nothing reads it before
        #: Journal rows were written in the open transaction: the sessions' bells ring once it commits (bell.py).
        self._ring_after_commit = False
        try:
            # isolation_level=None: we open transactions ourselves (BEGIN IMMEDIATE), so a read never
            # has to be upgraded to a write lock halfway through (the classic SQLITE_BUSY deadlock).
            self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=busy_timeout_ms / 1000)
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode survives a killed process (the WAL is in the OS cache); only a power
            # loss could lose the last transactions, an acceptable price for not fsyncing every poll.
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._write() as db:
                migrate(db)
                missing = check_tables(db)
                said = self._identify(db)
            self._file = _file_identity(self.path)
        except SchemaMismatch as exc:
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                self.close()
                raise  # busy past busy_timeout: a transient state the callers handle, not a broken store
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None

        if missing:
            notice(f"the state store {self.path} had lost its table(s) {', '.join(missing)}; they start over empty")
        if said:
            notice(said)

    def now(self) -> float:
        """The time by the clock this store was opened with (`runtime.clock`): what every row's time is, and
        what a caller holding the store reads instead of the system's clock."""
        return self._clock()

    def _identify(self, db: sqlite3.Connection) -> str:
        """Give a new store its id and remember it beside the file; the reset note when the store is
        not the one remembered (inside the opening transaction)."""
        row = db.execute("SELECT value FROM store_info WHERE key = 'id'").fetchone()
        current = row[0] if row is not None and isinstance(row[0], str) else None
        known = _read_id(self._id_path)
        said = ""
        if current is None:
            import uuid  # only for a new store: uuid imports platform, a cost every hook would pay

            current = uuid.uuid4().hex
            db.execute("INSERT OR REPLACE INTO store_info (key, value) VALUES ('id', ?)", (current,))
            if known is not None:  # the file attend used before is gone: this one is new
                said = (f"the state store {self.path} was deleted, emptied or replaced; attend started a new one "
                        "(trigger states, waiting notifications and the journal start over)")
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self._clock()))
                db.execute("INSERT OR REPLACE INTO store_info (key, value) VALUES ('reset', ?)",
                           (f"started over at {stamp}: the store before it was deleted, emptied or replaced",))
        elif known is not None and known != current:
            said = f"the state store {self.path} was replaced by another attend store; attend uses it from now on"
        if known != current:
            try:
                from attend.files import write_atomically

                write_atomically(self._id_path, current + "\n")
            except OSError:
                pass  # a folder that takes the database but not this file: resets go unsaid, nothing breaks
        return said

    @property
    def _id_path(self) -> Path:
        return self.path.with_name(self.path.name + ".id")

    def project_hash(self) -> str:
        """`attend.files.project_hash` of this store's scope (the name of its run lock), remembered in the
        store: a hook that checks for a live poller reads it here instead of importing hashlib, whose
        OpenSSL start-up was some 3.5 ms of the ~45 ms a hook takes. A value that is no such hash is computed again
        (the row's key, `digest <scope>`, is the name the store has always written)."""
        key = f"digest {self.scope}"
        row = self._db.execute("SELECT value FROM store_info WHERE key = ?", (key,)).fetchone()
        value = row[0] if row is not None else None
        if isinstance(value, str) and len(value) == 16 and all(c in "0123456789abcdef" for c in value):
            return value
        from attend.files import project_hash

        hashed = project_hash(self.scope)
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO store_info (key, value) VALUES (?, ?)", (key, hashed))
        return hashed

    def reset_note(self) -> str:
        """When and why this store started over (a reset `_identify` found), or ''."""
        row = self._db.execute("SELECT value FROM store_info WHERE key = 'reset'").fetchone()
        return row[0] if row is not None and isinstance(row[0], str) else ""

    def follow_file(self, *, restore: bool) -> str | None:
        """Follow the store file when it was removed or replaced under this connection (DESIGN.md, Staying up).

        With `restore` (the project's poller), a file gone or replaced is written again from this
        connection, which still reads the old one (a backup: every row, the trigger state included, so
        nothing re-baselines and no journal id is reused); without it (any other process), a file
        another process wrote is reopened and a missing one is left for the poller. Returns what was
        done: "restored", "reopened", or None (the file is the one this connection opened).
        """
        now = _file_identity(self.path)
        if now == self._file:
            return None
        if now is not None and (not restore or now == _RESTORED.get(self.path)):
            self._reopen()
            return "reopened"
        if not restore:
            return None
        make_state_folder(self.path.parent)
        target = sqlite3.connect(str(self.path), isolation_level=None, timeout=self._busy_timeout_ms / 1000)
        try:
            self._db.backup(target)
        finally:
            target.close()
        self._reopen()
        if self._file is not None:
            _RESTORED[self.path] = self._file
        return "restored"

    def _reopen(self) -> None:
        self.close()
        StoreConnection.__init__(self, self.path, scope=self.scope, clock=self._clock,
                                 busy_timeout_ms=self._busy_timeout_ms)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]  # closed: nothing reads it after

    def __enter__(self) -> StoreConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The database's `user_version`."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` of this connection: it moves when another connection commits (read
        from the shared memory of the WAL, no query of the file): what a waiting conduit watches."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def exclusive(self) -> Any:
        """Hold the store's write lock across what the caller reads, does and writes, as one transaction.

        A conduit that hands a session its lines (a hook, the doorbell) reads them, prints them and records
        them inside it, so two conduits of one session never hand over the same line: the second reads
        what the first recorded. The writes made inside join this transaction (`_write`).
        """
        return self._write()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any exception (inside `exclusive`,
        the caller's transaction, which commits or rolls back as a whole)."""
        if self._db.in_transaction:
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._ring_after_commit = False
        try:
            yield self._db
        except BaseException:
            self._ring_after_commit = False
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        if self._ring_after_commit:
            self._ring_after_commit = False
            self._ring_bells()

    def _ring_bells(self) -> None:
        """Tell the project's printing sessions and waiting doorbells that journal rows were committed (bell.py);
        never fails."""
        from attend.runtime.store.bell import DOORBELL_LIVE, ring

        try:
            rows = self._db.execute(
                "SELECT session, pid, pid IS NOT NULL AND role != 'stopped', heartbeat >= ? FROM sessions"
                " WHERE scope = ? AND ((pid IS NOT NULL AND role != 'stopped') OR heartbeat >= ?)",
                (self._clock() - DOORBELL_LIVE, self.scope, self._clock() - DOORBELL_LIVE)).fetchall()
        except sqlite3.Error:
            return  # a busy or damaged store: the printers and doorbells look on their fallback timers
        ring(self.scope, [(str(row[0]), int(row[1])) for row in rows if row[2]],
             [str(row[0]) for row in rows if row[3]])


def _read_id(path: Path) -> str | None:
    """The store id remembered in `path`, or None (missing, not a regular file, not an id)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 100).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    return text if len(text) == 32 and all(c in "0123456789abcdef" for c in text) else None

def _file_identity(path: Path) -> tuple[int, int] | None:
    """The file at `path` as (device, inode), or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
