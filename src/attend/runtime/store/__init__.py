"""The durable store: one SQLite file in WAL mode (DESIGN.md, Runtime: Store).

Decision implemented here: every state change that decides whether a notification happens commits in
ONE transaction with the change it causes, so a crash at any moment neither loses nor repeats a
notification. The package is split by concern, one module per table group:

- `location.py`: where the file lives (`scope_for`, `default_db_path`, `StoreUnavailable`);
- `tables.py`: the tables and their migrations (`PRAGMA user_version`);
- `connection.py`: the connection and its one-transaction-at-a-time `_write()`;
- `trigger_states.py`, `sensor_status.py`, `sensor_memory.py` (probe records, crate state);
- `pending.py`: the accumulation and `commit_poll` (a poll in one transaction);
- `journal.py`: `disclose`, printing and draining marks, pruning;
- `sessions.py`: each session's delivery positions, role and liveness (several `attend run` per project);
- `rows.py`: reading a row as data anyone could have damaged (a bad row is skipped, never fatal);
- `integrity.py`: what `attend doctor` checks in the file (`PRAGMA quick_check`, the rows skipped).

`Store` is all of them on one connection; `open_project_store(paths)` is how every command opens it.
"""

from __future__ import annotations

from attend.runtime.clock import WALL_CLOCK, Clock
from attend.runtime.store.integrity import BadRowReport, IntegrityChecks
from attend.runtime.store.journal import JournalEntry
from attend.runtime.store.location import (
    DB_FILENAME,
    StoreUnavailable,
    default_db_path,
    make_state_folder,
    scope_for,
)
from attend.runtime.store.pending import Observation
from attend.runtime.store.sensor_memory import ProbeRecords
from attend.runtime.store.sensor_status import SensorStatus
from attend.runtime.store.session_rows import SessionRecord, SessionRows
from attend.runtime.store.tables import SCHEMA_VERSION

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from attend.spec.loaded import LayerPaths

__all__ = [
    "BadRowReport",
    "DB_FILENAME",
    "SCHEMA_VERSION",
    "JournalEntry",
    "Observation",
    "SensorStatus",
    "SessionRecord",
    "Store",
    "StoreUnavailable",
    "default_db_path",
    "make_state_folder",
    "open_project_store",
    "scope_for",
]


class Store(SessionRows, ProbeRecords, IntegrityChecks):
    """The SQLite store: every table of one project's scope on one connection (see `StoreConnection`)."""

    def __enter__(self) -> Store:
        return self


def open_project_store(paths: LayerPaths, *, clock: Clock = WALL_CLOCK) -> Store:
    """The store of the project behind `paths` (LayerPaths): its state folder's file, scoped to the project.

    The daemon and every one-shot command open it this way, so they all read and write the same rows.
    """
    return Store(default_db_path(paths.state_dir), scope=scope_for(paths.project_dir), clock=clock)
