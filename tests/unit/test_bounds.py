"""Every bound a sensor file is held to has a name, a documented value and a test (issue 17)."""

from __future__ import annotations

import re
from pathlib import Path

import attend.bounds as bounds

SPEC_MD = Path(__file__).resolve().parents[2] / "docs" / "spec.md"
_UNITS = {"MiB": 1 << 20, "days": 24 * 3600}


def _documented() -> dict[str, float]:
    rows = re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", SPEC_MD.read_text(), re.MULTILINE)
    values = {}
    for name, shown in rows:
        number, _, unit = shown.strip().partition(" ")
        values[name] = float(number.replace(",", "")) * _UNITS.get(unit, 1)
    return values


def test_every_bound_is_listed_in_spec_md_with_its_value() -> None:
    documented = _documented()
    assert sorted(documented) == sorted(bounds.__all__)
    for name in bounds.__all__:
        assert documented[name] == getattr(bounds, name), name
