"""`attend.records.record` means what `@dataclass` means for the classes that use it."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError as DataclassFrozen
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import pytest

from attend.errors import Diagnostic, Span
from attend.ir import NameSelector, Trigger
from attend.records import FrozenInstanceError, field, fields, record


@record(frozen=True, kw_only=True)
class Node:
    name: str
    tags: tuple[str, ...] = ()
    extra: tuple[int, ...] = field(default_factory=tuple)
    span: Any = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return f"<{self.name}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class DcNode:
    name: str
    tags: tuple[str, ...] = ()
    extra: tuple[int, ...] = dc_field(default_factory=tuple)
    span: Any = dc_field(default=None, compare=False, hash=False, repr=False)


@record
class Mutable:
    a: int
    b: int = 2
    seen: list[int] = field(default_factory=list)


def test_equality_hash_and_repr_leave_out_fields_marked_compare_false_as_dataclasses_does() -> None:
    one, two = Node(name="x", tags=("a",), span=1), Node(name="x", tags=("a",), span=2)
    assert one == two and hash(one) == hash(two) == hash(DcNode(name="x", tags=("a",), span=3))
    assert repr(one) == "Node(name='x', tags=('a',), extra=())"
    assert repr(DcNode(name="x", tags=("a",))).replace("DcNode", "Node") == repr(one)
    assert one != Node(name="y", tags=("a",)) and one != DcNode(name="x", tags=("a",))
    assert str(one) == "<x>"  # a method of the class body is kept


def test_a_frozen_record_refuses_assignment_and_deletion_like_a_frozen_dataclass() -> None:
    node = Node(name="x")
    for change in (lambda: setattr(node, "name", "y"), lambda: delattr(node, "name"),
                   lambda: setattr(node, "other", 1)):
        with pytest.raises(FrozenInstanceError):
            change()
    assert issubclass(FrozenInstanceError, AttributeError) and issubclass(DataclassFrozen, AttributeError)
    assert not hasattr(node, "__dict__")  # slots, as slots=True


def test_arguments_are_checked_as_a_generated_init_checks_them() -> None:
    with pytest.raises(TypeError, match="positional"):
        Node("x")
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'name'"):
        Node()
    with pytest.raises(TypeError, match="unexpected keyword argument 'nme'"):
        Node(name="x", nme="y")
    with pytest.raises(TypeError, match="multiple values"):
        Mutable(1, a=1)
    with pytest.raises(TypeError, match="positional arguments but 5 were given"):
        Mutable(1, 2, [], 4)
    assert Mutable(1) == Mutable(a=1, b=2) and Mutable(1, 3).b == 3


def test_a_default_factory_gives_each_instance_its_own_value() -> None:
    first, second = Mutable(1), Mutable(2)
    first.seen.append(1)
    assert second.seen == []


def test_a_mutable_record_is_assignable_and_unhashable() -> None:
    item = Mutable(1)
    item.b = 5
    assert item == Mutable(1, 5, [])
    with pytest.raises(TypeError):
        hash(item)
    with pytest.raises(AttributeError):
        item.c = 1  # slots


def test_frozen_records_pickle_and_copy_whole() -> None:
    node = Node(name="x", tags=("a",), extra=(1,), span=Span(line=3))
    for clone in (pickle.loads(pickle.dumps(node)), copy.copy(node), copy.deepcopy(node)):
        assert clone == node and clone.span == Span(line=3) and clone.extra == (1,)
    diagnostic = Diagnostic("f.yaml", 1, 2, "code", "message", detail="d")
    assert pickle.loads(pickle.dumps(diagnostic)) == diagnostic


def test_fields_lists_a_records_fields_in_order() -> None:
    assert [f.name for f in fields(Node)] == ["name", "tags", "extra", "span"]
    assert [f.name for f in fields(NameSelector(name="a"))] == ["name", "span"]
    assert Mutable.__match_args__ == ("a", "b", "seen") and Node.__match_args__ == ()
    assert "description" in [f.name for f in fields(Trigger)]


def test_what_records_do_not_support_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="follows one with a default"):
        @record
        class Bad:
            a: int = 1
            b: int

    with pytest.raises(TypeError, match="do not inherit"):
        @record
        class Child(Mutable):  # type: ignore[misc]
            c: int = 0


GENERATED_SOURCE_PROBE = """
import sys
from attend.records import field, record
assert "linecache" not in sys.modules  # attend does not import it for records

def refuse():
    raise ValueError("no default")

@record(frozen=True, kw_only=True)
class Lazy:
    a: int
    b: list = field(default_factory=refuse)

try:
    Lazy(a=1)
except ValueError:
    import traceback
    print(traceback.format_exc().splitlines()[-5:-3])

import inspect  # linecache is loaded now: the source is registered at once, as attrs does
@record
class Eager:
    x: int
    y: int = 2
Eager(1)  # __init__ is compiled when the class makes its first instance
print(inspect.getsource(Eager.__init__).splitlines())
"""


def test_a_generated_init_shows_its_own_lines_in_a_traceback_and_to_inspect() -> None:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", GENERATED_SOURCE_PROBE], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    frame, line = eval(run.stdout.splitlines()[0])  # noqa: S307 - our own probe's printed list
    assert frame.startswith('  File "__main__.Lazy.__init__ (generated by attend.records)", line 3, in __init__')
    assert line.strip() == "_assign(self, 'b', _factory1() if b is _MISSING else b)"
    assert eval(run.stdout.splitlines()[1]) == ["def __init__(self, x, y=_default1):", "    self.x = x",  # noqa: S307
                                                "    self.y = y"]


def test_record_is_a_dataclass_transform_with_field_as_its_field_specifier() -> None:
    options = record.__dataclass_transform__  # what typing.dataclass_transform records on the decorator
    assert options["field_specifiers"] == (field, type(field())) and options["eq_default"] is True


def test_a_record_compiles_its_init_only_when_it_makes_its_first_instance() -> None:
    @record(frozen=True)
    class Point:
        x: int
        y: int = 0

    stub = Point.__init__
    assert Point(1) == Point(1, 0) and Point.__init__ is not stub  # the first instance put the real one in place
    compiled = Point.__init__
    assert Point(2, 3).y == 3 and Point.__init__ is compiled  # compiled once
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()
