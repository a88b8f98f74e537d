"""The shipped set as a user meets it: `compile --check --strict`, `attend test`, and the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sensor_material import SHIPPED

#: The sensors this package ships (the mcp-* examples are Engineer D's and ship beside them).
OWN_SENSORS = ("git", "processes", "context", "keepwarm", "xdg-downloads", "gh-notifications", "disk", "systemd", "peers",
               "messages", "disclosure", "gh-checks", "gh-runs", "gh-reviews")

#: The entry points pyproject.toml registers for the compiled ones.
ENTRY_POINTS = {"git": "GitSensor", "processes": "ProcessesSensor", "context": "ContextSensor",
                "keepwarm": "KeepwarmSensor", "peers": "PeersSensor", "messages": "MessagesSensor",
                "disclosure": "DisclosureSensor",
                "gh-checks": "ChecksSensor", "gh-runs": "RunsSensor", "gh-reviews": "ReviewsSensor"}


def test_compile_check_strict_passes_on_the_shipped_set(home):
    done = home.attend("compile", "--check", "--strict", str(SHIPPED))
    assert done.returncode == 0, done.stdout + done.stderr
    assert ": error:" not in done.stdout and ": warning:" not in done.stdout


def test_compile_check_strict_passes_in_a_fresh_home_with_every_layer(home):
    done = home.attend("compile", "--check", "--strict")
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_shipped_sensor_has_a_test_file_and_attend_test_passes_them_all(home):
    for name in OWN_SENSORS:
        assert (SHIPPED / f"{name}.yaml").is_file(), name
        assert (SHIPPED / f"{name}.test.yaml").is_file(), name
    done = home.attend("test", str(SHIPPED))
    assert done.returncode == 0, done.stdout + done.stderr
    for name in OWN_SENSORS:
        assert f"PASS  {SHIPPED / (name + '.test.yaml')} ({name}," in done.stdout


def test_attend_test_catches_a_wrong_expectation_in_a_copied_test_file(home, tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "git.yaml").write_text((SHIPPED / "git.yaml").read_text())
    text = (SHIPPED / "git.test.yaml").read_text().replace("magnitude: 2.0}", "magnitude: 4.0}")
    (folder / "git.test.yaml").write_text(text)
    done = home.attend("test", str(folder))
    assert done.returncode == 1, done.stdout + done.stderr


def test_the_compiled_sensors_resolve_through_their_entry_points():
    from importlib.metadata import entry_points

    found = {ep.name: ep.load().__name__ for ep in entry_points(group="attend.sensors")}
    for name, cls in ENTRY_POINTS.items():
        assert found.get(name) == cls
        text = (SHIPPED / f"{name}.yaml").read_text()
        assert "kind: crate" in text and f"source: {name}\n" in text


@pytest.mark.slow
def test_a_built_wheel_carries_the_shipped_files(tmp_path):
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(root)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("attend-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    for name in OWN_SENSORS:
        assert f"attend/sensors.d/{name}.yaml" in names
        assert f"attend/sensors.d/{name}.test.yaml" in names
    assert "git = attend.sensors.git:GitSensor" in entry_points
    assert "attend/py.typed" in names  # type checkers read the package's annotations (PEP 561)
