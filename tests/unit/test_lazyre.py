"""`attend.lazyre`: attend's own patterns compiled at their first use (nothing of `re` patched)."""

from __future__ import annotations

import copy
import pickle
import re

import pytest

from attend import lazyre


def test_a_lazy_pattern_compiles_at_its_first_use_and_then_matches_as_re_does() -> None:
    lazy = lazyre.compile(r"(\d+)(ms|s)?", lazyre.ASCII)
    assert lazy._compiled is None
    real = re.compile(r"(\d+)(ms|s)?", re.ASCII)
    for text in ("30s", "500ms", "٣s", "x"):
        assert (lazy.match(text) and lazy.match(text).groups()) == (real.match(text) and real.match(text).groups())
    assert lazy._compiled is not None
    assert lazy.findall("1 22 333") == real.findall("1 22 333")
    assert lazy.sub(lambda m: "#", "a1b22") == "a#b#"
    assert (lazy.pattern, lazy.flags, lazy.groups) == (real.pattern, real.flags, real.groups)
    assert "match" in vars(lazy)  # kept: the next `lazy.match` is an instance-dict read


def test_a_lazy_pattern_with_a_bad_source_raises_res_error_at_first_use_not_before() -> None:
    lazy = lazyre.compile("(")
    with pytest.raises(re.error):
        lazy.match("x")


def test_a_lazy_pattern_copies_pickles_and_compares_by_its_source() -> None:
    lazy = lazyre.compile("a+")
    assert lazy == lazyre.compile("a+") and hash(lazy) == hash(lazyre.compile("a+"))
    assert lazy != lazyre.compile("a+", re.I)
    assert copy.copy(lazy).match("aa").group() == "aa"
    assert pickle.loads(pickle.dumps(lazy)).match("aaa").group() == "aaa"
    assert repr(lazy) == "LazyPattern('a+', 0)"
    assert lazy.match("a") is not None  # compiled and a method kept: still copies and pickles
    assert pickle.loads(pickle.dumps(lazy)).match("aa").group() == "aa"
    assert copy.deepcopy(lazy).search("baa").group() == "aa"


def test_lazyre_leaves_re_compile_alone() -> None:
    lazyre.compile("x").match("x")
    assert re.compile is lazyre._compile
