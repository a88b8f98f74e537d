"""README's screenshot of the sensors tab (docs/sensors-tab.svg) is the app as it is now.

The SVG is exported by the real app (Textual's screenshot, the one the snapshot plugin takes) from the
snapshot tests' home at their fixed clock, with the per-export random ids stripped, so the same code
gives the same bytes. After a deliberate change to the tab, regenerate it with
`ATTEND_UPDATE_SCREENSHOT=1 .venv/bin/python -m pytest tests/tui/test_screenshot.py`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytest_textual_snapshot import normalize_svg
from tab_rig import SIZE, edit_field, make_app, select_field, show_user_sensors
from textual._doc import take_svg_screenshot

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "sensors-tab.svg"


async def _scene(pilot: Any) -> None:
    await show_user_sensors(pilot, "weather")
    await edit_field(pilot, ("triggers", "high-wind", "magnitude"), "4.5")
    select_field(pilot.app, ("triggers", "high-wind", "description"))
    await pilot.pause()


def test_the_readme_screenshot_is_what_the_tab_shows_now(tab_home) -> None:
    svg = normalize_svg(take_svg_screenshot(make_app(tab_home), terminal_size=SIZE, run_before=_scene))
    if os.environ.get("ATTEND_UPDATE_SCREENSHOT"):
        SCREENSHOT.write_text(svg)
    assert SCREENSHOT.is_file(), "no docs/sensors-tab.svg: run with ATTEND_UPDATE_SCREENSHOT=1 to create it"
    assert SCREENSHOT.read_text() == svg, (
        "docs/sensors-tab.svg is not what the tab shows now: look at the change, then regenerate it with "
        "ATTEND_UPDATE_SCREENSHOT=1 .venv/bin/python -m pytest tests/tui/test_screenshot.py")


def test_the_readme_shows_the_screenshot() -> None:
    assert "](docs/sensors-tab.svg)" in (ROOT / "README.md").read_text()
