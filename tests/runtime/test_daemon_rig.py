"""The rig's store reads while the daemon creates its store: the file exists before its tables do."""

from __future__ import annotations

import sqlite3

import pytest
from daemon_rig import journal_rows, last_poll, query, recorded_state, scalar


def test_a_store_file_without_its_tables_yet_reads_as_no_rows(home) -> None:
    db = home.state / "attend" / "attend.db"
    db.parent.mkdir(parents=True)
    sqlite3.connect(db).close()  # the file the daemon opened, before it made its tables
    assert query(home, "SELECT state FROM trigger_state WHERE sensor = 'peers'") == []
    assert journal_rows(home) == []
    assert last_poll(home) == 0
    assert scalar(home, "SELECT COUNT(*) FROM poll_history", default=-1) == -1
    assert recorded_state(home, "items") is None


def test_a_query_the_store_cannot_run_still_fails(home) -> None:
    db = home.state / "attend" / "attend.db"
    db.parent.mkdir(parents=True)
    sqlite3.connect(db).close()
    with pytest.raises(sqlite3.OperationalError, match="syntax error"):
        query(home, "SELEC nothing")
