"""The sensors tab's keys and dialogs at their edges (issue 27, item 9), driven with the pilot."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from tab_rig import NOW, drive, edit_field, make_app, rendered_lines, select_sensor, submit_form
from textual.widgets import Static


def test_q_quits_while_a_filter_is_active_and_only_escape_clears_it(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await pilot.press("slash", *"user", "enter")
        await pilot.pause()
        seen["filter"] = pilot.app.screen.filter_text
        await pilot.press("q")
        await pilot.pause()

    drive(app, scenario)
    assert seen["filter"] == "user"
    assert app.return_code == 0 and not app.is_running


def test_tab_moves_between_the_list_and_the_fields_and_never_into_the_filter(tab_home) -> None:
    app = make_app(tab_home)
    focused: list[str | None] = []

    async def scenario(pilot: Any) -> None:
        await pilot.press("slash", *"user", "enter")
        await pilot.pause()
        for _ in range(4):
            await pilot.press("tab")
            await pilot.pause()
            focused.append(pilot.app.focused.id if pilot.app.focused is not None else None)
        await pilot.press("slash")
        await pilot.pause()
        focused.append(pilot.app.focused.id if pilot.app.focused is not None else None)

    drive(app, scenario)
    assert set(focused[:4]) == {"sensors", "fields"}
    assert focused[4] == "filter"  # `/` still reaches it


def test_after_a_rename_the_cursor_stays_on_the_renamed_sensor(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("R")
        await pilot.pause()
        await submit_form(pilot, "wind")
        await pilot.pause()
        seen["current"] = pilot.app.screen.current_name()

    drive(app, scenario)
    assert seen["current"] == "wind"


def test_the_shelve_prompt_shows_its_placeholders_as_written(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("s")
        await pilot.pause()
        seen["prompt"] = "\n".join(rendered_lines(pilot.app.screen.query_one("#form-help", Static)))

    drive(app, scenario)
    assert "DURATION [REASON], e.g. 2h deploy in progress" in seen["prompt"]


def test_a_next_poll_that_is_due_reads_due_not_ago() -> None:
    from datetime import datetime

    from attend.tui.model import when

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, tz=UTC).isoformat()

    assert when(iso(NOW), NOW, upcoming=True) == "due now"
    assert when(iso(NOW - 300), NOW, upcoming=True) == "due 5m ago"
    assert when(iso(NOW + 18), NOW, upcoming=True) == "in 18s"
    assert when(iso(NOW - 12), NOW) == "12s ago"


def test_the_keys_dialog_indents_a_wrapped_description_under_its_column(tab_home) -> None:
    from attend.tui.bindings import KEYS

    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        seen["lines"] = rendered_lines(pilot.app.screen.query_one("#help", Static))

    drive(app, scenario, size=(80, 50))
    lines = [line for line in seen["lines"][1:] if line.strip()]
    column = len(max((k for k, _, _ in KEYS), key=len))
    starts = {k for k, _, _ in KEYS}
    continued = [line for line in lines if not (line[:column].rstrip() in starts and line[column:column + 2] == "  ")]
    assert continued, seen["lines"]
    assert all(line[: column + 2].strip() == "" for line in continued), continued


def test_an_invalid_edit_of_a_pending_change_does_not_claim_a_write(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.pause()
        await edit_field(pilot, ("min_interval",), "2h")
        seen["error"] = str(pilot.app.screen.query_one("#error", Static).render())

    drive(app, scenario)
    assert "invalid" in seen["error"]
    assert "written" not in seen["error"] and "nothing was kept" in seen["error"]

