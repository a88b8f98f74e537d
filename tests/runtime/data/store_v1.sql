CREATE TABLE IF NOT EXISTS trigger_state (
    sensor   TEXT NOT NULL,
    hash     TEXT NOT NULL,
    state    TEXT NOT NULL,
    updated  REAL NOT NULL,
    PRIMARY KEY (sensor, hash)
);
CREATE TABLE IF NOT EXISTS sensor_status (
    sensor       TEXT PRIMARY KEY,
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
    updated      REAL
);
CREATE TABLE IF NOT EXISTS pending (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    sensor      TEXT NOT NULL,
    time        REAL NOT NULL,
    trigger     TEXT NOT NULL,
    key         TEXT,
    magnitude   REAL NOT NULL,
    description TEXT NOT NULL,
    meta        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS pending_sensor ON pending (sensor);
CREATE TABLE IF NOT EXISTS journal (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
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
CREATE INDEX IF NOT EXISTS journal_unprinted ON journal (printed) WHERE printed = 0;
CREATE INDEX IF NOT EXISTS journal_undrained ON journal (lane, drained) WHERE drained = 0;
CREATE TABLE IF NOT EXISTS probes (
    sensor   TEXT PRIMARY KEY,
    record   TEXT NOT NULL,
    updated  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS crate_state (
    sensor   TEXT PRIMARY KEY,
    state    TEXT NOT NULL,
    updated  REAL NOT NULL
);
