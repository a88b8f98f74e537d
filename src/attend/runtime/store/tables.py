"""The store's tables and their migrations (`PRAGMA user_version`).

Version 11 is current: version 1 had no `scope` column; `migrate` moves its rows over with the empty
scope. Version 3 added the noise tables (`shelves`, `poll_history`: runtime/store/shelves.py and
poll_history.py), version 4 the `sessions` table (runtime/store/session_rows.py), version 5
`session_seen` (the authored items each session was shown, and its cold start), created like every
table by the idempotent statements of `SCHEMA`. Version 6 added `sensor_status.state_source` (`poll`, or `load` for a state the daemon
recorded from the sensor's files and config: `invalid`, `refused`), added to an older table by
`ALTER TABLE` (`_ADDED_COLUMNS`). Version 7 added `sensor_status.wake_error` (why the sensor's
`wake_on` is not watched; the sensor polls on its interval meanwhile), added the same way.
Version 8 added `store_info` (the store's identity, and the note of a reset: runtime/store/connection.py).
Version 9 added `sessions.claude_pid` (the Claude Code process a session id was recorded for, so
`/clear`'s new id finds the old one: store/session_rows.py `inherit_session`), added to the table the same way.
Version 10 added the partial indexes `journal_turn` (the rows worth a turn: messages, high and medium
lines) and `journal_turn_unprinted` (those no session showed yet), so what a hook hands over is read from
them in a bounded number of rows however long the backlog (store/session_rows.py `turn_backlog`).
Version 11 added `sessions.claude_start` (that process's start time, so a session is live while that very
process runs: peers/identity.py `host_runs`), `sessions.claude_seen` (when it was last registered: of the
ids one process had, the one registered last is its session) and `sessions.transcript` (the transcript path
its hooks were given), added to the table as `claude_pid` was.

A database at the current version is checked at every open (`check_tables`): a table that is missing
is created again, empty (and said); a table that lacks a column attend reads is a file that is not
attend's store, refused (`SchemaMismatch`) rather than failing at the first query that reads it. A
check that passed is remembered with SQLite's schema cookie (`PRAGMA schema_version`, which every
change to any table's definition moves): while the cookie is the one checked, the tables are as they
were and the open skips the comparison (every hook opens the store: it costs more than the hook's reads).
"""

from __future__ import annotations

import sqlite3

__all__ = ["PROJECT_TABLES", "SCHEMA_VERSION", "SCOPED_TABLES", "SchemaMismatch", "check_tables", "migrate"]

#: The schema version this code writes (`PRAGMA user_version`). Version 1 had no `scope` column,
#: version 2 no noise tables, version 3 no `sessions` table, version 4 no `session_seen` table,
#: version 5 no `sensor_status.state_source` column, version 6 no `sensor_status.wake_error` column,
#: version 7 no `store_info` table, version 8 no `sessions.claude_pid` column, version 9 no `journal_turn` indexes,
#: version 10 no `sessions.claude_start`, `claude_seen` and `transcript` columns.
SCHEMA_VERSION = 11

#: The current schema (every statement idempotent).
SCHEMA = """
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
    state_source TEXT NOT NULL DEFAULT 'poll',
    wake_error   TEXT NOT NULL DEFAULT '',
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
CREATE INDEX IF NOT EXISTS journal_turn ON journal (scope, id) WHERE lane = 'message' OR priority IN ('high', 'medium');
CREATE INDEX IF NOT EXISTS journal_turn_unprinted ON journal (scope, id)
    WHERE printed = 0 AND (lane = 'message' OR priority IN ('high', 'medium'));
CREATE TABLE IF NOT EXISTS probes (
    sensor   TEXT PRIMARY KEY,
    record   TEXT NOT NULL,
    updated  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS shelves (
    scope    TEXT NOT NULL,
    sensor   TEXT NOT NULL,
    trigger  TEXT NOT NULL DEFAULT '',
    until    REAL NOT NULL,
    reason   TEXT NOT NULL DEFAULT '',
    since    REAL NOT NULL,
    PRIMARY KEY (scope, sensor, trigger)
);
CREATE TABLE IF NOT EXISTS poll_history (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    scope    TEXT NOT NULL,
    sensor   TEXT NOT NULL,
    time     REAL NOT NULL,
    trace    TEXT NOT NULL,
    open     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS poll_history_sensor ON poll_history (scope, sensor, id);
CREATE INDEX IF NOT EXISTS poll_history_open ON poll_history (scope, sensor) WHERE open = 1;
CREATE TABLE IF NOT EXISTS sessions (
    scope         TEXT NOT NULL,
    session       TEXT NOT NULL,
    printed_upto  INTEGER NOT NULL DEFAULT 0,
    drained_upto  INTEGER NOT NULL DEFAULT 0,
    pid           INTEGER,
    role          TEXT NOT NULL DEFAULT 'stopped',
    role_since    REAL,
    started       REAL,
    heartbeat     REAL,
    PRIMARY KEY (scope, session)
);
CREATE TABLE IF NOT EXISTS session_seen (
    scope    TEXT NOT NULL,
    session  TEXT NOT NULL,
    item     TEXT NOT NULL,
    time     REAL NOT NULL,
    PRIMARY KEY (scope, session, item)
);
CREATE TABLE IF NOT EXISTS store_info (
    key      TEXT PRIMARY KEY,
    value    TEXT NOT NULL
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
SCOPED_TABLES = ("trigger_state", "sensor_status", "pending", "journal", "crate_state", "sessions", "session_seen")
#: Every table holding a project's rows (a `scope` column): the version 2 ones and the noise tables after them.
PROJECT_TABLES = (*SCOPED_TABLES, "shelves", "poll_history")

#: Columns added to a table after it was first created: (table, column, its definition), added to a
#: database whose table lacks them (CREATE TABLE IF NOT EXISTS leaves an existing table as it is).
_ADDED_COLUMNS = (
    ("sensor_status", "state_source", "TEXT NOT NULL DEFAULT 'poll'"),
    ("sensor_status", "wake_error", "TEXT NOT NULL DEFAULT ''"),
    ("sessions", "claude_pid", "INTEGER"),
    ("sessions", "claude_start", "TEXT"),
    ("sessions", "claude_seen", "REAL"),
    ("sessions", "transcript", "TEXT"),
)

#: The indexes of `SCHEMA`.
_INDEXES = frozenset(line.split()[5] for line in SCHEMA.splitlines() if line.startswith("CREATE INDEX IF NOT EXISTS"))

#: Indexes of version 1, dropped before its tables are rebuilt (index names are global in SQLite).
_V1_INDEXES = ("pending_sensor", "journal_unprinted", "journal_undrained")


def migrate(db: sqlite3.Connection) -> None:
    """Bring the database to `SCHEMA_VERSION`; the caller holds a write transaction."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version >= SCHEMA_VERSION:
        return
    if version == 1:
        _scope_v1_tables(db)
    _create_schema(db)
    for table, column, definition in _ADDED_COLUMNS:
        if column not in _columns(db, table):
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
    if version == 1:
        _copy_v1_rows(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


class SchemaMismatch(Exception):
    """A table attend reads is there without a column it needs: not attend's store (or a damaged one)."""


def _expected_columns() -> dict[str, set[str]]:
    """Every table of `SCHEMA` with its columns (read from the schema itself, in memory)."""
    if not _EXPECTED:
        mem = sqlite3.connect(":memory:")
        try:
            _create_schema(mem)
            for (table,) in mem.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
                _EXPECTED[table] = set(_columns(mem, table))
        finally:
            mem.close()
    return _EXPECTED


_EXPECTED: dict[str, set[str]] = {}


def check_tables(db: sqlite3.Connection) -> list[str]:
    """Check a database at the current version against `SCHEMA`; the caller holds a write transaction.

    Returns:
        The tables that were missing, created again (empty).

    Raises:
        SchemaMismatch: a table lacks a column attend reads.
    """
    if _checked_cookie(db) == _cookie(db):
        return []  # no table was created, dropped or altered since a check passed
    present = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [table for table in _expected_columns() if table not in present]
    for table, columns in _expected_columns().items():
        if table in present:
            lacking = sorted(columns - set(_columns(db, table)))
            if lacking:
                raise SchemaMismatch(f"its table {table} has no column {', '.join(lacking)}: it is not attend's store")
    indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    if missing or not indexes >= _INDEXES:
        _create_schema(db)  # a dropped index too: the hooks' queries name theirs (store/session_rows.py)
    db.execute("INSERT OR REPLACE INTO store_info (key, value) VALUES ('checked', ?)", (_cookie(db),))
    return missing


def _cookie(db: sqlite3.Connection) -> str:
    """The schema this code checks (`SCHEMA_VERSION`) and the database's schema cookie."""
    return f"v{SCHEMA_VERSION} schema {db.execute('PRAGMA schema_version').fetchone()[0]}"


def _checked_cookie(db: sqlite3.Connection) -> str | None:
    """The `_cookie` of the last check that passed, or None (never checked, or no `store_info` table)."""
    try:
        row = db.execute("SELECT value FROM store_info WHERE key = 'checked'").fetchone()
    except sqlite3.OperationalError:
        return None  # store_info itself is gone: the full check creates it again
    return row[0] if row is not None and isinstance(row[0], str) else None


def _create_schema(db: sqlite3.Connection) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def _scope_v1_tables(db: sqlite3.Connection) -> None:
    """Version 1 → 2, step 1: move the unscoped tables aside (their rows are copied back after)."""
    for index in _V1_INDEXES:
        db.execute(f"DROP INDEX IF EXISTS {index}")
    for table in SCOPED_TABLES:
        columns = _columns(db, table)
        if columns and "scope" not in columns:
            db.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")


def _copy_v1_rows(db: sqlite3.Connection) -> None:
    """Version 1 → 2, step 2: copy the old rows into the scoped tables with the empty scope."""
    for table in SCOPED_TABLES:
        old = _columns(db, f"{table}_v1")
        if not old:
            continue
        shared = [c for c in old if c in _columns(db, table)]
        names = ", ".join(shared)
        db.execute(
            f"INSERT INTO {table} (scope, {names}) SELECT '', {names} FROM {table}_v1"  # noqa: S608 - fixed names
        )
        db.execute(f"DROP TABLE {table}_v1")
