"""Expression strings → IR: paths, templates, where properties and whole triggers (ADR-403 §3, §8).

`grammar.expressions` parses the expression strings (one lark grammar, `attend.lark`, built on first
use); `grammar.triggers` reads one trigger's YAML mapping into an `ir.Trigger`; `grammar.simple` reads
the common shapes without lark. The names below are the package's public ones.
"""

from __future__ import annotations

from attend.grammar.expressions import parse_path, parse_property, parse_template, regex_problem, split_dotted
from attend.grammar.simple import GLOB_CHARS, has_glob
from attend.grammar.triggers import parse_trigger, parse_trigger_collecting

__all__ = [
    "GLOB_CHARS",
    "has_glob",
    "parse_path",
    "parse_property",
    "parse_template",
    "parse_trigger",
    "parse_trigger_collecting",
    "regex_problem",
    "split_dotted",
]
