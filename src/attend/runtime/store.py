"""The durable store: one SQLite file in WAL mode (DESIGN.md, Runtime: Store).

Decision implemented here: every state change that decides whether a notification happens commits in
ONE transaction with the change it causes, so a crash at any moment neither loses nor repeats a
notification:

- `commit_poll` writes a poll's new trigger states and its observations (into `pending`) together;
- `disclose` moves observations from `pending` to the `journal` (and records the disclosure time for
  the engagement model) together;
- printing happens after the commit and is recorded with `mark_printed`. On restart the daemon prints
  every journal row still marked unprinted. So the journal holds every notification exactly once, and
  stdout/stderr are at-least-once (a crash between the print and `mark_printed` prints a line again).

The daemon and the one-shot CLI commands (`sensors poll|fire`, `drain`) open the same file; WAL lets
readers run beside the writer and `busy_timeout` makes short write overlaps wait instead of failing.
The file is shared by every project of the XDG home, so each row (but MCP probe records, which describe
a server and tool, not a project) carries a `scope`, the project directory: the same user sensor polled
for two projects keeps two trigger states, two journals, two governors.
The schema is versioned with `PRAGMA user_version` (now 2: version 1 had no `scope`; `_migrate` moves
its rows over). Later versions (pending `for:` state, traces) add tables the same way.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DB_FILENAME",
    "SCHEMA_VERSION",
    "JournalEntry",
    "Observation",
    "SensorStatus",
    "Store",
    "StoreUnavailable",
    "default_db_path",
    "open_project_store",
    "scope_for",
]

class StoreUnavailable(Exception):
    """The state folder or the database cannot be used: the folder is a file or not writable, or the
    file is not an SQLite database. Bad input from the user's machine, so the commands report it in one
    line and exit 1 instead of showing an internal error."""

    def __init__(self, folder: Path, reason: str) -> None:
        super().__init__(f"cannot use the state store {folder}: {reason}")
        self.folder = folder
        self.reason = reason


def make_state_folder(folder: Path) -> None:
    """Create the state folder (and its parents) when missing; `StoreUnavailable` when it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise StoreUnavailable(folder, "it exists and is not a folder") from None
    except OSError as exc:
        raise StoreUnavailable(folder, exc.strerror or str(exc)) from None


#: The database's file name inside `$XDG_STATE_HOME/attend/`.
DB_FILENAME = "attend.db"

#: How long a writer waits for another process's transaction before giving up (milliseconds).
BUSY_TIMEOUT_MS = 10_000

#: The schema version this code writes (`PRAGMA user_version`). Version 1 had no `scope` column.
SCHEMA_VERSION = 2

#: The current schema (every statement idempotent).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS trigger_state (
    scope    TEXT NOT NULL,
    sensor   TEXT NOT NULL,
    hash     TEXT NOT NULL,
    state    TEXT NOT NULL,
    updated  REAL NOT NULL,
    PRIMARY KEY (scope, sensor, hash)
);
CREATE TABLE IF NOT EXISTS sensor_status (
    scope        TEXT NOT NULL,
    sensor       TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'ok',
    message      TEXT NOT NULL DEFAULT '',
    since        REAL,
    last_poll    REAL,
    next_poll    REAL,
    interval     REAL,
    quiet_polls  INTEGER NOT NULL DEFAULT 0,
    failures     INTEGER NOT NULL DEFAULT 0,
    line_errors  TEXT NOT NULL DEFAULT '[]',
    lane         TEXT,
    lane_note    TEXT NOT NULL DEFAULT '',
    fires        TEXT NOT NULL DEFAULT '[]',
    file_error   TEXT NOT NULL DEFAULT '',
    updated      REAL,
    PRIMARY KEY (scope, sensor)
);
CREATE TABLE IF NOT EXISTS pending (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    sensor      TEXT NOT NULL,
    time        REAL NOT NULL,
    trigger     TEXT NOT NULL,
    key         TEXT,
    magnitude   REAL NOT NULL,
    description TEXT NOT NULL,
    meta        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS pending_sensor ON pending (scope, sensor);
CREATE TABLE IF NOT EXISTS journal (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    time        REAL NOT NULL,
    sensor      TEXT NOT NULL,
    trigger     TEXT NOT NULL,
    key         TEXT,
    lane        TEXT NOT NULL,
    priority    TEXT NOT NULL,
    magnitude   REAL NOT NULL,
    description TEXT NOT NULL,
    disclosure  INTEGER,
    test        INTEGER NOT NULL DEFAULT 0,
    printed     INTEGER NOT NULL DEFAULT 0,
    drained     INTEGER NOT NULL DEFAULT 0,
    meta        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS journal_unprinted ON journal (scope, printed) WHERE printed = 0;
CREATE INDEX IF NOT EXISTS journal_undrained ON journal (scope, lane, drained) WHERE drained = 0;
CREATE TABLE IF NOT EXISTS probes (
    sensor   TEXT PRIMARY KEY,
    record   TEXT NOT NULL,
    updated  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS crate_state (
    scope    TEXT NOT NULL,
    sensor   TEXT NOT NULL,
    state    TEXT NOT NULL,
    updated  REAL NOT NULL,
    PRIMARY KEY (scope, sensor)
);
"""

#: The tables whose rows belong to one project (version 2 added their `scope` column).
#: `commit_poll`'s marker for "leave the crate state as it is" (None is a state a sensor may export).
_UNCHANGED: Any = object()

SCOPED_TABLES = ("trigger_state", "sensor_status", "pending", "journal", "crate_state")

#: Indexes of version 1, dropped before its tables are rebuilt (index names are global in SQLite).
_V1_INDEXES = ("pending_sensor", "journal_unprinted", "journal_undrained")


def scope_for(project_dir: Path | str) -> str:
    """The store scope of a project: its resolved absolute path."""
    return str(Path(project_dir).resolve())


def default_db_path(state_dir: Path) -> Path:
    """The database path inside `state_dir` (LayerPaths.state_dir, i.e. `$XDG_STATE_HOME/attend`)."""
    return Path(state_dir) / DB_FILENAME


def open_project_store(paths: Any, *, clock: Any = time.time) -> Store:
    """The store of the project behind `paths` (LayerPaths): its state folder's file, scoped to the project.

    The daemon and every one-shot command open it this way, so they all read and write the same rows.
    """
    return Store(default_db_path(paths.state_dir), scope=scope_for(paths.project_dir), clock=clock)


@dataclass(frozen=True, slots=True)
class Observation:
    """One fire waiting in a sensor's accumulator (a `pending` row), or about to be stored as one."""

    trigger: str
    magnitude: float
    description: str
    key: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    time: float = 0.0


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One notification as the journal holds it."""

    id: int
    time: float
    sensor: str
    trigger: str
    key: str | None
    lane: str
    priority: str
    magnitude: float
    description: str
    disclosure: int | None
    test: bool
    printed: bool
    drained: bool
    meta: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON-ready mapping."""
        return {
            "id": self.id,
            "time": self.time,
            "sensor": self.sensor,
            "trigger": self.trigger,
            "key": self.key,
            "lane": self.lane,
            "priority": self.priority,
            "magnitude": self.magnitude,
            "description": self.description,
            "test": self.test,
            "printed": self.printed,
            "drained": self.drained,
            "meta": self.meta,
        }


@dataclass(slots=True)
class SensorStatus:
    """A sensor's live status row (what `attend sensors` shows)."""

    sensor: str
    state: str = "ok"
    message: str = ""
    since: float | None = None
    last_poll: float | None = None
    next_poll: float | None = None
    interval: float | None = None
    quiet_polls: int = 0
    failures: int = 0
    line_errors: list[str] = field(default_factory=list)
    lane: str | None = None
    lane_note: str = ""
    fires: list[float] = field(default_factory=list)
    #: The error of a file that stopped validating while its last good version keeps running.
    file_error: str = ""


_STATUS_COLUMNS = (
    "state",
    "message",
    "since",
    "last_poll",
    "next_poll",
    "interval",
    "quiet_polls",
    "failures",
    "line_errors",
    "lane",
    "lane_note",
    "fires",
    "file_error",
)
_JSON_STATUS_COLUMNS = frozenset({"line_errors", "fires"})


class Store:
    """The SQLite store. One instance per process; not shared between threads.

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
            self._migrate()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                self.close()
                raise  # busy past busy_timeout: a transient state the callers handle, not a broken store
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreUnavailable(self.path.parent, f"{self.path.name}: {exc}") from None

    # -- lifecycle ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        with self._write():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return
            if version == 1:
                self._scope_v1_tables()
            self._create_schema()
            if version == 1:
                self._copy_v1_rows()
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _create_schema(self) -> None:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self._db.execute(f"PRAGMA table_info({table})")]

    def _scope_v1_tables(self) -> None:
        """Version 1 → 2, step 1: move the unscoped tables aside (their rows are copied back after)."""
        for index in _V1_INDEXES:
            self._db.execute(f"DROP INDEX IF EXISTS {index}")
        for table in SCOPED_TABLES:
            columns = self._columns(table)
            if columns and "scope" not in columns:
                self._db.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")

    def _copy_v1_rows(self) -> None:
        """Version 1 → 2, step 2: copy the old rows into the scoped tables with the empty scope."""
        for table in SCOPED_TABLES:
            old = self._columns(f"{table}_v1")
            if not old:
                continue
            shared = [c for c in old if c in self._columns(table)]
            names = ", ".join(shared)
            self._db.execute(
                f"INSERT INTO {table} (scope, {names}) SELECT '', {names} FROM {table}_v1"  # noqa: S608 - fixed names
            )
            self._db.execute(f"DROP TABLE {table}_v1")

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

    # -- trigger state -----------------------------------------------------------------------------

    def trigger_states(self, sensor: str) -> dict[str, Any]:
        """Every stored trigger state of `sensor`, keyed by trigger definition hash."""
        rows = self._db.execute(
            "SELECT hash, state FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        )
        return {row["hash"]: json.loads(row["state"]) for row in rows}

    def _put_states(self, sensor: str, states: dict[str, Any], *, replace: bool, now: float) -> None:
        if replace:
            self._db.execute("DELETE FROM trigger_state WHERE scope = ? AND sensor = ?", (self.scope, sensor))
        self._db.executemany(
            "INSERT OR REPLACE INTO trigger_state (scope, sensor, hash, state, updated) VALUES (?, ?, ?, ?, ?)",
            [(self.scope, sensor, h, json.dumps(s, sort_keys=True), now) for h, s in states.items()],
        )

    def put_trigger_states(self, sensor: str, states: dict[str, Any], *, replace: bool = False) -> None:
        """Store trigger states alone (e.g. `sensors fire --commit`); `replace` drops the others."""
        with self._write():
            self._put_states(sensor, states, replace=replace, now=self._clock())

    # -- a poll ------------------------------------------------------------------------------------

    def commit_poll(
        self,
        sensor: str,
        *,
        states: dict[str, Any] | None,
        observations: Sequence[Observation] = (),
        status: dict[str, Any] | None = None,
        replace_states: bool = True,
        crate_state: Any = _UNCHANGED,
    ) -> list[int]:
        """Commit one poll in ONE transaction: the new trigger states, the observations, the status.

        Args:
            sensor: the sensor's name.
            states: the trigger states the step returned (None: leave them untouched, as after a
                failed poll). With `replace_states` the sensor's other stored states (of triggers
                that were edited or removed) are dropped.
            observations: the fires, appended to the sensor's pending accumulation.
            status: fields of the sensor's status row to update (see `SensorStatus`).
            replace_states: drop stored states whose hash is not in `states`.
            crate_state: the state a crate sensor exported after this poll (left as it was when
                not given), so the sensor's own memory and its trigger states move together.

        Returns:
            The pending ids of the stored observations.
        """
        now = self._clock()
        with self._write():
            if states is not None:
                self._put_states(sensor, states, replace=replace_states, now=now)
            ids = []
            for obs in observations:
                cur = self._db.execute(
                    "INSERT INTO pending (scope, sensor, time, trigger, key, magnitude, description, meta)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        self.scope,
                        sensor,
                        obs.time or now,
                        obs.trigger,
                        obs.key,
                        float(obs.magnitude),
                        obs.description,
                        json.dumps(obs.meta, sort_keys=True, default=str),
                    ),
                )
                ids.append(int(cur.lastrowid))
            if status:
                self._update_status(sensor, status, now)
            if crate_state is not _UNCHANGED:
                self._put_crate_state(sensor, crate_state, now)
        return ids

    # -- sensor status -----------------------------------------------------------------------------

    def _update_status(self, sensor: str, fields: dict[str, Any], now: float) -> None:
        unknown = set(fields) - set(_STATUS_COLUMNS)
        if unknown:
            raise ValueError(f"unknown status fields: {sorted(unknown)}")
        self._db.execute(
            "INSERT OR IGNORE INTO sensor_status (scope, sensor, since) VALUES (?, ?, ?)", (self.scope, sensor, now)
        )
        current = self._db.execute(
            "SELECT state FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        values = dict(fields)
        if "state" in values and current is not None and current["state"] != values["state"]:
            values["since"] = now  # `since`: when the sensor entered its current state
        for column in _JSON_STATUS_COLUMNS & set(values):
            values[column] = json.dumps(values[column])
        assignments = ", ".join(f"{column} = ?" for column in values)
        self._db.execute(
            f"UPDATE sensor_status SET {assignments}, updated = ? WHERE scope = ? AND sensor = ?",  # noqa: S608
            (*values.values(), now, self.scope, sensor),
        )

    def update_status(self, sensor: str, **fields: Any) -> None:
        """Update fields of `sensor`'s status row (creating it), in one transaction."""
        with self._write():
            self._update_status(sensor, fields, self._clock())

    def status(self, sensor: str) -> SensorStatus | None:
        """`sensor`'s status row, or None when it never had one."""
        row = self._db.execute(
            "SELECT * FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        return _status_from_row(row) if row is not None else None

    def statuses(self) -> dict[str, SensorStatus]:
        """Every status row, keyed by sensor name."""
        rows = self._db.execute("SELECT * FROM sensor_status WHERE scope = ?", (self.scope,))
        return {row["sensor"]: _status_from_row(row) for row in rows}

    def forget_sensor(self, sensor: str) -> None:
        """Drop a removed sensor's status row (its trigger states and journal stay)."""
        with self._write():
            self._db.execute("DELETE FROM sensor_status WHERE scope = ? AND sensor = ?", (self.scope, sensor))

    # -- pending accumulation and disclosure -------------------------------------------------------

    def pending(self, sensor: str) -> list[Observation]:
        """The observations `sensor` has accumulated and not yet disclosed, oldest first."""
        rows = self._db.execute(
            "SELECT * FROM pending WHERE scope = ? AND sensor = ? ORDER BY id", (self.scope, sensor)
        )
        return [_observation_from_row(row) for row in rows]

    def pending_sensors(self) -> list[str]:
        """The names of the sensors that hold pending observations, the longest-waiting first."""
        # Oldest first, so a sensor that has waited longest meets the governor first.
        rows = self._db.execute(
            "SELECT sensor FROM pending WHERE scope = ? GROUP BY sensor ORDER BY MIN(id)", (self.scope,)
        )
        return [r[0] for r in rows]

    def disclose(
        self,
        sensor: str,
        observations: Sequence[Observation],
        *,
        lane: str,
        priority: str,
        fires: list[float] | None = None,
        time_: float | None = None,
    ) -> list[JournalEntry]:
        """Move `observations` from pending to the journal as one disclosure, in ONE transaction.

        Args:
            sensor: the sensor's name.
            observations: pending observations (with ids) to disclose.
            lane: the lane they ride (`event` or `message`).
            priority: the disclosure's priority (`high`, `medium`, `low`).
            fires: the sensor's new engagement fire times, stored in the same transaction.
            time_: the disclosure time (default: now).

        Returns:
            The new journal entries, unprinted.
        """
        now = self._clock() if time_ is None else time_
        with self._write():
            entries = self._journal_rows(sensor, observations, lane=lane, priority=priority, now=now, test=False)
            self._db.executemany("DELETE FROM pending WHERE id = ?", [(o.id,) for o in observations])
            if fires is not None:
                self._update_status(sensor, {"fires": fires}, now)
        return entries

    def journal_test(
        self, sensor: str, observations: Sequence[Observation], *, lane: str, priority: str
    ) -> list[JournalEntry]:
        """Write test notifications (`sensors fire`) straight to the journal, unprinted."""
        with self._write():
            return self._journal_rows(
                sensor, observations, lane=lane, priority=priority, now=self._clock(), test=True
            )

    def _journal_rows(
        self,
        sensor: str,
        observations: Sequence[Observation],
        *,
        lane: str,
        priority: str,
        now: float,
        test: bool,
    ) -> list[JournalEntry]:
        entries: list[JournalEntry] = []
        disclosure: int | None = None
        for obs in observations:
            cur = self._db.execute(
                "INSERT INTO journal (scope, time, sensor, trigger, key, lane, priority, magnitude, description,"
                " disclosure, test, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.scope,
                    now,
                    sensor,
                    obs.trigger,
                    obs.key,
                    lane,
                    priority,
                    float(obs.magnitude),
                    obs.description,
                    disclosure,
                    int(test),
                    json.dumps(obs.meta, sort_keys=True, default=str),
                ),
            )
            row_id = int(cur.lastrowid)
            if disclosure is None:
                # A disclosure is named after its first journal row, so the governor can count them.
                disclosure = row_id
                self._db.execute("UPDATE journal SET disclosure = ? WHERE id = ?", (row_id, row_id))
            entries.append(
                JournalEntry(
                    id=row_id,
                    time=now,
                    sensor=sensor,
                    trigger=obs.trigger,
                    key=obs.key,
                    lane=lane,
                    priority=priority,
                    magnitude=float(obs.magnitude),
                    description=obs.description,
                    disclosure=disclosure,
                    test=test,
                    printed=False,
                    drained=False,
                    meta=dict(obs.meta),
                )
            )
        return entries

    # -- the journal -------------------------------------------------------------------------------

    def journal(self, *, sensor: str | None = None, test: bool | None = None) -> list[JournalEntry]:
        """Journal entries, oldest first, optionally only one sensor's or only (non-)test ones."""
        clauses, params = ["scope = ?"], [self.scope]
        if sensor is not None:
            clauses.append("sensor = ?")
            params.append(sensor)
        if test is not None:
            clauses.append("test = ?")
            params.append(int(test))
        where = f"WHERE {' AND '.join(clauses)}"
        rows = self._db.execute(f"SELECT * FROM journal {where} ORDER BY id", params)  # noqa: S608
        return [_entry_from_row(r) for r in rows]

    def unprinted(self, *, test: bool | None = None) -> list[JournalEntry]:
        """Journal entries not yet printed (after a crash, or test fires from another process)."""
        sql = "SELECT * FROM journal WHERE scope = ? AND printed = 0"
        params: list[Any] = [self.scope]
        if test is not None:
            sql += " AND test = ?"
            params.append(int(test))
        return [_entry_from_row(r) for r in self._db.execute(sql + " ORDER BY id", params)]

    def mark_printed(self, ids: Iterable[int]) -> None:
        """Record that these entries reached their stream."""
        with self._write():
            self._db.executemany("UPDATE journal SET printed = 1 WHERE id = ?", [(i,) for i in ids])

    def undrained(self, lane: str = "message") -> list[JournalEntry]:
        """Entries of `lane` that no conduit has delivered yet, oldest first.

        Delivered means drained by `attend drain`, or printed on stdout (the Monitor stream, high and
        medium priority): a line the Monitor already woke the agent with is not handed over a second
        time by the Stop hook. Low-priority lines went to stderr only, so they stay undelivered until
        drained, and so does a disclosure a crash left unprinted.
        """
        rows = self._db.execute(
            "SELECT * FROM journal WHERE scope = ? AND drained = 0 AND lane = ?"
            " AND NOT (printed = 1 AND priority IN ('high', 'medium')) ORDER BY id",
            (self.scope, lane),
        )
        return [_entry_from_row(r) for r in rows]

    def mark_drained(self, ids: Iterable[int]) -> None:
        """Record that `attend drain` delivered these entries."""
        with self._write():
            self._db.executemany("UPDATE journal SET drained = 1 WHERE id = ?", [(i,) for i in ids])

    def prune_journal(self, before: float) -> int:
        """Delete journal rows older than `before` that every conduit is done with; return how many.

        A row is done when it was printed and, on the message lane, delivered (drained, or printed on
        stdout). Undelivered rows stay whatever their age.
        """
        with self._write():
            cur = self._db.execute(
                "DELETE FROM journal WHERE time < ? AND printed = 1"
                " AND (lane != 'message' OR drained = 1 OR priority IN ('high', 'medium'))",
                (before,),
            )
        return int(cur.rowcount)

    def disclosure_times(self, lane: str, since: float) -> list[float]:
        """The times of the real (non-test) disclosures on `lane` since `since`, oldest first.

        The governor rebuilds its window from these after a restart.
        """
        rows = self._db.execute(
            "SELECT DISTINCT disclosure, time FROM journal WHERE scope = ? AND lane = ? AND test = 0 AND time >= ?"
            " ORDER BY time",
            (self.scope, lane, since),
        )
        return [float(r["time"]) for r in rows]

    # -- MCP probe records (Engineer D) and crate state (Engineer F) -------------------------------

    def get_probe(self, sensor: str) -> dict[str, Any] | None:
        """`sensor`'s MCP probe record, or None when it has none."""
        row = self._db.execute("SELECT record FROM probes WHERE sensor = ?", (sensor,)).fetchone()
        return json.loads(row["record"]) if row is not None else None

    def put_probe(self, sensor: str, record: dict[str, Any]) -> None:
        """Store (replace) `sensor`'s MCP probe record."""
        with self._write():
            self._db.execute(
                "INSERT OR REPLACE INTO probes (sensor, record, updated) VALUES (?, ?, ?)",
                (sensor, json.dumps(record, sort_keys=True, default=str), self._clock()),
            )

    def delete_probe(self, sensor: str) -> None:
        """Drop `sensor`'s probe record (a voided probe)."""
        with self._write():
            self._db.execute("DELETE FROM probes WHERE sensor = ?", (sensor,))

    def get_crate_state(self, sensor: str) -> Any | None:
        """The state a crate sensor exported last (JSON-like), or None."""
        row = self._db.execute(
            "SELECT state FROM crate_state WHERE scope = ? AND sensor = ?", (self.scope, sensor)
        ).fetchone()
        return json.loads(row["state"]) if row is not None else None

    def put_crate_state(self, sensor: str, state: Any) -> None:
        """Store a crate sensor's exported state (must be JSON-serialisable)."""
        with self._write():
            self._put_crate_state(sensor, state, self._clock())

    def _put_crate_state(self, sensor: str, state: Any, now: float) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO crate_state (scope, sensor, state, updated) VALUES (?, ?, ?, ?)",
            (self.scope, sensor, json.dumps(state, sort_keys=True), now),
        )


def _status_from_row(row: sqlite3.Row) -> SensorStatus:
    return SensorStatus(
        sensor=row["sensor"],
        state=row["state"],
        message=row["message"],
        since=row["since"],
        last_poll=row["last_poll"],
        next_poll=row["next_poll"],
        interval=row["interval"],
        quiet_polls=row["quiet_polls"],
        failures=row["failures"],
        line_errors=json.loads(row["line_errors"]),
        lane=row["lane"],
        lane_note=row["lane_note"],
        fires=json.loads(row["fires"]),
        file_error=row["file_error"],
    )


def _observation_from_row(row: sqlite3.Row) -> Observation:
    return Observation(
        trigger=row["trigger"],
        magnitude=row["magnitude"],
        description=row["description"],
        key=row["key"],
        meta=json.loads(row["meta"]),
        id=row["id"],
        time=row["time"],
    )


def _entry_from_row(row: sqlite3.Row) -> JournalEntry:
    return JournalEntry(
        id=row["id"],
        time=row["time"],
        sensor=row["sensor"],
        trigger=row["trigger"],
        key=row["key"],
        lane=row["lane"],
        priority=row["priority"],
        magnitude=row["magnitude"],
        description=row["description"],
        disclosure=row["disclosure"],
        test=bool(row["test"]),
        printed=bool(row["printed"]),
        drained=bool(row["drained"]),
        meta=json.loads(row["meta"]),
    )
