"""The sensors tab's probe (`P`): the same two calls as `attend sensors probe`, the operator's answer
asked in a dialog, the record written to the real store (real stdio test server)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_rig import Behind, mcp_sensor_yaml
from test_mcp_probe import stored_probe


def _probe_in_tab(home: Any, name: str, answer: str) -> dict[str, Any]:
    from textual.widgets import DataTable, Static

    from attend.tui import SensorsApp

    seen: dict[str, Any] = {}

    async def run() -> None:
        app = SensorsApp(home.project, refresh_seconds=None)
        async with app.run_test(size=(120, 40)) as pilot:
            table = app.screen.query_one("#sensors", DataTable)
            table.move_cursor(row=table.get_row_index(name))
            await pilot.press("P")
            await app.workers.wait_for_complete()
            await pilot.pause()
            seen["question"] = str(app.screen.query_one("#question", Static).render())
            await pilot.press(answer)
            await pilot.pause()
            seen["state"] = str(table.get_cell(name, "state"))

    asyncio.run(run())
    return seen


def test_the_tab_probes_an_mcp_sensor_and_records_the_operators_yes(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    seen = _probe_in_tab(home, "tracker", "y")
    assert "holds all 1 item(s)" in seen["question"]
    assert "Are they untouched?" in seen["question"]
    record = stored_probe(home, "tracker")
    assert record is not None and record["ok"] is True and record["confirmed"] is True
    assert record["first"] == {"items": [{"id": "a", "title": "first"}]}


def test_the_tab_records_a_no_as_not_confirmed(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    _probe_in_tab(home, "tracker", "n")
    record = stored_probe(home, "tracker")
    assert record is not None and record["ok"] is True and record["confirmed"] is False
