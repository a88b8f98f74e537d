"""Command handlers, one module per command group (check, explain, test, sensors, settings, peers, drain,
run, doctor, tui, spec).

A handler reads its arguments (an argparse namespace), calls the library, prints and chooses the exit code:
this is the only package that prints for a command or picks exit codes. `attend.cli` imports a handler's
module only when its command runs, so each module imports only what its command needs.
"""

from __future__ import annotations

import functools
import sys

from attend.errors import EXIT_FAILED, EXIT_USAGE

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path passes through this package)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "reports_unusable_store"]


def reports_unusable_store(handler: Callable[[Any], int]) -> Callable[[Any], int]:
    """Wrap a command handler so an unusable state store is one line on stderr and exit 1.

    The state folder being a file, or the database a file that is not SQLite, is a problem of the
    user's machine, not a bug in attend, so it must not end as an internal error.
    """

    @functools.wraps(handler)
    def wrapper(args: Any) -> int:
        from attend.runtime.store import StoreUnavailable

        try:
            return handler(args)
        except StoreUnavailable as exc:
            print(f"attend: {exc}", file=sys.stderr)
            return EXIT_FAILED

    return wrapper
