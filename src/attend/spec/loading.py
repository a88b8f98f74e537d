"""Reading one YAML file safely, keeping the line and column of every key and value (ADR-403 §2).

PyYAML's loaders silently keep the last of two equal keys, resolve `on:` to True (YAML 1.1), expand
aliases without bound and recurse once per nesting level. So this module reads the parser's *event
stream* (libyaml's CParser when available) and builds plain Python data itself, iteratively:

- bytes first: a file over `MAX_FILE_BYTES`, a NUL byte or invalid UTF-8 is refused before parsing;
- nesting deeper than `MAX_DEPTH` is refused while the events arrive (no recursion on input depth);
- aliases are counted as the nodes they would materialise, refused past `MAX_NODES` (alias bombs);
- a repeated key is an error at the second key, naming the first's line;
- only the YAML core tags (str, int, float, bool, null, seq, map) are accepted; scalars resolve by the
  YAML 1.2 core schema, so `on`, `yes` and `no` stay strings and keys are always their own text;
- an integer literal longer than `MAX_INTEGER_DIGITS` digits is refused at its position (Python would
  raise converting one past 4,300 digits, and no field needs one);
- every key path gets an `Origin` (value and key position, scalar style).

Every problem becomes a positioned `Diagnostic`; nothing here raises for bad input.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any

    from attend.vocab import JSON, JSONObject

import yaml

from attend.bounds import MAX_DEPTH, MAX_FILE_BYTES, MAX_INTEGER_DIGITS, MAX_NODES
from attend.errors import Diagnostic, caret_excerpt, line_col, source_lines
from attend.spec.headers import shown_source_line
from attend.spec.loaded import KeyPath, Origin, SensorFile

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "ParsedYaml",
    "file_stem",
    "parse_yaml",
    "read_sensor_file",
    "read_sensor_source",
    "read_source",
    "read_yaml_file",
    "with_excerpt",
]

try:  # libyaml when present: the same events, an order of magnitude faster
    _Loader: type[yaml.CSafeLoader] | type[yaml.SafeLoader] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

_TAG = "tag:yaml.org,2002:"
#: The Python types a scalar with an explicit core tag (`!!int`, ...) may have.
_TAG_TYPES: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float), "bool": bool, "null": type(None)}
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"^[-+]?[0-9]+$")
_INT_OCT = re.compile(r"^0o[0-7]+$")
_INT_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
#: The characters a plain scalar of the core schema's null, bool, int or float types can start with.
_TYPED_STARTS = frozenset("~nNtTfF-+.0123456789")
#: `first_line` marker for a key that came from a `<<` merge (an explicit key may override it).
_MERGED = -1
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


class _Refused(Exception):
    """Stops reading a document; carries the diagnostic that says why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class _Node:
    """One node of the document as composed from events (positions 1-based)."""

    __slots__ = ("anchor", "children", "col", "is_open", "kind", "line", "size", "style", "tag", "target", "value")

    def __init__(self, kind: str, line: int, col: int, value: str = "", style: str | None = None,
                 tag: str | None = None, anchor: str | None = None) -> None:
        self.kind = kind  # "scalar" | "seq" | "map" | "alias"
        self.line = line
        self.col = col
        self.value = value
        self.style = style
        self.tag = tag
        self.anchor = anchor
        self.children: list[_Node] = []
        self.is_open = kind in ("seq", "map")
        self.size = 1
        self.target: _Node | None = None


class ParsedYaml:
    """The plain data of one YAML document, the origin of each key path, and the problems found."""

    __slots__ = ("data", "diagnostics", "origins")

    def __init__(self, data: Any, origins: dict[KeyPath, Origin], diagnostics: list[Diagnostic]) -> None:
        self.data = data
        self.origins = origins
        self.diagnostics = diagnostics


def read_source(path: Path, file: str | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Read a file as UTF-8 text, refusing what cannot be a sensor file.

    Args:
        path: the file to read.
        file: the name diagnostics use for it (default `str(path)`).

    Returns:
        `(text, [])`, or `(None, [diagnostic])` for an unreadable, too large, binary or non-UTF-8 file.
    """
    name = file or str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, [Diagnostic(name, 1, 1, "io", f"cannot read the file: {exc.strerror or exc}")]
    if len(raw) > MAX_FILE_BYTES:
        try:
            size = f"{path.stat().st_size:,} bytes"
        except OSError:
            size = "more than that"
        return None, [Diagnostic(name, 1, 1, "file-too-large",
                                 f"the file holds {size}; a sensor or config file may hold at most 1 MiB")]
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    nul = raw.find(b"\0")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if 0 <= nul < exc.start:
            return None, [_binary(name, raw, nul)]
        # The first bad byte is this invalid one; a NUL further on is named too (the file is binary).
        line, col = _position(raw, exc.start)
        also = f"; the file also holds binary data, a NUL byte at {':'.join(map(str, _position(raw, nul)))}" \
            if nul >= 0 else ""
        return None, [Diagnostic(name, line, col, "encoding",
                                 f"invalid UTF-8 (byte 0x{raw[exc.start]:02x}{also}): sensor files are UTF-8 text")]
    if nul >= 0:
        return None, [_binary(name, raw, nul)]
    return text, []


def _position(raw: bytes, offset: int) -> tuple[int, int]:
    """The line and column (in characters) of the byte at `offset` of `raw`."""
    prefix = raw[:offset].decode("utf-8", "replace")
    return line_col(prefix, len(prefix))


def _binary(name: str, raw: bytes, nul: int) -> Diagnostic:
    line, col = _position(raw, nul)
    return Diagnostic(name, line, col, "encoding", "binary data (a NUL byte): sensor files are UTF-8 text")


def parse_yaml(text: str, file: str, layer: str = "") -> ParsedYaml:
    """Parse one YAML document into plain data with an origin per key path.

    Args:
        text: the document.
        file: the name its diagnostics and origins carry.
        layer: the layer its origins carry.

    Returns:
        A `ParsedYaml`; `data` is None when the document could not be read at all (see `diagnostics`).
    """
    diagnostics: list[Diagnostic] = []
    try:
        root = _compose(text, file)
    except _Refused as refused:
        return ParsedYaml(None, {}, [with_excerpt(refused.diagnostic, text)])
    except yaml.YAMLError as exc:
        return ParsedYaml(None, {}, [with_excerpt(_yaml_error(exc, text, file), text)])
    if root is None:
        return ParsedYaml(None, {}, diagnostics)
    builder = _Builder(file, layer, diagnostics)
    try:
        data = builder.convert(root, (), 0)
    except _Refused as refused:
        return ParsedYaml(None, {}, [with_excerpt(refused.diagnostic, text)])
    builder.origins[()] = Origin(layer, file, root.line, root.col, style=root.style)
    return ParsedYaml(data, builder.origins, [with_excerpt(d, text) for d in diagnostics])


#: The parse of each shipped sensor file read in this process, by the name it is read under: its text and
#: the parse. Every command that loads the set reads the ~28 shipped files (the daemon at each reload, an
#: in-process caller at each command) and parsing them was half of that; a file whose text changed is parsed
#: again. The parse is shared, never modified: readers copy what they change (`merge_data`, `normalise`).
_SHIPPED_PARSES: dict[str, tuple[str, ParsedYaml]] = {}


def read_yaml_file(path: Path, layer: str = "", file: str | None = None) -> ParsedYaml:
    """Read and parse one YAML file; every problem is a positioned diagnostic."""
    return _read_yaml(path, layer, file or str(path))[0]


def _read_yaml(path: Path, layer: str, name: str) -> tuple[ParsedYaml, str | None]:
    """`read_yaml_file`, and the text it parsed (None when the file could not be read as text)."""
    text, problems = read_source(path, name)
    if text is None:
        return ParsedYaml(None, {}, problems), None
    if layer != "shipped":
        return parse_yaml(text, name, layer), text
    known = _SHIPPED_PARSES.get(name)
    if known is None or known[0] != text:
        known = _SHIPPED_PARSES[name] = (text, parse_yaml(text, name, layer))
    return known[1], text


def read_sensor_file(path: Path, layer: str, file: str | None = None) -> SensorFile:
    """Read one sensor file of `layer` into a `SensorFile` (named after the file's stem).

    The document must be a mapping; anything else is a `not-a-mapping` error and `data` stays None.
    """
    return read_sensor_source(path, layer, file)[0]


def read_sensor_source(path: Path, layer: str, file: str | None = None) -> tuple[SensorFile, str | None]:
    """`read_sensor_file`, and the text it parsed (None when the file could not be read as text)."""
    path = Path(path)
    name = file or str(path)
    parsed, text = _read_yaml(path, layer, name)
    sensor_file = SensorFile(name=file_stem(path), layer=layer, path=path, origins=parsed.origins,
                             diagnostics=list(parsed.diagnostics))
    if parsed.data is None and not parsed.diagnostics:
        sensor_file.diagnostics.append(Diagnostic(name, 1, 1, "not-a-mapping",
                                                  "the file is empty: a sensor file is a mapping of fields"))
    elif parsed.data is not None and not isinstance(parsed.data, dict):
        root = parsed.origins.get(())
        sensor_file.diagnostics.append(Diagnostic(
            name, root.line if root else 1, root.col if root else 1, "not-a-mapping",
            f"a sensor file is a mapping of fields, not {_type_name(parsed.data)}"))
    else:
        sensor_file.data = parsed.data
    return sensor_file, text


def file_stem(path: Path) -> str:
    """A sensor file's name without `.yaml` (or `.yml`): the sensor name it defines."""
    name = path.name
    for suffix in (".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def with_excerpt(diagnostic: Diagnostic, text: str) -> Diagnostic:
    """`diagnostic` with a caret excerpt of its line of `text` (a header value masked by
    `shown_source_line`) as its detail, unless it has a detail already or its line lies past the end of `text`."""
    if diagnostic.detail or diagnostic.line > len(source_lines(text)):
        return diagnostic
    shown, col = shown_source_line(source_lines(text), diagnostic.line, diagnostic.col)
    detail = caret_excerpt(shown, diagnostic.line, col)
    return Diagnostic(diagnostic.file, diagnostic.line, diagnostic.col, diagnostic.code, diagnostic.message,
                      diagnostic.severity, detail)


def _yaml_error(exc: yaml.YAMLError, text: str, file: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        line, col = mark.line + 1, mark.column + 1
    elif isinstance(position := getattr(exc, "position", None), int):
        if getattr(exc, "encoding", "unicode") != "unicode":  # libyaml counts UTF-8 bytes, not characters
            position = len(text.encode("utf-8")[:position].decode("utf-8", "replace"))
        line, col = line_col(text, position)
    else:
        line, col = 1, 1
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context and getattr(exc, "problem", None) else str(problem)
    if isinstance(exc, yaml.reader.ReaderError):
        message = "a character YAML does not allow in a document"
    if "nesting depth" in message or "maximum depth" in message:  # libyaml's own nesting limit
        return Diagnostic(file, line, col, "too-deep", f"the document nests deeper than {MAX_DEPTH} levels")
    return Diagnostic(file, line, col, "yaml-syntax", message.strip())


def _compose(text: str, file: str) -> _Node | None:
    """Build the node tree from parser events, with no recursion on the input's depth.

    The loop runs once per event of every file read, so it is written for speed: the event types
    most frequent first, and `materialised`, the nodes materialised so far (the sizes along the open
    path, each already counting its closed children), kept as a running total.
    """
    loader = _Loader(text)
    get_event = loader.get_event
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end, alias_event = yaml.MappingEndEvent, yaml.SequenceEndEvent, yaml.AliasEvent
    try:
        stack: list[_Node] = []
        anchors: dict[str, _Node] = {}
        root: _Node | None = None
        documents = 0
        materialised = 0
        while True:
            event: Any = get_event()  # a libyaml event, told apart by its exact type (the fast path)
            kind = type(event)
            if kind is mapping_end or kind is sequence_end:
                node = stack.pop()
                node.is_open = False
                if stack:
                    stack[-1].size += node.size
                else:
                    materialised -= node.size
                continue
            if kind is scalar_event:
                mark = event.start_mark
                node = _Node("scalar", mark.line + 1, mark.column + 1, event.value, event.style or None, event.tag,
                             event.anchor)
            elif kind is mapping_start or kind is sequence_start:
                mark = event.start_mark
                node = _Node("map" if kind is mapping_start else "seq", mark.line + 1, mark.column + 1, "", None,
                             event.tag, event.anchor)
                if len(stack) >= MAX_DEPTH:
                    raise _Refused(Diagnostic(file, node.line, node.col, "too-deep",
                                              f"the document nests deeper than {MAX_DEPTH} levels"))
            elif kind is alias_event:
                mark = event.start_mark
                line, col = mark.line + 1, mark.column + 1
                target = anchors.get(event.anchor)
                if target is None:
                    raise _Refused(Diagnostic(file, line, col, "yaml-syntax",
                                              f"alias *{event.anchor} names no anchor defined before it"))
                if target.is_open:
                    raise _Refused(Diagnostic(file, line, col, "alias-limit",
                                              f"alias *{event.anchor} refers to a node that contains it"))
                node = _Node("alias", line, col)
                node.target = target
                node.size = target.size
            elif event is None or kind is yaml.StreamEndEvent:
                return root
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    mark = event.start_mark
                    raise _Refused(Diagnostic(file, mark.line + 1, mark.column + 1, "yaml-syntax",
                                              "a second YAML document: a sensor file holds exactly one"))
                continue
            else:  # StreamStartEvent, DocumentEndEvent
                continue
            if node.anchor:
                anchors[node.anchor] = node
            if stack:
                parent = stack[-1]
                parent.children.append(node)
                if not node.is_open:  # a scalar or an alias: counted in its parent now
                    parent.size += node.size
                    materialised += node.size
                if materialised + node.size > MAX_NODES:
                    raise _Refused(Diagnostic(
                        file, node.line, node.col, "alias-limit",
                        f"the document has more than {MAX_NODES:,} nodes once its aliases are expanded"))
            else:
                root = node
            if node.is_open:
                stack.append(node)
                materialised += node.size
    finally:
        loader.dispose()


class _Builder:
    """Turns the node tree into plain data and origins; depth is bounded, so recursion is safe here."""

    def __init__(self, file: str, layer: str, diagnostics: list[Diagnostic]) -> None:
        self.file = file
        self.layer = layer
        self.diagnostics = diagnostics
        self.origins: dict[KeyPath, Origin] = {}

    def convert(self, node: _Node, path: KeyPath, depth: int) -> JSON:
        if depth > MAX_DEPTH:
            raise _Refused(Diagnostic(self.file, node.line, node.col, "too-deep",
                                      f"the document nests deeper than {MAX_DEPTH} levels (aliases expanded)"))
        if node.kind == "alias":
            assert node.target is not None
            return self.convert(node.target, path, depth)
        self._check_tag(node)
        if node.kind == "scalar":
            return self._scalar(node)
        if node.kind == "seq":
            items: list[JSON] = []
            for index, child in enumerate(node.children):
                child_path = (*path, str(index))
                self.origins[child_path] = Origin(self.layer, self.file, child.line, child.col,
                                                  style=_style(child))
                items.append(self.convert(child, child_path, depth + 1))
            return items
        return self._mapping(node, path, depth)

    def _mapping(self, node: _Node, path: KeyPath, depth: int) -> JSONObject:
        result: JSONObject = {}
        first_line: dict[str, int] = {}
        pairs = node.children
        for index in range(0, len(pairs) - 1, 2):
            key_node, value_node = pairs[index], pairs[index + 1]
            if key_node.kind == "alias" and key_node.target is not None:
                key_node = key_node.target
            if key_node.kind != "scalar":
                self.diagnostics.append(Diagnostic(self.file, key_node.line, key_node.col, "wrong-type",
                                                   "a mapping key must be a plain value, not a mapping or list"))
                continue
            key = key_node.value
            if key == "<<" and key_node.style is None:
                self._merge_key(result, first_line, value_node, path, depth)
                continue
            if key in first_line and first_line[key] != _MERGED:
                self.diagnostics.append(Diagnostic(
                    self.file, key_node.line, key_node.col, "duplicate-key",
                    f"duplicate key {key!r}: first defined at line {first_line[key]}"
                    " (YAML would silently keep only the last)"))
                continue
            first_line[key] = key_node.line
            child_path = (*path, key)
            self.origins[child_path] = Origin(self.layer, self.file, value_node.line, value_node.col,
                                              key_line=key_node.line, key_col=key_node.col,
                                              style=_style(value_node))
            result[key] = self.convert(value_node, child_path, depth + 1)
        return result

    def _merge_key(self, result: JSONObject, first_line: dict[str, int], value_node: _Node,
                   path: KeyPath, depth: int) -> None:
        """YAML's `<<: *anchor` merge: keys not already present come from the merged mapping(s)."""
        sources = value_node.target.children if value_node.kind == "alias" and value_node.target and \
            value_node.target.kind == "seq" else (value_node.children if value_node.kind == "seq" else [value_node])
        for source in sources:
            target = source.target if source.kind == "alias" else source
            if target is None or target.kind != "map":
                self.diagnostics.append(Diagnostic(self.file, source.line, source.col, "wrong-type",
                                                   "`<<` merges mappings only"))
                continue
            # Collect the merged mapping's origins apart, so an explicit key keeps its own position.
            kept, self.origins = self.origins, {}
            merged = self._mapping(target, path, depth)
            merged_origins, self.origins = self.origins, kept
            for key, value in merged.items():
                if key not in result:
                    result[key] = value
                    first_line.setdefault(key, _MERGED)
                    prefix = (*path, key)
                    self.origins.update((p, o) for p, o in merged_origins.items() if p[: len(prefix)] == prefix)

    def _check_tag(self, node: _Node) -> None:
        tag = node.tag
        if tag is None or tag == "!":
            return
        allowed = {"scalar": ("str", "int", "float", "bool", "null"), "seq": ("seq",), "map": ("map",)}[node.kind]
        if tag.startswith(_TAG) and tag[len(_TAG):] in allowed:
            return
        shown = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
        raise _Refused(Diagnostic(self.file, node.line, node.col, "yaml-syntax",
                                  f"tag {shown} is not allowed here: sensor files use plain YAML (safe tags only)"))

    def _scalar(self, node: _Node) -> JSON:
        text = node.value
        tag = node.tag[len(_TAG):] if node.tag and node.tag.startswith(_TAG) else None
        if tag == "str" or (tag is None and (node.style is not None or node.tag == "!")):
            return text
        if tag is None and text and text[0] not in _TYPED_STARTS:
            return text  # no core-schema null, bool, int or float starts this way: a string
        if tag in (None, "int") and _int_digits(text) > MAX_INTEGER_DIGITS:
            raise _Refused(Diagnostic(self.file, node.line, node.col, "bad-number",
                                      f"an integer of {_int_digits(text):,} digits: attend reads integers of at "
                                      f"most {MAX_INTEGER_DIGITS:,} digits"))
        value = _resolve_plain(text)
        if tag is None:
            return value
        expected = _TAG_TYPES[tag]
        if tag == "float" and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, expected) and not (tag == "int" and isinstance(value, bool)):
            return value
        raise _Refused(Diagnostic(self.file, node.line, node.col, "wrong-type", f"{text!r} is not a valid !!{tag}"))


def _style(node: _Node) -> str | None:
    return node.style if node.kind == "scalar" else None


def _int_digits(text: str) -> int:
    """How many digits `text` has if it is an integer literal (decimal, 0o or 0x), else 0."""
    if _INT.fullmatch(text):
        return len(text.lstrip("+-"))
    if _INT_OCT.fullmatch(text) or _INT_HEX.fullmatch(text):
        return len(text) - 2
    return 0


def _resolve_plain(text: str) -> bool | int | float | str | None:
    """The YAML 1.2 core schema for a plain scalar: null, bool, int, float, else the string itself."""
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.fullmatch(text):
        return int(text)
    if _INT_OCT.fullmatch(text):
        return int(text[2:], 8)
    if _INT_HEX.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text
