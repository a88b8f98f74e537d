"""The fast path of validation (spec/conform.py) never vouches for a document cerberus would reject."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from attend.spec.conform import conforms
from attend.spec.loading import read_sensor_file
from attend.spec.schema import SENSOR_SCHEMA
from attend.spec.validate.shape import _cerberus
from property_examples import examples

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "attend" / "sensors.d"
RULES: dict[str, Any] = {"type": "dict", "schema": SENSOR_SCHEMA}


def cerberus_accepts(document: Any) -> bool:
    return _cerberus().validate(document, normalize=False)


def test_every_shipped_sensor_takes_the_fast_path() -> None:
    files = [p for p in sorted(SHIPPED.glob("*.yaml")) if not p.name.endswith(".test.yaml")]
    assert files
    for path in files:
        data = read_sensor_file(path, "shipped").data
        assert conforms(data, RULES), path.name
        assert cerberus_accepts(data), path.name


# Values that sit on every edge cerberus draws: booleans among integers, NaN among numbers, empty
# strings and lists, durations good and bad, names good and bad, and values of every other type.
SCALARS = st.one_of(
    st.sampled_from([True, False, None, 0, 1, -1, 2**70, 0.5, -0.0, math.nan, math.inf, -math.inf, 1e308,
                     "", "x", "30s", "5m", "1.5h", "90", "-3s", "nan", "10 s", "a" * 70, "added", "removed",
                     "changed", "enters", "leaves", "all", "any", "fire", "baseline", "json", "lines",
                     "event", "message", "crate", "command", "mcp", "$.items[*]", "id", "Bad Name", "t-1"]),
    st.integers(min_value=-10, max_value=2_000_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.sampled_from(["argv", "above", "limit", "window", "x", "cwd"]),
                                                      st.text(max_size=5)), inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def near_valid(draw: st.DrawFn, rules: dict[str, Any] = RULES) -> Any:
    """A value shaped by `rules` most of the time (so many documents pass), anything otherwise."""
    if draw(st.integers(0, 5)) == 0:
        return draw(VALUES)
    schema = rules.get("schema")
    kinds = rules.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "dict" in kinds and isinstance(schema, dict) and all(isinstance(v, dict) for v in schema.values()):
        names = draw(st.lists(st.sampled_from(sorted(schema)), max_size=6, unique=True))
        out = {name: draw(_near_valid(schema[name])) for name in names}
        if draw(st.integers(0, 9)) == 0:
            out[draw(st.text(max_size=6))] = draw(VALUES)
        return out
    if "dict" in kinds and "valuesrules" in rules:
        keys = st.one_of(st.sampled_from(["high", "new-item", "cpu", "Bad Name", "état"]), st.text(max_size=5))
        return draw(st.dictionaries(keys, _near_valid(rules["valuesrules"]), max_size=3))
    if "list" in kinds and isinstance(schema, dict):
        return draw(st.lists(_near_valid(schema), max_size=3))
    if "allowed" in rules:
        return draw(st.sampled_from(list(rules["allowed"])))
    return draw(SCALARS)


#: One `near_valid` strategy per rule set (by identity: the schema's own dicts, alive for the run): a new
#: strategy at every draw made hypothesis validate and label it again, most of each example's cost.
_STRATEGIES: dict[int, st.SearchStrategy[Any]] = {}


def _near_valid(rules: dict[str, Any]) -> st.SearchStrategy[Any]:
    strategy = _STRATEGIES.get(id(rules))
    if strategy is None:
        strategy = _STRATEGIES[id(rules)] = near_valid(rules)
    return strategy


@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
@given(near_valid())
@example({"spec": True})  # cerberus takes a boolean for an integer; the fast path leaves it to cerberus
@example({"decay_threshold": 2**70})
@example({"interval": math.nan})
@example({"command": {"argv": []}})
@example({"triggers": {"Bad Name": {"on": "added"}}})
@example({"wake_on": [""]})
def test_conforms_never_vouches_for_a_document_cerberus_rejects(document: Any) -> None:
    if conforms(document, RULES):
        assert cerberus_accepts(document), _cerberus().errors


def test_a_document_with_a_mistake_is_left_to_cerberus() -> None:
    good = {"spec": 1, "name": "x", "kind": "command", "command": {"argv": ["echo", "{}"]},
            "triggers": {"t": {"path": "$", "on": "changed", "magnitude": 2}}}
    assert conforms(good, RULES)
    for bad in ({**good, "interval": "soon"}, {**good, "lane": "loud"}, {**good, "command": {"argv": []}},
                {**good, "triggers": {"t": {"on": "changed", "magnitude": -1}}}, {**good, "color": "red"},
                {**good, "threshold": True}, {**good, "triggers": {"Bad Name": {}}}):
        assert not conforms(bad, RULES), bad
        assert not cerberus_accepts(bad), bad
