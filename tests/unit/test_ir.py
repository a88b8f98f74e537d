"""IR nodes: spans stay out of equality, and str() gives the canonical source form."""

from attend import ir
from attend.errors import Span


def test_a_span_never_takes_part_in_equality_or_hashing():
    a = ir.NameSelector(name="x", span=Span("a", 1, 1))
    b = ir.NameSelector(name="x", span=Span("b", 9, 9))
    assert a == b and hash(a) == hash(b)


def test_a_path_prints_in_canonical_form():
    path = ir.Path(
        segments=(
            ir.ChildSegment(selector=ir.NameSelector(name="items")),
            ir.ChildSegment(selector=ir.WildcardSelector()),
            ir.ChildSegment(selector=ir.NameSelector(name="odd name")),
            ir.ChildSegment(selector=ir.IndexSelector(index=-1)),
            ir.DescendantSegment(selector=ir.NameSelector(name="id")),
            ir.DescendantSegment(selector=ir.WildcardSelector()),
        )
    )
    assert str(path) == "$.items[*]['odd name'][-1]..id..*"


def test_a_template_escapes_literal_braces_and_prints_references():
    template = ir.Template(
        parts=(
            ir.Literal_(text="{x} "),
            ir.FieldRef(root="item", fields=("a", "b")),
            ir.Literal_(text=" was "),
            ir.FieldRef(root="previous", fields=("a",)),
            ir.FieldRef(root="value"),
        )
    )
    assert str(template) == "{{x}} {a.b} was {previous.a}{value}"


def test_a_member_name_with_a_trailing_newline_is_shown_quoted() -> None:
    assert str(ir.NameSelector(name="a")) == ".a"
    assert str(ir.NameSelector(name="a\n")) != ".a\n"  # `$` matched before the final newline
