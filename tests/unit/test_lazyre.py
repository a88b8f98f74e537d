"""`attend.lazyre`: patterns compiled at their first use, and PyYAML imported with its patterns deferred."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
import threading

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


def test_deferred_compiles_defers_this_threads_compiles_only_and_restores_re_compile() -> None:
    seen: dict[str, object] = {}

    def other_thread() -> None:
        seen["other"] = re.compile("other[0-9]")

    with lazyre.deferred_compiles():
        mine = re.compile("mine[0-9]")
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        with lazyre.deferred_compiles():  # nested: the outer block keeps the patch, the inner leaves it be
            inner = re.compile("inner")
        still = re.compile("still")
    after = re.compile("after")
    assert isinstance(mine, lazyre.LazyPattern) and isinstance(inner, lazyre.LazyPattern)
    assert isinstance(still, lazyre.LazyPattern)
    assert isinstance(seen["other"], re.Pattern) and isinstance(after, re.Pattern)
    assert re.compile is lazyre._compile
    assert mine.match("mine7") is not None


def test_re_compile_is_restored_when_the_deferred_block_raises() -> None:
    with pytest.raises(ZeroDivisionError), lazyre.deferred_compiles():
        1 / 0  # noqa: B018
    assert re.compile is lazyre._compile


PYYAML_PROBE = """
import datetime
import attend.spec.loading  # imports PyYAML with its patterns deferred
import yaml
print(yaml.safe_load("a: 2001-12-14t21:59:43.10-05:00\\nb: yes\\nc: 1_000\\nd: ~\\ne: 0x1f\\nf: .inf") ==
      {"a": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000,
                              tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
       "b": True, "c": 1000, "d": None, "e": 31, "f": float("inf")})
try:
    yaml.load("a: \\x07", Loader=yaml.SafeLoader)  # the pure-Python reader's non-printable check
except yaml.reader.ReaderError as exc:
    print("refused", exc.character == 7)
print(yaml.safe_dump({"on": "yes", "n": 1}, sort_keys=True).strip().replace("\\n", "|"))
"""


def test_pyyaml_imported_with_deferred_patterns_resolves_refuses_and_dumps_as_before() -> None:
    run = subprocess.run([sys.executable, "-c", PYYAML_PROBE], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["True", "refused True", "n: 1|'on': 'yes'"]
