"""`sensors fire --dry-run` over random hostile JSON (issue 16): a result, a malformed reason or a usage
error naming the input, never a traceback or an internal error, whatever the poll output holds."""

from __future__ import annotations

import json
import sys

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from property_examples import examples

SENSOR = (
    "spec: 1\nname: items\nkind: command\nthreshold: 0\n"
    f"command:\n  argv: [{sys.executable!r}, -c, 'print(1)']\n"
    "triggers:\n  new:\n    path: $.items[*]\n    key: id\n    on: added\n    description: 'new item {id} {value}'\n"
)

SCALARS = st.one_of(
    st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=6), st.sampled_from(["\ud800", "x\udfffy", "²", "٣", "1", "-0"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "a", "²", "\ud800", "1"]),
                                                                inner, max_size=3),
    max_leaves=12,
)


def _text(items: list, deep: int, huge: bool) -> str:
    """The poll output: items under `items`, optionally a 5,000-digit integer and `deep` levels of nesting."""
    body = json.dumps({"items": items}, allow_nan=True)  # NaN/Infinity and lone surrogates as escapes
    if huge:
        body = body[:-1] + ', "n": ' + "7" * 5000 + "}"
    return "[" * deep + body + "]" * deep


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.fixed_dictionaries({"id": VALUES}), max_size=4), st.sampled_from([0, 3, 10_000]), st.booleans())
@example([{"id": 1}, {"id": "1"}, {"id": True}], 0, False)
@example([{"id": "\ud800"}], 10_000, True)
def test_sensors_fire_dry_run_on_random_hostile_json_reports_or_refuses_never_crashes(quiet_home, items, deep, huge):
    quiet_home.write_user_sensor("items", SENSOR)
    out = quiet_home.attend("sensors", "fire", "items", "--input", "-", "--dry-run", input=_text(items, deep, huge))
    assert out.returncode in (0, 2), out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    if out.returncode == 2:
        assert out.stdout == "" and out.stderr.strip()  # refused with a reason, nothing reported
