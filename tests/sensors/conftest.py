"""Fixtures for the shipped sensors (the material itself lives in sensor_material.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sensor_material import Driver, GitRepo, shipped_sensor

from attend.sensors.base import Focus


@pytest.fixture
def drive(tmp_path: Path) -> Callable[..., Driver]:
    """Build a Driver for shipped sensor `name`: its class, built from the file's crate block plus overrides."""

    def build(name: str, sensor_class: type, cwd: Path, **overrides: Any) -> Driver:
        compiled = shipped_sensor(name, cwd)
        config = {**compiled.sensor.data["crate"], **overrides}
        return Driver(compiled, sensor_class(config), Focus(cwd=cwd))

    return build


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A git repository with one commit on main."""
    r = GitRepo(tmp_path / "repo")
    r.commit("initial", "README")
    return r


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder."""
    p = tmp_path / "proj"
    p.mkdir()
    return p
