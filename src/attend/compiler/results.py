"""Poll data as attend reads it: one decision for every kind and every entry point (issue 16).

A poll result is untrusted data: a command's stdout, an MCP tool's answer, a crate sensor's value, the
input of `sensors fire --input`, a test file's `result`. Everything a trigger, a template, the store
and the journal later do with it assumes the shape decided here, so no hostile value can reach them:

- **Text**: a lone surrogate (valid JSON text such as ``"\\ud800x"``, which Python's reader turns into
  an unpaired surrogate that UTF-8 cannot encode) is replaced with U+FFFD, in values and in mapping
  keys. The item is kept and notified; only the broken character is replaced.
- **Numbers**: NaN and ±Infinity are not JSON numbers; a result holding one, or a number past float's
  range (`1e999`, which Python's reader turns into inf), is `malformed`. Integers
  are kept exactly, up to `MAX_DATA_INTEGER_DIGITS` digits (Python's own conversion limit); a longer
  one makes the result `malformed` (it can be neither printed nor stored).
- **Depth**: mappings and lists nested deeper than `MAX_DATA_DEPTH` make the result `malformed`
  (every later step then works on a bounded document, with no recursion limit to hit).
- **Size** (issue 28, item 20): a text read under a byte cap (a command's `max_output`) may hold at most
  one JSON value or key per `DATA_BYTES_PER_VALUE` bytes of that cap, counted in the text before it is
  parsed; more is `malformed`. Parsed, a value costs up to about 65 bytes whatever its shape (`[{},{}]`
  is 24 times its text), so the parsed result stays within about 8 times the cap (docs/runtime.md,
  "Memory per poll").

`read_json(text)` parses a text with these rules; `admit(value)` applies them to a value that was
built some other way. Both raise `MalformedResult` with the reason, which callers turn into the
sensor's `malformed` state, a `sensors fire` error or a test-file error. `check_json(value)` is the
public API's entry check (`CompiledTrigger.step`): the same bounds, nothing repaired, and only JSON
values (mappings with string keys, lists, strings, numbers, booleans, null), so what a trigger keeps of
a result is state that JSON can store and read back unchanged.
"""

from __future__ import annotations

import json
import math
import re

from attend.bounds import DATA_BYTES_PER_VALUE, MAX_DATA_DEPTH, MAX_DATA_INTEGER_DIGITS
from attend.errors import AttendError
from attend.spec.yamltext import yaml_text

TYPE_CHECKING = False  # typing stays unimported at run time (the hooks' start-up)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from attend.vocab import JSON

__all__ = ["MalformedResult", "admit", "check_json", "read_json"]

#: A JSON escape of a surrogate code unit: the only way a parsed text can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A JSON string once its escaped quotes are blanked out (to count the punctuation outside strings).
_PLAIN_STRING = re.compile(r'"[^"]*"')
#: Characters of text counted at a time (the pieces a regex substitution makes stay small).
_COUNT_CHUNK = 1 << 20
#: Bits of the largest integer with MAX_DATA_INTEGER_DIGITS digits (checked without converting).
_MAX_INTEGER_BITS = int(MAX_DATA_INTEGER_DIGITS * math.log2(10))


class MalformedResult(AttendError):
    """Poll data attend refuses to evaluate (the `malformed` state), with the reason. `syntax` is True
    when the text is not JSON at all (a caller may then try another format)."""

    default_code = "malformed"
    syntax = False


def _refuse_constant(name: str) -> Any:
    raise MalformedResult(f"{name} is not a JSON number (NaN and Infinity are refused)")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent, refused past float's range (`1e999` reads as inf)."""
    value = float(text)
    if math.isinf(value):
        raise MalformedResult(f"{text[:40]} is past a float's range (it would read as Infinity)")
    return value


def read_json(text: str, *, cap: int | None = None, cap_name: str = "max_output") -> JSON:
    """Parse `text` as a poll result under this module's rules.

    Args:
        text: the JSON text.
        cap: the byte cap the text was read under (a command's `max_output`): the text may hold one JSON
            value or key per `DATA_BYTES_PER_VALUE` bytes of it, counted before parsing as 1 + the `[`,
            `{`, `,` and `:` outside strings (an empty list or mapping counts one more). None: no count
            (a text bounded otherwise: a store row, a peers file).
        cap_name: what the cap is called in the message (`max_output`).

    Raises:
        MalformedResult: not JSON, NaN/Infinity, an integer too long, nesting too deep, too many values.
    """
    if cap is not None:
        _check_values(text, cap, cap_name)
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except MalformedResult:
        raise
    except RecursionError:
        raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        error = MalformedResult(f"the output is not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
        error.syntax = True
        raise error from None
    except ValueError:  # Python's integer conversion limit (the only other ValueError json.loads raises)
        raise MalformedResult(f"an integer has more than {MAX_DATA_INTEGER_DIGITS} digits") from None
    # Each check runs only when the text can hold what it looks for (the common poll skips both): a lone
    # surrogate needs the walk over every value, depth only over the containers.
    parsed: JSON = value  # what json.loads makes of a text is JSON data
    if _SURROGATE_ESCAPE.search(text) is not None:
        return _admitted(parsed)
    if text.count("[") + text.count("{") > MAX_DATA_DEPTH:
        _check_depth(parsed)
    return parsed


def _punctuation(text: str) -> int:
    return text.count("[") + text.count("{") + text.count(",") + text.count(":")


def _check_values(text: str, cap: int, cap_name: str) -> None:
    """Refuse a text holding more values and keys than its byte cap allows, before it is parsed."""
    max_values = max(1, cap // DATA_BYTES_PER_VALUE)
    if 1 + _punctuation(text) <= max_values:
        return  # even with the punctuation inside strings counted it is within the budget (the usual case)
    values = _count_values(text)
    if values > max_values:
        raise MalformedResult(
            f"the output holds {values:,} JSON values and keys: a {cap_name} of {cap:,} bytes reads at most "
            f"{max_values:,} (one per {DATA_BYTES_PER_VALUE} bytes, which bounds a poll's memory)"
        )


def _count_values(text: str) -> int:
    """1 + the `[`, `{`, `,` and `:` outside strings, counted a chunk at a time (memory stays bounded)."""
    if "\\" in text:  # blank escapes out (same length): every quote left opens or closes a string
        text = text.replace("\\\\", "__").replace('\\"', "__")
    values, start, n = 1, 0, len(text)
    while start < n:
        end = text.find('"', min(start + _COUNT_CHUNK, n))  # `start` is outside a string; so is a chunk's end
        if end < 0:
            end = n
        elif text.count('"', start, end) % 2:
            end += 1  # that quote closes a string begun in the chunk
        values += _punctuation(_PLAIN_STRING.sub("", text[start:end]))
        start = end
    return values


def _check_depth(root: Any) -> None:
    """Refuse mappings and lists nested deeper than MAX_DATA_DEPTH (containers only, one level at a time)."""
    level = [root] if isinstance(root, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DATA_DEPTH:
            raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels")
        level = [child for node in level for child in (node.values() if node.__class__ is dict else node)
                 if child.__class__ is dict or child.__class__ is list]


def admit(value: object) -> JSON:
    """`value` (a result built without `read_json`) under this module's rules; may repair it in place.

    Raises:
        MalformedResult: NaN/Infinity, an integer too long, nesting too deep.
    """
    return _admitted(value)


def _admitted(value: object) -> JSON:
    """`value` walked and repaired: JSON data from here on (what is not, the walk refused)."""
    walked: JSON = _walk(value, fix_text=True)
    return walked


def check_json(value: object) -> None:
    """Check that `value` is JSON data under this module's bounds, without changing it.

    Raises:
        MalformedResult: a value of another type (a tuple, a set, an object), a mapping key that is not a
            string, NaN/Infinity, an integer too long, nesting too deep.
    """
    # One level at a time, with a string (the common value) passed by one class test and no call: `step` checks
    # its result and its state on every call, and the general walk cost it 20 times the evaluation.
    level = [value]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DATA_DEPTH:
            raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels")
        deeper: list[Any] = []
        for node in level:
            children: Iterable[object]
            if isinstance(node, dict):
                for key in node:
                    if key.__class__ is not str:
                        raise MalformedResult(f"a mapping key must be a string, not {type(key).__name__} "
                                              f"{yaml_text(key, 40)}")
                children = node.values()
            elif isinstance(node, list):
                children = node
            else:
                _scalar(node, False, True)
                continue
            for child in children:
                kind = child.__class__
                if kind is str:
                    continue
                if kind is dict or kind is list or isinstance(child, (dict, list)):
                    deeper.append(child)
                else:
                    _scalar(child, False, True)
        level = deeper


#: The scalar types of JSON data (bool is an int; checked by class, so subclasses are refused too).
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _clean_text(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _scalar(value: object, fix_text: bool, strict: bool = False) -> object:
    """A scalar as admitted (strings repaired, numbers checked; with `strict`, JSON types only)."""
    if strict and value.__class__ not in _JSON_SCALARS:
        raise MalformedResult(f"a {type(value).__name__} is not a JSON value")
    if value.__class__ is str:
        return _clean_text(value) if fix_text else value
    if value.__class__ is float and not math.isfinite(value):
        raise MalformedResult(f"{yaml_text(value)} is not a JSON number")
    if value.__class__ is int and value.bit_length() > _MAX_INTEGER_BITS:
        raise MalformedResult(f"an integer has more than {MAX_DATA_INTEGER_DIGITS} digits")
    return value


def _visit(container: Any, slot: Any, value: Any, depth: int, stack: list[tuple[Any, int]], fix_text: bool) -> None:
    """One child: a container is walked later, a scalar is checked (and repaired in its slot) now."""
    if isinstance(value, (dict, list)):
        stack.append((value, depth + 1))
        return
    cleaned = _scalar(value, fix_text)
    if cleaned is not value:
        container[slot] = cleaned


def _walk(root: object, *, fix_text: bool) -> Any:
    """Check and repair every node without recursion (containers are repaired in place)."""
    if not isinstance(root, (dict, list)):
        return _scalar(root, fix_text)
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DATA_DEPTH:
            raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels")
        if isinstance(node, dict):
            if fix_text and any(_SURROGATE.search(k) for k in node if isinstance(k, str)):
                pairs = [(_clean_text(k) if isinstance(k, str) else k, v) for k, v in node.items()]
                node.clear()
                node.update(pairs)
            for k, v in node.items():
                _visit(node, k, v, depth, stack, fix_text)
        else:
            for i, v in enumerate(node):
                _visit(node, i, v, depth, stack, fix_text)
    return root
