"""The costs a sensor file may impose, each a named bound (issues 14 and 17; docs/spec.md, Bounds).

A sensor file is untrusted text: a project's repository can ship one. Every value a file sets and
every amount of work it can ask for (reading, validating, compiling patterns and templates, printing
errors) has a bound here, so a few hundred hostile bytes can neither crash nor stall attend, and a
number is range-checked before anything converts it. Each bound is listed with its value in
docs/spec.md (tests/unit/test_bounds.py keeps the two in step).
"""

from __future__ import annotations

__all__ = [
    "EXCERPT_WIDTH",
    "MAX_COUNT",
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
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_GROUP_DEPTH",
    "MAX_PATTERN_REPEAT",
    "MAX_PLACEHOLDERS",
    "MAX_TEMPLATE_CHARS",
    "MAX_TRIGGERS",
    "MAX_WHERE_PROPERTIES",
    "PATTERN_TIMEOUT_SECONDS",
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
#: How deep groups may nest in a pattern (400 nested groups overflow the regex compiler's stack).
MAX_PATTERN_GROUP_DEPTH = 32
#: How long one regex match may run before it counts as no match and the poll warns (seconds).
PATTERN_TIMEOUT_SECONDS = 0.25
#: The longest description template, in characters.
MAX_TEMPLATE_CHARS = 4096
#: The most placeholders one template may hold.
MAX_PLACEHOLDERS = 64

# -- reporting --------------------------------------------------------------------------------------
#: The most errors reported per file; past it validation of that file stops and one line says how
#: many more were cut ("and N more").
MAX_ERRORS_PER_FILE = 50
#: The width of a caret excerpt: a long line is cut to a window around the column.
EXCERPT_WIDTH = 80
