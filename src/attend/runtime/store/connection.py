"""The store's SQLite connection: WAL mode, busy timeout, one write transaction at a time.

Decision implemented here: every write goes through `_write()`, one `BEGIN IMMEDIATE` transaction
committed on success and rolled back on any exception, so the table modules can put every change that
decides whether a notification happens into ONE transaction with the change it causes.

The daemon and the one-shot CLI commands open the same file; WAL lets readers run beside the writer and
`busy_timeout` makes short write overlaps wait instead of failing.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attend.runtime.store.location import StoreUnavailable, make_state_folder
from attend.runtime.store.schema import migrate

__all__ = ["BUSY_TIMEOUT_MS", "StoreConnection"]

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

    def __init__(
        self,
        path: Path | str,
        *,
        scope: str = "",
        clock: Any = time.time,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        self.scope = scope
        make_state_folder(self.path.parent)
        self._clock = clock
        self._db = None  # type: ignore[assignment]
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
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                self.close()
                raise  # busy past busy_timeout: a transient state the callers handle, not a broken store
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> StoreConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The database's `user_version`."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any exception."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
