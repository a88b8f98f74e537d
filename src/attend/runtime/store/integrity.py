"""What `attend doctor` checks in the store file itself (issue 28, items 4 and 6).

- `quick_check()`: SQLite's `PRAGMA quick_check` (damaged pages, broken indexes): what a garbage page
  or a torn copy leaves, which no query may notice until it reads that page.
- `bad_rows()`: every row (of every project in the file) that the table readers skip because a column
  does not hold what attend wrote (store/rows.py), with its table, rowid and the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from attend.records import record
from attend.runtime.store.connection import StoreConnection
from attend.runtime.store.journal import entry_from_row
from attend.runtime.store.pending import observation_from_row
from attend.runtime.store.poll_history import trace_from_row
from attend.runtime.store.rows import BadRow, json_column
from attend.runtime.store.sensor_status import status_from_row
from attend.runtime.store.session_rows import session_from_row
from attend.runtime.store.shelves import shelf_from_row

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BadRowReport", "IntegrityChecks"]

#: How many problems `quick_check` reports at most.
QUICK_CHECK_LIMIT = 20

#: Each table's row reader, as the table module reads it.
READERS: dict[str, Callable[[Any], Any]] = {
    "trigger_state": lambda row: json_column(row, "state"),
    "sensor_status": lambda row: status_from_row(row, strict=True),
    "pending": observation_from_row,
    "journal": entry_from_row,
    "probes": lambda row: json_column(row, "record", shape=dict),
    "shelves": shelf_from_row,
    "poll_history": trace_from_row,
    "sessions": session_from_row,
    "crate_state": lambda row: json_column(row, "state"),
}


@record(frozen=True)
class BadRowReport:
    """One row the readers skip."""

    table: str
    rowid: int
    reason: str

    def __str__(self) -> str:
        return f"{self.table} rowid {self.rowid}: {self.reason}"


class IntegrityChecks(StoreConnection):
    """The checks of the file as a whole, and its projects (`attend cleanup`: runtime/cleanup.py)."""

    def project_rows(self) -> dict[str, dict[str, int]]:
        """Every project (scope) with rows in the file, and how many each of its tables holds (none: left out)."""
        from attend.runtime.store.tables import PROJECT_TABLES

        found: dict[str, dict[str, int]] = {}
        for table in PROJECT_TABLES:
            for scope, count in self._db.execute(f"SELECT scope, COUNT(*) FROM {table} GROUP BY scope"):  # noqa: S608
                found.setdefault(str(scope), {})[table] = int(count)
        return found

    def remove_project(self, scope: str) -> dict[str, int]:
        """Remove every row of project `scope` (and the hash remembered for it), in one transaction; how many
        went from each table. Probe records are a sensor's, not a project's: they stay."""
        from attend.runtime.store.tables import PROJECT_TABLES

        removed: dict[str, int] = {}
        with self._write() as db:
            for table in PROJECT_TABLES:
                count = db.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,)).rowcount  # noqa: S608
                if count:
                    removed[table] = count
            db.execute("DELETE FROM store_info WHERE key = ?", (f"digest {scope}",))
        return removed

    def quick_check(self) -> list[str]:
        """SQLite's own check of the file: [] when it is sound, else its problems (at most 20)."""
        rows = [str(r[0]) for r in self._db.execute(f"PRAGMA quick_check({QUICK_CHECK_LIMIT})")]
        return [] if rows == ["ok"] else rows

    def bad_rows(self) -> list[BadRowReport]:
        """Every row the table readers skip, table by table, in rowid order."""
        found = []
        for table, read in READERS.items():
            for row in self._db.execute(f"SELECT rowid AS _rowid, * FROM {table} ORDER BY rowid"):  # noqa: S608
                try:
                    read(row)
                except BadRow as exc:
                    found.append(BadRowReport(table, int(row["_rowid"]), str(exc)))
        return found
