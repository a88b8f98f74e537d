"""Round-trip editing of one YAML file: change one key, keep every other byte (ADR-403 §5).

`settings set` and `unset` edit files people also edit by hand, so an edit must keep their comments, key
order, quoting and indentation. ruamel.yaml's round-trip mode is the well-kept library for that; pyyaml
stays the loader everywhere else. ruamel re-indents a whole document to one style, so before editing we
find the indentation style that reproduces the file exactly (`detect_style`) and dump with that one.

Values come in as plain Python data (parsed the way the spec's loader parses, YAML 1.2 core schema);
`to_node` turns them into ruamel nodes that dump in a way the loader reads back to the same data (a
string that the loader would read as a boolean or a number is quoted).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

from attend.spec.loading import parse_yaml

__all__ = [
    "DocumentError", "EditableDocument", "IndentStyle", "PathIntoScalar", "WouldNotReadBack", "detect_style",
    "key_node", "same_value", "to_node", "yaml_kind",
]

#: Wide enough that ruamel never re-wraps a long line (sensor descriptions, argv URLs).
LINE_WIDTH = 4096


@dataclass(frozen=True, slots=True)
class IndentStyle:
    """ruamel's three indentation parameters (mapping, sequence, dash offset) and the `---` marker."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0
    explicit_start: bool = False


#: The styles tried, most common first: ruamel's default, block sequences indented under their key, and
#: four-space files.
CANDIDATE_STYLES: tuple[tuple[int, int, int], ...] = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 4, 2), (4, 6, 4), (3, 3, 0))


def yaml_kind(value: object) -> str:
    """What `value` is in YAML words, with an article ("a list"), for messages a user reads.

    ruamel's node classes (CommentedSeq, ScalarFloat, ...) mean nothing to someone editing a file.
    """
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


class DocumentError(ValueError):
    """A file that cannot be edited: not YAML, or not a mapping at the top."""


class PathIntoScalar(DocumentError):
    """A key path that goes through a value that is not a mapping."""

    def __init__(self, prefix: tuple[str, ...], value: object) -> None:
        super().__init__(f"{'.'.join(prefix) or 'the document'} holds {yaml_kind(value)}, not a mapping")
        self.prefix = prefix
        self.value = value


class WouldNotReadBack(DocumentError):
    """An edit whose text the loader would not read back as the value intended: nothing may be written."""

    def __init__(self, path: tuple[str, ...], value: object, found: str) -> None:
        super().__init__(f"{'.'.join(path)}: the file as written would not read back as the value given "
                         f"({found}); nothing was written")
        self.path = path
        self.value = value


_MISSING = object()


def same_value(a: object, b: object) -> bool:
    """Whether two plain values are the same data, types included (`1`, `1.0` and `true` differ)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _yaml(style: IndentStyle) -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = LINE_WIDTH
    y.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
    y.explicit_start = style.explicit_start
    return y


def _dump(y: YAML, data: object) -> str:
    out = io.StringIO()
    y.dump(data, out)
    return out.getvalue()


def detect_style(text: str, data: object) -> IndentStyle:
    """The indentation style whose dump of `data` reproduces `text` (or comes closest to it)."""
    explicit = text.lstrip().startswith("---")
    best: tuple[int, IndentStyle] | None = None
    for mapping, sequence, offset in CANDIDATE_STYLES:
        style = IndentStyle(mapping, sequence, offset, explicit)
        try:
            dumped = _dump(_yaml(style), data)
        except RuamelError:  # pragma: no cover - a style ruamel rejects for this document
            continue
        if dumped == text:
            return style
        differing = sum(a != b for a, b in zip(dumped.splitlines(), text.splitlines(), strict=False))
        if best is None or differing < best[0]:
            best = (differing, style)
    return best[1] if best else IndentStyle(explicit_start=explicit)


def _reads_back_as_itself(text: str) -> bool:
    """Whether the loader reads `text`, written plain, back as the same string, in every place it can go.

    A plain scalar that reads fine on its own can break inside `[…]` or `{…}` (`:0` does), so it is tried
    as a block value, a flow item and a flow key.
    """
    for document, expected in ((text, text), (f"[{text}]", [text]), (f"{{{text}: 0}}", {text: 0})):
        parsed = parse_yaml(document, "<value>")
        if parsed.diagnostics or parsed.data != expected:
            return False
    return True


def key_node(key: object) -> object:
    """A mapping key as ruamel should write it: double-quoted (escaped) when it holds unprintable characters,
    single-quoted when the loader would not read it back plain as the same string."""
    if isinstance(key, str) and not key.isprintable():
        return DoubleQuotedScalarString(key)
    if isinstance(key, str) and "\n" not in key and not _reads_back_as_itself(key):
        return SingleQuotedScalarString(key)
    return key


def to_node(value: object, *, flow: bool = False) -> object:
    """Plain data as ruamel round-trip nodes; `flow` keeps `{…}` / `[…]` written inline."""
    if isinstance(value, Mapping):
        node = CommentedMap()
        for k, v in value.items():
            node[key_node(k)] = to_node(v, flow=flow)
        if flow:
            node.fa.set_flow_style()
        return node
    if isinstance(value, list):
        seq = CommentedSeq(to_node(v, flow=flow) for v in value)
        if flow:
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and not value.replace("\n", "").isprintable():
        return DoubleQuotedScalarString(value)  # escapes: control characters, NEL, line separators
    if isinstance(value, str) and "\n" not in value and not _reads_back_as_itself(value):
        return SingleQuotedScalarString(value)
    return value


class EditableDocument:
    """One YAML mapping document held for editing; `text()` gives it back with untouched parts intact."""

    def __init__(self, text: str | None = None) -> None:
        """Parse `text` (None or blank: a new, empty document).

        Raises:
            DocumentError: when the text is not YAML or its top level is not a mapping.
        """
        self.original = text or ""
        self._prefix = ""
        try:
            loaded = _yaml(IndentStyle()).load(self.original) if self.original.strip() else None
        except RuamelError as exc:
            raise DocumentError(f"not valid YAML: {exc}") from None
        if loaded is None:
            # Blank or only comments: keep what is there and add the new keys below it.
            self._prefix = self.original if self.original.endswith("\n") or not self.original else self.original + "\n"
            loaded = CommentedMap()
        if not isinstance(loaded, CommentedMap):
            raise DocumentError(f"the document is {yaml_kind(loaded)}, not a mapping")
        self.data: CommentedMap = loaded
        self.style = detect_style(self.original, loaded) if not self._prefix and self.original else IndentStyle()

    def _parent(self, path: tuple[str, ...], *, create: bool) -> CommentedMap | None:
        node: object = self.data
        for depth, segment in enumerate(path):
            if not isinstance(node, CommentedMap):
                raise PathIntoScalar(path[:depth], node)
            if segment not in node:
                if not create:
                    return None
                node[key_node(segment)] = CommentedMap()
            node = node[segment]
        if not isinstance(node, CommentedMap):
            raise PathIntoScalar(path, node)
        return node

    def has(self, path: tuple[str, ...]) -> bool:
        """Whether the document sets `path` (False when a prefix holds a scalar or a list)."""
        try:
            parent = self._parent(path[:-1], create=False)
        except PathIntoScalar:
            return False
        return parent is not None and path[-1] in parent

    def set(self, path: tuple[str, ...], value: object, *, flow: bool = False) -> None:
        """Set `path` to plain `value`, creating missing parent mappings at the end of their parent.

        Raises:
            PathIntoScalar: when a prefix of `path` holds a scalar or a list.
            WouldNotReadBack: when the loader would not read the edited text back with `value` at `path`
                (the document must then be discarded, not written).
        """
        parent = self._parent(path[:-1], create=True)
        assert parent is not None
        parent[path[-1] if path[-1] in parent else key_node(path[-1])] = to_node(value, flow=flow)
        self._check_reads_back(path, value)

    def _check_reads_back(self, path: tuple[str, ...], value: object) -> None:
        """Read the edited text with the loader: `path` must hold exactly `value` (issue 14, item 15).

        The writer (ruamel) and the loader (pyyaml) are two YAML implementations; where they disagree on
        some text, the file would be written and then not load, or load as another value.
        """
        parsed = parse_yaml(self.text(), "<document>")
        errors = [d for d in parsed.diagnostics if str(d.severity) == "error"]
        if errors:
            raise WouldNotReadBack(path, value, f"line {errors[0].line}: {errors[0].message}")
        node: object = parsed.data
        for segment in path:
            node = node.get(segment, _MISSING) if isinstance(node, dict) else _MISSING
        if node is _MISSING or not same_value(node, value):
            raise WouldNotReadBack(path, value, "it reads as " + ("nothing" if node is _MISSING else repr(node)))

    def delete(self, path: tuple[str, ...]) -> bool:
        """Remove `path` and every parent mapping it leaves empty; False when it was not set."""
        try:
            parent = self._parent(path[:-1], create=False)
        except PathIntoScalar:
            return False
        if parent is None or path[-1] not in parent:
            return False
        del parent[path[-1]]
        for depth in range(len(path) - 1, 0, -1):
            holder = self._parent(path[: depth - 1], create=False)
            if holder is None or holder.get(path[depth - 1]) != {}:
                break
            del holder[path[depth - 1]]
        return True

    def is_empty(self) -> bool:
        """Whether no key is left."""
        return len(self.data) == 0

    def keys(self) -> list[str]:
        """The top-level keys, in file order."""
        return [str(k) for k in self.data]

    def text(self) -> str:
        """The document as text: the original bytes wherever the edit did not reach."""
        if not self.data:
            return self._prefix
        return self._prefix + _dump(_yaml(self.style), self.data)

    def plain(self) -> Any:
        """The document as plain data, read back the way the loader will read it."""
        return parse_yaml(self.text(), "<document>").data or {}
