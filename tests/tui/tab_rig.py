"""Helpers of the sensors tab's tests: the app at a fixed time, driving it, reading the layers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

#: The tab's clock in every test: the live state the fixtures store is relative to it.
NOW = 1_780_000_000.0

#: The terminal size of the pilot and snapshot tests.
SIZE = (120, 31)


def make_app(home: Any, **kwargs: Any) -> Any:
    """The real `attend.tui.SensorsApp` for `home`'s project, at `NOW`, without the periodic refresh."""
    from attend.tui import SensorsApp

    kwargs.setdefault("refresh_seconds", None)
    return SensorsApp(home.project, clock=lambda: NOW, **kwargs)


def drive(app: Any, scenario: Callable[[Any], Awaitable[None]], size: tuple[int, int] = SIZE) -> None:
    """Run `scenario(pilot)` against `app` headless (Textual's `run_test`), on asyncio."""

    async def run() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(pilot)

    asyncio.run(run())


def settings_get(home: Any, key: str) -> dict[str, Any]:
    """`attend settings get KEY --json`, run as the real command."""
    done = home.attend("settings", "get", key, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def layer_bytes(home: Any) -> dict[str, bytes]:
    """Every sensor and config file of every writable layer, with its bytes."""
    out = {}
    for root in (home.config / "attend", home.project / ".claude"):
        for path in sorted(root.rglob("*")) if root.exists() else []:
            if path.is_file():
                out[str(path)] = path.read_bytes()
    return out


def select_sensor(app: Any, name: str) -> None:
    """Focus the list and highlight sensor `name`."""
    from textual.widgets import DataTable

    table = app.screen.query_one("#sensors", DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(name))


def select_field(app: Any, path: tuple[str, ...]) -> None:
    """Focus the highlighted sensor's fields and highlight the field (or trigger) at `path`."""
    from textual.widgets import DataTable

    from attend.settings.keys import format_key

    fields = app.screen.query_one("#fields", DataTable)
    fields.focus()
    fields.move_cursor(row=fields.get_row_index(format_key(path)))


async def show_user_sensors(pilot: Any, select: str | None = None) -> None:
    """Filter the list to the user layer (the shipped sensors change with attend) and select a sensor."""
    await pilot.press("slash", *"user", "enter")
    await pilot.pause()
    if select is not None:
        select_sensor(pilot.app, select)
        await pilot.pause()


async def submit_form(pilot: Any, text: str) -> None:
    """Put `text` in the open dialog's input and press Enter."""
    from textual.widgets import Input

    pilot.app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def edit_field(pilot: Any, path: tuple[str, ...], text: str) -> str:
    """Press `e` on the highlighted sensor's field `path`, enter `text`; the screen then on top."""
    select_field(pilot.app, path)
    await pilot.press("e")
    await pilot.pause()
    assert type(pilot.app.screen).__name__ == "EditForm"
    await submit_form(pilot, text)
    return type(pilot.app.screen).__name__


def rendered_lines(widget: Any) -> list[str]:
    """A widget's lines as the terminal shows them (wrapped at the widget's width)."""
    from textual.geometry import Region

    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.size))]
