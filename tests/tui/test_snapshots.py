"""SVG snapshots of the sensors tab (pytest-textual-snapshot): the list, the detail, the review and a
refused edit, at a fixed terminal size, a fixed clock and fixed live state.

After a deliberate change to what the tab shows, look at the report and accept it with
`pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from typing import Any

from tab_rig import SIZE, edit_field, make_app, select_field, show_user_sensors


async def _list(pilot: Any) -> None:
    # weather's fields set in its file fill the detail: the defaults after them (which grow with the
    # spec) stay below the fold, in this picture and the others.
    await show_user_sensors(pilot, "weather")


async def _detail(pilot: Any) -> None:
    await show_user_sensors(pilot, "weather")
    # The trigger's last field set in the file at the bottom: the defaults below it (which grow as
    # the spec does) stay out of the picture.
    select_field(pilot.app, ("triggers", "high-wind", "description"))
    await pilot.pause()


async def _review(pilot: Any) -> None:
    await show_user_sensors(pilot, "weather")
    await pilot.press("space")
    await edit_field(pilot, ("triggers", "high-wind", "magnitude"), "4.5")
    await edit_field(pilot, ("interval",), "10m")
    await pilot.press("w")


async def _refused(pilot: Any) -> None:
    await show_user_sensors(pilot, "weather")
    await edit_field(pilot, ("min_interval",), "2h")


def test_snapshot_the_list_with_live_state_and_a_failure(tab_home, snap_compare) -> None:
    assert snap_compare(make_app(tab_home), terminal_size=SIZE, run_before=_list)


def test_snapshot_a_sensors_detail_with_provenance_and_triggers(tab_home, snap_compare) -> None:
    assert snap_compare(make_app(tab_home), terminal_size=SIZE, run_before=_detail)


def test_snapshot_the_review_of_pending_changes(tab_home, snap_compare) -> None:
    assert snap_compare(make_app(tab_home), terminal_size=SIZE, run_before=_review)


def test_snapshot_an_edit_refused_in_the_form(tab_home, snap_compare) -> None:
    assert snap_compare(make_app(tab_home), terminal_size=SIZE, run_before=_refused)
