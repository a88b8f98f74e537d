"""Description templates → rendering closures (DESIGN.md, Trigger semantics: `description`).

A template's literal parts and field references become one closure taking the item, its key and its
previous value. A reference to a field the item lacks renders as the empty string and warns
(`poll` shows it); `{key}` of a keyless trigger and `{previous}` of an item that had none render empty
without a warning, since nothing is wrong with the item.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attend import ir
from attend.compiler import ops

__all__ = ["Render", "compile_template"]

Warn = Callable[[str], None]
#: A compiled template: (item, key, previous, warn) → text. `previous` is MISSING when there is none.
Render = Callable[[Any, "str | None", Any, Warn], str]


def _part(part: ir.TemplatePart) -> Callable[[Any, Any, Any, Warn], str]:
    render, get_dotted, missing = ops.render_value, ops.get_dotted, ops.MISSING
    if isinstance(part, ir.Literal_):
        text = part.text
        return lambda item, key, previous, warn: text
    fields, shown = part.fields, str(part)
    if part.root == "value":
        return lambda item, key, previous, warn: render(item)
    if part.root == "key":
        return lambda item, key, previous, warn: "" if key is None else key
    if part.root == "previous":

        def previous_field(item: Any, key: Any, previous: Any, warn: Warn) -> str:
            if previous is missing:
                return ""
            value = get_dotted(previous, fields) if fields else previous
            if value is missing:
                warn(f"description: {shown} is missing from the previous value; rendered empty")
            return render(value)

        return previous_field

    def item_field(item: Any, key: Any, previous: Any, warn: Warn) -> str:
        value = get_dotted(item, fields)
        if value is missing:
            warn(f"description: {shown} is missing from the item; rendered empty")
            return ""
        return render(value)

    return item_field


def compile_template(template: ir.Template) -> Render:
    """The closure rendering `template` for one fired item."""
    parts = tuple(_part(p) for p in template.parts)
    if all(isinstance(p, ir.Literal_) for p in template.parts):
        text = str("".join(p.text for p in template.parts if isinstance(p, ir.Literal_)))
        return lambda item, key, previous, warn: text

    def render(item: Any, key: str | None, previous: Any, warn: Warn) -> str:
        return "".join([p(item, key, previous, warn) for p in parts])

    return render
