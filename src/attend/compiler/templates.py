"""Description templates → rendering closures (DESIGN.md, Trigger semantics: `description`).

A template's literal parts and field references become one closure taking the item, its key and its
previous value. `{session}` is the item's `session` field, or else, in a `scope: session` sensor, the
session it is evaluated for (`FOCUS_SESSION`). A reference to a field the item lacks renders as the empty string and warns
(`poll` shows it); `{key}` of a keyless trigger and `{previous}` of an item that had none render empty
without a warning, since nothing is wrong with the item. Each reference renders at most
`ops.RENDER_LIMIT` characters and the description as a whole is cut there too (with "…"), so a fire
costs at most milliseconds whatever the item holds (bounds.MAX_DESCRIPTION_CHARS). The description is
redacted as it is made (`attend.redact.shorten`: no credential, and no cut leaves a secret's prefix), so
the journal, the history and every line hold what the one redaction policy lets through.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from attend import ir
from attend.compiler import ops
from attend.redact import shorten

__all__ = ["FOCUS_SESSION", "Render", "compile_template"]

#: The session a `scope: session` sensor is being evaluated for (`CompiledSensor.step(session=)` sets it
#: for the step's duration): `{session}` renders it when the item has no `session` field of its own.
FOCUS_SESSION: ContextVar[str | None] = ContextVar("FOCUS_SESSION", default=None)

Warn = Callable[[str], None]
#: A compiled template: (item, key, previous, warn) → text. `key` is the item's key value (None for a
#: keyless trigger); `previous` is MISSING when there is none.
Render = Callable[[object, object, object, Warn], str]


def _part(part: ir.TemplatePart) -> Render:
    render, get_dotted, missing, limit = ops.render_value, ops.get_dotted, ops.MISSING, ops.RENDER_LIMIT
    if isinstance(part, ir.Literal_):
        text = part.text
        return lambda item, key, previous, warn: text
    fields, shown = part.fields, str(part)
    if part.root == "value":
        return lambda item, key, previous, warn: render(item)
    if part.root == "key":
        return lambda item, key, previous, warn: "" if key is None else render(key)
    if part.root == "previous" and len(fields) == 1:
        (name,) = fields

        def previous_name(item: object, key: object, previous: object, warn: Warn) -> str:
            # `{previous.state}` of a mapping, the common case, without get_dotted's walk
            if previous is missing:
                return ""
            value = previous.get(name, missing) if previous.__class__ is dict else get_dotted(previous, fields)
            if value.__class__ is str and len(value) <= limit:
                return value
            if value is missing:
                warn(f"description: {shown} is missing from the previous value; rendered empty")
            return render(value)

        return previous_name
    if part.root == "previous":

        def previous_field(item: object, key: object, previous: object, warn: Warn) -> str:
            if previous is missing:
                return ""
            value = get_dotted(previous, fields) if fields else previous
            if value is missing:
                warn(f"description: {shown} is missing from the previous value; rendered empty")
            return render(value)

        return previous_field

    if fields == ("session",):

        def session_name(item: object, key: object, previous: object, warn: Warn) -> str:
            # the item's own `session` (the peers sensor's), else the session a scope: session poll is for
            value = item.get("session", missing) if item.__class__ is dict else get_dotted(item, fields)
            if value is missing:
                value = FOCUS_SESSION.get()
                if value is None:
                    warn(f"description: {shown} is missing from the item; rendered empty")
                    return ""
            return value if value.__class__ is str and len(value) <= limit else render(value)

        return session_name
    if len(fields) == 1:
        (name,) = fields

        def item_name(item: object, key: object, previous: object, warn: Warn) -> str:
            # `{id}` of a mapping item, the common case, without get_dotted's walk
            value = item.get(name, missing) if item.__class__ is dict else get_dotted(item, fields)
            if value.__class__ is str and len(value) <= limit:
                return value
            if value is missing:
                warn(f"description: {shown} is missing from the item; rendered empty")
                return ""
            return render(value)

        return item_name

    def item_field(item: object, key: object, previous: object, warn: Warn) -> str:
        value = get_dotted(item, fields)
        if value is missing:
            warn(f"description: {shown} is missing from the item; rendered empty")
            return ""
        return render(value)

    return item_field


def compile_template(template: ir.Template) -> Render:
    """The closure rendering `template` for one fired item (at most `ops.RENDER_LIMIT` characters)."""
    render = _compile_template(template)
    limit = ops.RENDER_LIMIT

    def capped(item: object, key: object, previous: object, warn: Warn) -> str:
        # Redacted here, where the fire's text is made: the journal, the history and every line hold no
        # credential, and the cut never leaves a secret's prefix (attend.redact).
        return shorten(render(item, key, previous, warn), limit)

    return capped


def _compile_template(template: ir.Template) -> Render:
    parts = tuple(_part(p) for p in template.parts)
    if all(isinstance(p, ir.Literal_) for p in template.parts):
        text = str("".join(p.text for p in template.parts if isinstance(p, ir.Literal_)))
        return lambda item, key, previous, warn: text

    # The literals go into a format string and only the references are called: one call per
    # reference instead of one per part, and no list built per fire for the usual 1-3 references.
    fmt = "".join(p.text.replace("{", "{{").replace("}", "}}") if isinstance(p, ir.Literal_) else "{}"
                  for p in template.parts)
    calls = tuple(f for f, p in zip(parts, template.parts, strict=True) if not isinstance(p, ir.Literal_))
    fill = fmt.format
    if len(calls) == 1:
        (a,) = calls
        return lambda item, key, previous, warn: fill(a(item, key, previous, warn))
    if len(calls) == 2:
        a, b = calls
        return lambda item, key, previous, warn: fill(a(item, key, previous, warn), b(item, key, previous, warn))
    if len(calls) == 3:
        a, b, c = calls
        return lambda item, key, previous, warn: fill(
            a(item, key, previous, warn), b(item, key, previous, warn), c(item, key, previous, warn))

    def render(item: object, key: object, previous: object, warn: Warn) -> str:
        return fill(*[f(item, key, previous, warn) for f in calls])

    return render
