"""`@record`: the part of `@dataclass` the lint path's value classes use, at a tenth of its start-up cost.

`attend compile --check` creates some twenty-five small classes (the IR, the spec model, spans and
diagnostics) before it reads a file. `@dataclass` spent about 0.7 ms on each (one `exec` per generated
method: compiling them was nearly all of it), and importing `dataclasses` pulls in `inspect`: together
a fifth of the command's start-up. `@record` compiles only `__init__` (so an instance is made as fast
as a dataclass's, which matters for a sensor with thousands of conditions), and only when the class
makes its first instance; its other methods are closures over each class's field names.

What it supports is what those classes use, with `dataclasses`' meaning: fields from the class's own
annotations in order (string annotations; `ClassVar` is not supported and is refused), defaults and
`field(default=..., default_factory=..., compare=..., hash=..., repr=...)`, `frozen` (assignment raises
`FrozenInstanceError`, an AttributeError), `kw_only`, `__slots__` always, `__eq__` over the compared
fields (only between instances of the same class), `__hash__` for frozen records (unhashable otherwise,
as with `eq=True`), `__repr__`, `__match_args__`, and pickling and copying of frozen records. A method
the class body defines itself is kept. `fields(cls_or_instance)` lists a record's fields;
`replace(record, **changes)` is a copy with some fields changed, as `dataclasses.replace`.
Inheritance between records is not supported (refused): none of attend's need it.
"""

from __future__ import annotations

import sys
from operator import attrgetter

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import NotImplementedType
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T")
    #: A generated method: it takes the instance (and the method's arguments), as any method.
    _Method = Callable[..., object]
    #: The tuple of some fields of an instance (equality and hashing compare these).
    _Key = Callable[[object], tuple[object, ...]]
else:
    def dataclass_transform(**options):
        """typing.dataclass_transform at run time: mark the decorator for introspection, change nothing."""
        def mark(func):
            func.__dataclass_transform__ = {"eq_default": True, "order_default": False, "kw_only_default": False,
                                            "frozen_default": False, "field_specifiers": (), **options}
            return func

        return mark

__all__ = ["FrozenInstanceError", "RecordField", "field", "fields", "record", "replace"]

#: A field without a default (or without a default_factory).
_MISSING = object()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class RecordField:
    """One field of a record: its name and what `field(...)` said of it."""

    __slots__ = ("compare", "default", "default_factory", "hash", "name", "repr")

    def __init__(self, default: object = _MISSING, default_factory: object = _MISSING, *, compare: bool = True,
                 hash: bool | None = None, repr: bool = True) -> None:  # noqa: A002 - dataclasses' names
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("a field takes a default or a default_factory, not both")
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.compare, self.hash, self.repr = compare, hash, repr

    @property
    def hashed(self) -> bool:
        """Whether the field takes part in `__hash__` (by default: when it takes part in equality)."""
        return self.compare if self.hash is None else self.hash

    def __repr__(self) -> str:
        return f"RecordField({self.name!r})"


def field(*, default: object = _MISSING, default_factory: object = _MISSING, compare: bool = True,
          hash: bool | None = None, repr: bool = True) -> Any:  # noqa: A002 - dataclasses' names
    """A field with options, as `dataclasses.field` (the subset `RecordField` lists). Typed `Any`, as
    `dataclasses.field` is: `x: int = field(default=0)` is an int field to a type checker."""
    return RecordField(default, default_factory, compare=compare, hash=hash, repr=repr)


def fields(item: object) -> tuple[RecordField, ...]:
    """The fields of a record class or instance, in order."""
    found: tuple[RecordField, ...] = getattr(item, "__record_fields__")  # noqa: B009 - set by _build, unknown to mypy
    return found


def replace(item: _T, /, **changes: object) -> _T:
    """A new record of `item`'s class with `changes` and `item`'s other fields, as `dataclasses.replace`
    (a name that is no field is a TypeError)."""
    for spec in fields(item):
        if spec.name not in changes:
            changes[spec.name] = getattr(item, spec.name)
    return type(item)(**changes)


if TYPE_CHECKING:  # the two ways to call it, for type checkers (typing stays unimported at run time)
    @overload
    def record(cls: type[_T], /) -> type[_T]: ...
    @overload
    def record(cls: None = None, /, *, frozen: bool = False, kw_only: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field, RecordField))
def record(cls: Any = None, /, *, frozen: bool = False, kw_only: bool = False) -> Any:
    """Make `cls` a record: generated `__init__`, `__repr__`, `__eq__` (and `__hash__` when frozen), slots.

    Use as `@record` or `@record(frozen=True, kw_only=True)`. Type checkers read it as a dataclass
    (`typing.dataclass_transform`; `field` is its field specifier).
    """
    def wrap(cls: Any) -> Any:
        return _build(cls, frozen=frozen, kw_only=kw_only)

    return wrap if cls is None else wrap(cls)


def _build(cls: type, *, frozen: bool, kw_only: bool) -> type:
    if cls.__bases__ != (object,):
        raise TypeError(f"@record {cls.__name__}: records do not inherit (bases {cls.__bases__})")
    body: dict[str, object] = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    found: list[RecordField] = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - no inspect import
        if "ClassVar" in str(annotation):
            raise TypeError(f"@record {cls.__name__}.{name}: ClassVar is not supported")
        value = body.pop(name, _MISSING)
        spec = value if isinstance(value, RecordField) else RecordField(value)
        spec.name = name
        found.append(spec)
    if not kw_only:
        defaulted = [f.default is not _MISSING or f.default_factory is not _MISSING for f in found]
        if True in defaulted and False in defaulted[defaulted.index(True):]:
            raise TypeError(f"@record {cls.__name__}: a field without a default follows one with a default")
    methods: dict[str, _Method] = {
        "__init__": _first_init(f"{cls.__module__}.{cls.__qualname__}", tuple(found), frozen=frozen, kw_only=kw_only),
        "__repr__": _repr(cls.__qualname__, tuple(f.name for f in found if f.repr)),
        "__eq__": _eq(_getter([f.name for f in found if f.compare])),
    }
    if frozen:
        methods.update(_frozen_methods(tuple(f.name for f in found), _getter([f.name for f in found if f.hashed])))
    elif "__hash__" not in body:
        body["__hash__"] = None  # eq without frozen: unhashable, as dataclasses makes it
    for name, method in methods.items():
        if name not in body or (name == "__hash__" and body[name] is None):
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            body[name] = method
    names = tuple(f.name for f in found)
    body["__slots__"] = names
    body["__match_args__"] = () if kw_only else names
    body["__record_fields__"] = tuple(found)
    return type(cls)(cls.__name__, cls.__bases__, body)


def _getter(names: list[str]) -> _Key:
    """A function from an instance to the tuple of the `names` fields (C speed: operator.attrgetter)."""
    if not names:
        return lambda self: ()
    get = attrgetter(*names)
    return (lambda self: (get(self),)) if len(names) == 1 else get


class _GeneratedSource:
    """The source of one generated `__init__`, for `linecache`'s lazy lookup (PEP 302 `get_source`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def get_source(self, name: str) -> str:
        return self.text


def _register_source(filename: str, text: str, namespace: dict[str, object]) -> None:
    """Let tracebacks, debuggers and `inspect` show the lines of generated code (attrs does the same).

    When `linecache` is loaded (a debugger, a test runner, a traceback printed), the source goes into
    its cache at once, as attrs does. Otherwise it is not imported for this (it costs the lint path
    about a millisecond): the function's globals carry a `__loader__` whose `get_source` linecache asks
    when a traceback or a debugger (both pass the frame's globals) first wants these lines.
    """
    namespace["__name__"] = filename
    namespace["__loader__"] = _GeneratedSource(text)
    linecache = sys.modules.get("linecache")
    if linecache is not None:
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)


def _first_init(qualname: str, found: tuple[RecordField, ...], *, frozen: bool, kw_only: bool) -> _Method:
    """The `__init__` a record class starts with: its first call compiles the real one (`_init`), puts it
    on the class in its place and runs it. A process compiles only the records it makes: a hook with
    nothing to hand over imports some fifteen record classes and makes none of them (about 4 ms)."""
    def __init__(self: object, *args: object, **kwargs: object) -> None:  # noqa: N807
        cls = type(self)  # records do not inherit: the class this stub was made for
        real = _init(qualname, found, frozen=frozen, kw_only=kw_only)
        real.__qualname__ = f"{cls.__qualname__}.__init__"
        setattr(cls, "__init__", real)  # noqa: B010 - a method of the class replaced
        real(self, *args, **kwargs)

    return __init__


def _init(qualname: str, found: tuple[RecordField, ...], *, frozen: bool, kw_only: bool) -> _Method:
    """`__init__` for fields `found`, compiled: an instance is made as fast as a dataclass's.

    It is the one generated method (about 0.05 ms to compile); the others are closures.
    """
    namespace: dict[str, object] = {"_MISSING": _MISSING, "_assign": object.__setattr__}
    params, lines = [], []
    for i, spec in enumerate(found):
        if spec.default_factory is not _MISSING:
            namespace[f"_factory{i}"] = spec.default_factory
            params.append(f"{spec.name}=_MISSING")
            value = f"_factory{i}() if {spec.name} is _MISSING else {spec.name}"
        elif spec.default is not _MISSING:
            namespace[f"_default{i}"] = spec.default
            params.append(f"{spec.name}=_default{i}")
            value = spec.name
        else:
            params.append(spec.name)
            value = spec.name
        lines.append(f"    _assign(self, {spec.name!r}, {value})" if frozen else f"    self.{spec.name} = {value}")
    signature = ", ".join(["self", *(["*"] if kw_only and params else []), *params])
    text = f"def __init__({signature}):\n" + "\n".join(lines or ["    pass"]) + "\n"
    filename = f"{qualname}.__init__ (generated by attend.records)"
    _register_source(filename, text, namespace)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102
    init = namespace["__init__"]
    assert callable(init)  # what the exec above defined
    return init


def _repr(qualname: str, shown: tuple[str, ...]) -> _Method:
    def __repr__(self: object) -> str:  # noqa: N807
        return f"{qualname}(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in shown) + ")"

    return __repr__


def _eq(key: _Key) -> _Method:
    def __eq__(self: object, other: object) -> bool | NotImplementedType:  # noqa: N807
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    return __eq__


def _frozen_methods(names: tuple[str, ...], hashed: _Key) -> dict[str, _Method]:
    everything = _getter(list(names))

    def __hash__(self: object) -> int:  # noqa: N807
        return hash(hashed(self))

    def __setattr__(self: object, name: str, value: object) -> None:  # noqa: N807
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self: object, name: str) -> None:  # noqa: N807
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self: object) -> tuple[object, ...]:  # noqa: N807
        return everything(self)

    def __setstate__(self: object, state: tuple[object, ...]) -> None:  # noqa: N807
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return {"__hash__": __hash__, "__setattr__": __setattr__, "__delattr__": __delattr__,
            "__getstate__": __getstate__, "__setstate__": __setstate__}
