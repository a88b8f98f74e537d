"""A user's YAML value as a message shows it: in YAML's words, not Python's.

`repr` would say `True`, `None` and `inf` where the file says `true`, `null` and `.inf`. Strings keep
their quotes (so `'5 minutes'` reads as the string it is) and every value is cut short: a message never
quotes a whole hostile value.
"""

from __future__ import annotations

__all__ = ["yaml_text"]

#: Integers with more digits than this are shown by their length.
_LONG_DIGITS = 30


def yaml_text(value: object, limit: int = 60) -> str:
    """`value` as YAML flow text (`true`, `null`, `.inf`, `'text'`, `[1, true]`), at most `limit` characters."""
    text = _flow(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flow(value: object, budget: int) -> str:
    """`value` as flow text; containers stop adding items once `budget` characters are written."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 10**_LONG_DIGITS else f"a number of {_digits(value)} digits"
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, str):
        return repr(value[: budget + 1])
    if isinstance(value, (list, tuple, dict)):
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        items = (f"{_flow(k, budget)}: {_flow(v, budget)}" for k, v in value.items()) if isinstance(value, dict) \
            else (_flow(item, budget) for item in value)
        parts: list[str] = []
        written = 0
        for item in items:
            parts.append(item)
            written += len(item) + 2
            if written > budget:
                break
        return opening + ", ".join(parts) + closing
    return repr(value)[: budget + 1]


def _digits(value: int) -> str:
    try:
        return f"{len(str(abs(value))):,}"
    except ValueError:  # past Python's int-to-str limit (4,300 digits)
        return f"about {int(abs(value).bit_length() * 0.30103):,}"
