"""Command handlers, one module per command group (check, explain, test, sensors, settings, peers, drain,
run, doctor, tui, spec).

A handler reads its arguments (an argparse namespace), calls the library, prints and chooses the exit code:
this is the only package that prints for a command or picks exit codes. `attend.cli` imports a handler's
module only when its command runs, so each module imports only what its command needs.
"""

from __future__ import annotations

import functools
import sys

from attend.errors import Refusal

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path passes through this package)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["reports_refusals"]


def reports_refusals(handler: Callable[[Any], int]) -> Callable[[Any], int]:
    """Wrap a command handler so a `Refusal` (attend.errors) is one line on stderr and its exit code.

    An unusable state store (the state folder a file, the database a file that is not SQLite) is one:
    a problem of the user's machine, not a bug in attend, so it must not end as an internal error; so
    are an unknown shelf target, a refused settings write, a peer request that cannot be done.
    """

    @functools.wraps(handler)
    def wrapper(args: Any) -> int:
        try:
            return handler(args)
        except Refusal as refusal:
            print(f"attend: {refusal.message}", file=sys.stderr)
            return refusal.code

    return wrapper
