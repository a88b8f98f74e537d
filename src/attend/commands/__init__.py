"""Command handlers, one module per command group (check, explain, test, sensors, settings, peers, drain,
run, doctor, tui, spec).

A handler reads its arguments (an argparse namespace), calls the library, prints and chooses the exit code:
this is the only package that prints for a command or picks exit codes. `attend.cli` imports a handler's
module only when its command runs, so each module imports only what its command needs.
"""

from __future__ import annotations

import functools
import sys

from attend.errors import EXIT_FAILED, Refusal

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path passes through this package)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol, TypeVar

    class ProjectArgs(Protocol):
        """What every command's arguments hold (attend.cli sets both after parsing): the project directory,
        absolute, and whether a write goes to the project layer. Each handler names the rest of what it
        reads in a Protocol of its own, beside it."""

        project_dir: str
        project_layer: bool

    class JsonArgs(ProjectArgs, Protocol):
        """The arguments of a command with `--json`."""

        json: bool

    Args = TypeVar("Args")

__all__ = ["reports_refusals", "unusable_store_line"]


def reports_refusals(handler: Callable[[Args], int]) -> Callable[[Args], int]:
    """Wrap a command handler so a `Refusal` (attend.errors) is one line on stderr and its exit code.

    An unusable state store (the state folder a file, the database a file that is not SQLite) is one:
    a problem of the user's machine, not a bug in attend, so it must not end as an internal error; so
    are an unknown shelf target, a refused settings write, a peer request that cannot be done.
    So is a store SQLite finds damaged halfway through the command (a garbage page, a truncated file):
    one line, `cannot use the state store ...`, exit 1. What the store said when it opened (it started
    over after a reset, it re-created a lost table) is a line on stderr too.
    """

    @functools.wraps(handler)
    def wrapper(args: Args) -> int:
        try:
            return handler(args)
        except Refusal as refusal:
            print(f"attend: {refusal.message}", file=sys.stderr)
            return refusal.code
        except Exception as exc:
            sqlite3 = sys.modules.get("sqlite3")  # never imported: no SQLite error is possible (the lint path)
            if sqlite3 is None or not isinstance(exc, sqlite3.Error):
                raise
            print(f"attend: {unusable_store_line(args, exc)}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            store = sys.modules.get("attend.runtime.store.location")  # loaded only by commands that use it
            for message in store.take_notices() if store is not None else ():
                print(f"attend: {message}", file=sys.stderr)

    return wrapper


def unusable_store_line(args: object, exc: BaseException) -> str:
    """`cannot use the state store <folder>: attend.db: <reason>` for an SQLite error met mid-command."""
    import os

    from attend.runtime.store import DB_FILENAME, StoreUnavailable
    from attend.spec import layer_paths

    if isinstance(exc, StoreUnavailable):
        return str(exc)
    project_dir = getattr(args, "project_dir", None)
    folder = layer_paths(project_dir if isinstance(project_dir, str) else os.getcwd(), os.environ).state_dir
    return str(StoreUnavailable(folder, f"{DB_FILENAME}: {exc}"))
