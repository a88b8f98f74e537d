"""Reading a stored row as data anyone could have damaged (issue 28, item 4).

The store is a file in the user's state folder: a crash, a disk fault, another program or a person with
`sqlite3` can leave a row whose JSON does not parse, whose number is text, whose integer does not fit
a float. SQLite's columns are not typed, so the schema does not stop any of it. Each table's row
reader decodes its columns with the functions here, which raise `BadRow` with the reason; the table
modules skip such a row (`decoded`), so one bad row is never fatal nor a loop failing five times a
second, and `attend doctor` lists every one with its table and rowid (store/integrity.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from typing import Any, Literal, Protocol, TypeVar, overload

    from attend.vocab import JSON

    T = TypeVar("T")

    class StoredRow(Protocol):
        """A stored row as its readers see it: each column, by name or index, an `object` the decoders here
        narrow. A `sqlite3.Row` is one; sqlite3 types its columns `Any`, which enters no further than this."""

        def __getitem__(self, key: str | int, /) -> object: ...


__all__ = ["BadRow", "decoded", "integer", "json_column", "number", "optional_number", "text"]


class BadRow(ValueError):
    """A stored row that cannot be read back: the reason names the column."""


def decoded(rows: Iterable[StoredRow], decode: Callable[[StoredRow], T]) -> Iterator[T]:
    """The rows `decode` reads, a row it refuses (`BadRow`) skipped."""
    for row in rows:
        try:
            yield decode(row)
        except BadRow:
            continue


if TYPE_CHECKING:  # the three ways to call it, for type checkers
    @overload
    def json_column(row: StoredRow | Mapping[str, object], column: str) -> JSON: ...
    @overload
    def json_column(row: StoredRow | Mapping[str, object], column: str, *, shape: type[dict[Any, Any]]) -> dict[str, Any]: ...
    @overload
    def json_column(row: StoredRow | Mapping[str, object], column: str, *, shape: type[list[Any]]) -> list[Any]: ...


def json_column(row: StoredRow | Mapping[str, object], column: str, *, shape: type | None = None) -> Any:
    """The JSON value in `row[column]`, read with the poll results' rules (bounded depth and integers,
    no NaN), and of type `shape` when given."""
    from attend.compiler.results import MalformedResult, read_json

    value: object = row[column]
    if not isinstance(value, str):
        raise BadRow(f"{column} is not JSON text")
    try:
        data = read_json(value)
    except MalformedResult as exc:
        raise BadRow(f"{column} is not JSON" if exc.syntax else f"{column}: {exc.message}") from None
    if shape is not None and not isinstance(data, shape):
        raise BadRow(f"{column} is not a JSON {'object' if shape is dict else 'list'}")
    return data


def number(value: object, what: str) -> float:
    """`value` as a finite float (an int or a float, never a bool, text or an integer past float range)."""
    if value.__class__ is float:
        if math.isfinite(value):
            return value
    elif value.__class__ is int:
        try:
            return float(value)
        except OverflowError:
            pass
    raise BadRow(f"{what} is not a number")


def optional_number(value: object, what: str) -> float | None:
    """`number`, or None for NULL."""
    return None if value is None else number(value, what)


if TYPE_CHECKING:  # the two ways to call it, for type checkers
    @overload
    def integer(value: object, what: str) -> int: ...
    @overload
    def integer(value: object, what: str, *, optional: Literal[True]) -> int | None: ...


def integer(value: object, what: str, *, optional: bool = False) -> int | None:
    """`value` as an int (None for NULL when `optional`)."""
    if value is None and optional:
        return None
    if value.__class__ is not int:
        raise BadRow(f"{what} is not an integer")
    return value


if TYPE_CHECKING:  # the two ways to call it, for type checkers
    @overload
    def text(value: object, what: str) -> str: ...
    @overload
    def text(value: object, what: str, *, optional: Literal[True]) -> str | None: ...


def text(value: object, what: str, *, optional: bool = False) -> str | None:
    """`value` as text (None for NULL when `optional`)."""
    if value is None and optional:
        return None
    if value.__class__ is not str:
        raise BadRow(f"{what} is not text")
    return value
