"""Where the store lives: the state folder, the database file, and a project's scope (DESIGN.md, Runtime: Store).

The file `$XDG_STATE_HOME/attend/attend.db` is shared by every project of the XDG home; each row (but
MCP probe records) carries a `scope`, the project's resolved path (`scope_for`, from `attend.files`). A
folder or file that cannot be used is `StoreUnavailable`: bad input from the user's machine, reported in
one line, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from attend.errors import Refusal
from attend.files import scope_for

__all__ = ["DB_FILENAME", "StoreUnavailable", "default_db_path", "make_state_folder", "notice", "on_notice", "scope_for", "take_notices"]

#: The database's file name inside `$XDG_STATE_HOME/attend/`.
DB_FILENAME = "attend.db"


class StoreUnavailable(Refusal):
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


def default_db_path(state_dir: Path) -> Path:
    """The database path inside `state_dir` (LayerPaths.state_dir, i.e. `$XDG_STATE_HOME/attend`)."""
    return Path(state_dir) / DB_FILENAME


#: Who hears what the store has to say when it opens (a reset, a table created again): the daemon sets
#: its log (`on_notice`); without one, notices wait in `_unsaid` until a command takes them
#: (`take_notices`) and prints them on stderr. The store also records a reset for `attend doctor`.
_listener: list[Callable[[str], None]] = []
_unsaid: list[str] = []


def on_notice(listener: Callable[[str], None] | None) -> None:
    """Send the store's notices to `listener` from now on (None: keep them for `take_notices`)."""
    _listener[:] = [] if listener is None else [listener]


def notice(message: str) -> None:
    """Tell the listener (see `on_notice`) something the user must hear about the store."""
    if not _listener:
        _unsaid.append(message)
    for listener in _listener:
        listener(message)


def take_notices() -> list[str]:
    """The notices no listener heard, oldest first (and forget them)."""
    taken = list(_unsaid)
    _unsaid.clear()
    return taken
