"""Poll data as attend reads it: one decision for every kind and every entry point (issue 16).

A poll result is untrusted data: a command's stdout, an MCP tool's answer, a crate sensor's value, the
input of `sensors fire --input`, a test file's `result`. Everything a trigger, a template, the store
and the journal later do with it assumes the shape decided here, so no hostile value can reach them:

- **Text**: a lone surrogate (valid JSON text such as ``"\\ud800x"``, which Python's reader turns into
  an unpaired surrogate that UTF-8 cannot encode) is replaced with U+FFFD, in values and in mapping
  keys. The item is kept and notified; only the broken character is replaced.
- **Numbers**: NaN and ±Infinity are not JSON numbers; a result holding one is `malformed`. Integers
  are kept exactly, up to `MAX_DATA_INTEGER_DIGITS` digits (Python's own conversion limit); a longer
  one makes the result `malformed` (it can be neither printed nor stored).
- **Depth**: mappings and lists nested deeper than `MAX_DATA_DEPTH` make the result `malformed`
  (every later step then works on a bounded document, with no recursion limit to hit).

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
from typing import Any

from attend.bounds import MAX_DATA_DEPTH, MAX_DATA_INTEGER_DIGITS
from attend.errors import AttendError
from attend.spec.yamltext import yaml_text

__all__ = ["MalformedResult", "admit", "check_json", "read_json"]

#: A JSON escape of a surrogate code unit: the only way a parsed text can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Bits of the largest integer with MAX_DATA_INTEGER_DIGITS digits (checked without converting).
_MAX_INTEGER_BITS = int(MAX_DATA_INTEGER_DIGITS * math.log2(10))


class MalformedResult(AttendError):
    """Poll data attend refuses to evaluate (the `malformed` state), with the reason. `syntax` is True
    when the text is not JSON at all (a caller may then try another format)."""

    default_code = "malformed"
    syntax = False


def _refuse_constant(name: str) -> Any:
    raise MalformedResult(f"{name} is not a JSON number (NaN and Infinity are refused)")


def read_json(text: str) -> Any:
    """Parse `text` as a poll result under this module's rules.

    Raises:
        MalformedResult: not JSON, NaN/Infinity, an integer too long, nesting too deep.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        error = MalformedResult(f"the output is not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
        error.syntax = True
        raise error from None
    except ValueError:  # Python's integer conversion limit (the only other ValueError json.loads raises)
        raise MalformedResult(f"an integer has more than {MAX_DATA_INTEGER_DIGITS} digits") from None
    # the walk is skipped when the text cannot hold what it looks for (the common poll)
    fix_text = _SURROGATE_ESCAPE.search(text) is not None
    deep = text.count("[") + text.count("{") > MAX_DATA_DEPTH
    if fix_text or deep:
        value = _walk(value, fix_text=fix_text)
    return value


def admit(value: Any) -> Any:
    """`value` (a result built without `read_json`) under this module's rules; may repair it in place.

    Raises:
        MalformedResult: NaN/Infinity, an integer too long, nesting too deep.
    """
    return _walk(value, fix_text=True)


def check_json(value: Any) -> None:
    """Check that `value` is JSON data under this module's bounds, without changing it.

    Raises:
        MalformedResult: a value of another type (a tuple, a set, an object), a mapping key that is not a
            string, NaN/Infinity, an integer too long, nesting too deep.
    """
    _walk(value, fix_text=False, strict=True)


#: The scalar types of JSON data (bool is an int; checked by class, so subclasses are refused too).
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _clean_text(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _scalar(value: Any, fix_text: bool, strict: bool = False) -> Any:
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


def _visit(container: Any, slot: Any, value: Any, depth: int, stack: list[tuple[Any, int]], fix_text: bool,
           strict: bool) -> None:
    """One child: a container is walked later, a scalar is checked (and repaired in its slot) now."""
    if isinstance(value, (dict, list)):
        stack.append((value, depth + 1))
        return
    cleaned = _scalar(value, fix_text, strict)
    if cleaned is not value:
        container[slot] = cleaned


def _walk(root: Any, *, fix_text: bool, strict: bool = False) -> Any:
    """Check and repair every node without recursion (containers are repaired in place)."""
    if not isinstance(root, (dict, list)):
        return _scalar(root, fix_text, strict)
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DATA_DEPTH:
            raise MalformedResult(f"the result is nested deeper than {MAX_DATA_DEPTH} levels")
        if isinstance(node, dict):
            if strict and not all(k.__class__ is str for k in node):
                key = next(k for k in node if k.__class__ is not str)
                raise MalformedResult(f"a mapping key must be a string, not {type(key).__name__} {yaml_text(key, 40)}")
            if fix_text and any(_SURROGATE.search(k) for k in node if isinstance(k, str)):
                pairs = [(_clean_text(k) if isinstance(k, str) else k, v) for k, v in node.items()]
                node.clear()
                node.update(pairs)
            for k, v in node.items():
                _visit(node, k, v, depth, stack, fix_text, strict)
        else:
            for i, v in enumerate(node):
                _visit(node, i, v, depth, stack, fix_text, strict)
    return root
