"""Fixtures for the settings tests: a test sensor in the user layer and byte snapshots of the homes."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The data files beside these tests.
DATA = Path(__file__).parent / "data"


def snapshot(*roots: Path, skip: Path | None = None) -> dict[str, bytes]:
    """Every file under `roots` with its bytes (to prove a refused command wrote nothing).

    `skip` is a folder left out: the XDG cache, where the grammar keeps its parser tables.
    """
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and (skip is None or skip not in path.parents):
                out[str(path)] = path.read_bytes()
    return out


@pytest.fixture
def weather(home) -> Path:
    """The commented weather sensor, as a user-layer file."""
    return home.write_user_sensor("weather", (DATA / "weather.yaml").read_text())


@pytest.fixture
def files(home):
    """A function returning the bytes of every file in the home and the project."""
    return lambda: snapshot(home.root, home.project, skip=home.cache)
