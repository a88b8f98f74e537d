"""The costs a sensor file may impose, each a named bound (issues 14 and 17; docs/spec.md, Bounds).

A sensor file is untrusted text: a project's repository can ship one. Every value a file sets and
every amount of work it can ask for (reading, validating, compiling patterns and templates, printing
errors) has a bound here, so a few hundred hostile bytes can neither crash nor stall attend, and a
number is range-checked before anything converts it. Each bound is listed with its value in
docs/spec.md (tests/unit/test_bounds.py keeps the two in step).
"""

from __future__ import annotations

from attend import lazyre

__all__ = [
    "DATA_BYTES_PER_VALUE",
    "EXCERPT_WIDTH",
    "MAX_COUNT",
    "MAX_DATA_DEPTH",
    "MAX_DATA_INTEGER_DIGITS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_INPUT_BYTES",
    "MAX_DECAY_THRESHOLD",
    "MAX_DEPTH",
    "MAX_DURATION_CHARS",
    "MAX_DURATION_SECONDS",
    "MAX_ERRORS_PER_FILE",
    "MAX_FILE_BYTES",
    "MAX_INTEGER_DIGITS",
    "MAX_MAGNITUDE",
    "MAX_NODES",
    "MAX_OUTPUT_BYTES",
    "STREAM_BUFFER_BYTES",
    "MAX_CURSOR_BYTES",
    "MAX_LINE_BYTES",
    "STREAM_KEPT_BYTES",
    "STREAM_BUFFER_LINES",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_EXPANSION",
    "MAX_PATTERN_EXPANSION_PER_SENSOR",
    "MAX_PATTERN_GROUP_DEPTH",
    "MAX_PATTERN_REPEAT",
    "MAX_PLACEHOLDERS",
    "MAX_TEMPLATE_CHARS",
    "MAX_TRIGGERS",
    "MAX_WHERE_PROPERTIES",
    "PATTERN_TIMEOUT_SECONDS",
    "PatternShape",
    "pattern_shape",
]

# -- reading a file ---------------------------------------------------------------------------------
#: The largest sensor or config file attend reads (1 MiB); a sensor file is a few hundred bytes.
MAX_FILE_BYTES = 1 << 20
#: How many nodes a document may materialise, aliases expanded (refuses "billion laughs" files fast).
MAX_NODES = 100_000
#: How deep mappings and sequences may nest (a sensor file needs about six levels).
MAX_DEPTH = 64
#: The most digits an integer literal may have (Python refuses to convert more than 4,300, and no
#: field of a sensor needs a fraction of this).
MAX_INTEGER_DIGITS = 1000

# -- values -----------------------------------------------------------------------------------------
#: The longest duration (30 days): longer is surely a typo, and float seconds stay exact below it.
MAX_DURATION_SECONDS = 30 * 24 * 3600.0
#: The longest duration string (`"2592000000ms"` is 12 characters).
MAX_DURATION_CHARS = 32
#: The largest magnitude or threshold (shipped sensors use at most 7).
MAX_MAGNITUDE = 1_000_000.0
#: The most quiet polls `decay_threshold` may ask for.
MAX_DECAY_THRESHOLD = 10_000
#: The most stdout bytes `command.max_output` may allow (64 MiB; the default is 1 MiB).
MAX_OUTPUT_BYTES = 64 << 20

#: A streaming command's lines waiting for the next evaluation: at most this many lines and bytes; a
#: full buffer coalesces (the oldest lines are dropped and counted), so a flood never grows the daemon.
STREAM_BUFFER_LINES = 1000
STREAM_BUFFER_BYTES = 1 << 20
#: The largest `command.max_line` a streaming command may set (1 MiB, the buffer's own size): a line is held
#: whole while it is framed, waits whole in the buffer and is parsed whole, so this bounds a stream's memory
#: (docs/runtime.md, "Memory per stream"; 64 MiB lines took a daemon to 2,980 MB).
MAX_LINE_BYTES = 1 << 20
#: The JSON bytes a streaming keyed trigger keeps of its newest records (besides at most `STREAM_KEYS_KEPT`
#: keys): past it the oldest keys are forgotten, as past the count. The kept records are stored and read
#: back at each evaluation, so without it 500 records of a 1 MiB line each would be 500 MB to read back.
STREAM_KEPT_BYTES = 1 << 20
#: The longest stream cursor (`command.cursor`), in UTF-8 bytes: it becomes an argument of the next start
#: (a journald cursor is about 150), so a longer one, or one holding a NUL, which no argument can, is
#: refused at the record and the last good cursor kept (a 200 KB one failed every start: E2BIG).
MAX_CURSOR_BYTES = 4096
#: The largest count a config or crate field may hold (limits, windows in polls, list sizes).
MAX_COUNT = 1_000_000

# -- structure --------------------------------------------------------------------------------------
#: The most triggers one sensor may declare.
MAX_TRIGGERS = 256
#: The most where-properties one trigger may test.
MAX_WHERE_PROPERTIES = 256

# -- expressions ------------------------------------------------------------------------------------
#: The longest regular expression (`matches:`), in characters.
MAX_PATTERN_CHARS = 1000
#: The largest repetition count in a pattern (`{n}`, `{n,m}`): `(?:a|bc){1000000}` crashes the
#: regex module's compiler; a thousand is more than any real pattern needs.
MAX_PATTERN_REPEAT = 1000
#: The largest size of one pattern with its counted repetitions expanded (`(?:a|bc){1000}` is about
#: 4,000): the regex module's compile time and memory grow with it, and past about a million it crashes.
MAX_PATTERN_EXPANSION = 5_000
#: The largest sum of those sizes over every pattern of one sensor, so a file cannot multiply the
#: per-pattern bound by its 65,536 possible where-properties (`over-budget`).
MAX_PATTERN_EXPANSION_PER_SENSOR = 50_000
#: How deep groups may nest in a pattern (400 nested groups overflow the regex compiler's stack).
MAX_PATTERN_GROUP_DEPTH = 32
#: How long one regex match may run before it counts as no match and the poll warns (seconds).
PATTERN_TIMEOUT_SECONDS = 0.25
#: The longest description template, in characters.
MAX_TEMPLATE_CHARS = 4096
#: The most placeholders one template may hold.
MAX_PLACEHOLDERS = 64

# -- poll data (issue 16; compiler/results.py) -----------------------------------------------------
#: How deep a poll result's mappings and lists may nest; deeper is `malformed` (every later step then
#: walks, compares, renders and stores a bounded document, far from Python's recursion limit).
MAX_DATA_DEPTH = 256
#: The most digits an integer in a poll result may have (Python's own conversion limit); more is
#: `malformed`.
MAX_DATA_INTEGER_DIGITS = 4300
#: Bytes of a command's `max_output` per JSON value or key its output may hold (issue 28, item 20): a
#: 1 MiB cap reads at most 65,536, the 64 MiB maximum 4,194,304; more is `malformed`. A parsed value
#: costs up to ~65 bytes (`[{"a":1}, ...]` is 24 times its text), so this bounds the parsed result and the
#: trigger state kept from it, whatever their shape (docs/runtime.md, "Memory per poll").
DATA_BYTES_PER_VALUE = 16
#: The largest `sensors fire --input` or test-file `result_file` read (the default command output cap).
MAX_INPUT_BYTES = 1 << 20
#: The largest peer message (its JSON), heartbeat or `.project` file read, and the NATS stream's largest
#: message (peers/natslink.py): a message of 8,000 characters, each written as a JSON escape pair, is under 100 KB.
MAX_PEER_MESSAGE_BYTES = 256 << 10
#: The largest batch file of peer messages received together (peers/mailbox.py `write_received`) written or
#: read: at least 16 of the largest messages, some 10,000 of a few hundred bytes.
MAX_PEER_BATCH_BYTES = 4 << 20
#: The longest rendered description: longer is cut with "…", and each reference renders at most this
#: much, so one fire costs at most milliseconds whatever the item holds.
MAX_DESCRIPTION_CHARS = 2000

# -- reporting --------------------------------------------------------------------------------------
#: The most errors reported per file; past it validation of that file stops and one line says how
#: many more were cut ("and N more").
MAX_ERRORS_PER_FILE = 50
#: The width of a caret excerpt: a long line is cut to a window around the column.
EXCERPT_WIDTH = 80


# -- checking a pattern before the regex module sees it -----------------------------------------------


class PatternShape:
    """What `pattern_shape` found: the first bound broken (message, 0-based offset) or None, the
    pattern's expanded size, and whether it is provably free of catastrophic backtracking features."""

    __slots__ = ("expansion", "offset", "problem", "special")

    def __init__(self, problem: str | None, offset: int, expansion: int, special: bool) -> None:
        self.problem = problem
        self.offset = offset
        self.expansion = expansion
        self.special = special


def pattern_shape(pattern: str) -> PatternShape:
    """Measure a regular expression without compiling it: length, repetition counts, group nesting and
    its size with counted repetitions expanded, each against its bound.

    The scan follows the `regex` module's syntax closely enough to bound it: escapes, character classes
    (nested ones too), groups of every `(?...)` form, quantifiers `*`, `+`, `?`, `{n}`, `{n,m}`, `{n,}`,
    and fuzzy constraints (`{e<=2}`), whose numbers are bounded like counts. `special` is True for
    what a linear-time reading cannot promise: fuzzy matching, backreferences, lookarounds, conditionals,
    recursion and inline flags other than case and ASCII ones.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return PatternShape(f"the pattern has {len(pattern):,} characters: at most {MAX_PATTERN_CHARS:,} are "
                            "allowed", MAX_PATTERN_CHARS, 0, True)
    # Each open group: [size so far, size of the last atom, start offset].
    stack: list[list[int]] = [[0, 0, 0]]
    special = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        frame = stack[-1]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if (nxt.isdigit() and nxt != "0") or nxt in ("g", "k"):
                special = True  # a backreference
            end = i + 2
            if nxt in ("p", "P", "N", "g", "k", "x", "u", "U") and pattern[end : end + 1] in ("{", "<"):
                close = pattern.find("}" if pattern[end] == "{" else ">", end)
                end = n if close < 0 else close + 1
            frame[0] += 1
            frame[1] = 1
            i = end
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            frame[0] += 1
            frame[1] = 1
            continue
        if ch == "(":
            if pattern.startswith("(?#", i):
                close = pattern.find(")", i)
                i = n if close < 0 else close + 1
                continue
            head = pattern[i : i + 4]
            if head.startswith("(?") and not (head.startswith(("(?:", "(?P<"))
                                              or (head.startswith("(?<") and head[3:4] not in ("=", "!"))):
                flags_only = _inline_flags(pattern, i)
                if flags_only is not None:
                    if set(flags_only[0]) - set("imsxauL-"):
                        special = True  # best match, enhance match, reverse, version flags...
                    i = flags_only[1]
                    continue
                special = True  # lookaround, conditional, atomic, recursion, branch reset
            if len(stack) > MAX_PATTERN_GROUP_DEPTH:
                return PatternShape(f"groups nest deeper than {MAX_PATTERN_GROUP_DEPTH} levels", i, 0, special)
            stack.append([0, 0, i])
            i += 1
            continue
        if ch == ")":
            if len(stack) > 1:
                size = stack.pop()[0]
                stack[-1][0] += size
                stack[-1][1] = size
            i += 1
            continue
        if ch == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close > 0 else ""
            # An unclosed brace is a literal one (and must not send `i` back to the start).
            numbers = [int(x) for x in _DIGITS.findall(body)] if close > 0 and _BRACE.fullmatch(body) else None
            if numbers is not None:
                if any(c.isalpha() for c in body):
                    special = True  # a fuzzy constraint
                big = max(numbers, default=0)
                if big > MAX_PATTERN_REPEAT:
                    return PatternShape(f"a repetition count of {big:,}: at most {MAX_PATTERN_REPEAT:,} is allowed",
                                        i, 0, special)
                if not any(c.isalpha() for c in body):
                    count = max(max(numbers, default=1), 1)
                    frame[0] += frame[1] * (count - 1)
                    frame[1] *= count
                    if frame[0] > MAX_PATTERN_EXPANSION or frame[1] > MAX_PATTERN_EXPANSION:
                        return PatternShape(f"the pattern's counted repetitions expand it past "
                                            f"{MAX_PATTERN_EXPANSION:,} elements", i, 0, special)
                i = close + 1
                continue
        if ch not in "*+?|":
            frame[0] += 1
            frame[1] = 1
        i += 1
    expansion = sum(frame[0] for frame in stack)
    if expansion > MAX_PATTERN_EXPANSION:
        return PatternShape(f"the pattern's counted repetitions expand it past {MAX_PATTERN_EXPANSION:,} elements",
                            0, 0, special)
    return PatternShape(None, 0, expansion, special)


#: What may stand between braces to make them a quantifier or a fuzzy constraint, not literal braces.
_BRACE_TEXT = r"^\s*(?:\d*\s*(?:,\s*\d*)?|[^{}]*[eisd][^{}]*)\s*$"


def _class_end(pattern: str, i: int) -> int:
    """The offset just past the character class opening at `i` (nested classes and escapes allowed)."""
    n, depth = len(pattern), 0
    j = i
    while j < n:
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            depth += 1
            j += 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def _inline_flags(pattern: str, i: int) -> tuple[str, int] | None:
    """`(?flags)` at `i`: (the flags, the offset past it), or None when this `(?` opens a group."""
    j = i + 2
    while j < len(pattern) and (pattern[j].isalpha() or pattern[j] == "-"):
        j += 1
    if j < len(pattern) and pattern[j] == ")" and j > i + 2:
        return pattern[i + 2 : j], j + 1
    return None


_DIGITS = lazyre.compile(r"\d+", lazyre.ASCII)
_BRACE = lazyre.compile(_BRACE_TEXT, lazyre.ASCII)
