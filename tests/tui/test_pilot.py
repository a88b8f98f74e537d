"""The sensors tab driven through its real Textual app with the pilot (`App.run_test()`).

Every write is checked through `attend settings get` (the CLI), never the app's own state; every
refusal compares the bytes of every layer file before and after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tab_rig import (
    drive,
    edit_field,
    layer_bytes,
    make_app,
    rendered_lines,
    select_field,
    select_sensor,
    settings_get,
    submit_form,
)
from textual.widgets import DataTable, Static

from waiting import PATIENCE


def _table(app: Any, table_id: str = "sensors") -> DataTable:
    return app.screen.query_one(f"#{table_id}", DataTable)


async def _edit(pilot: Any, sensor: str, path: tuple[str, ...], text: str) -> str:
    """Select `sensor`'s field `path`, press `e`, enter `text`; the screen that is then on top."""
    select_sensor(pilot.app, sensor)
    await pilot.pause()
    return await edit_field(pilot, path, text)


async def _until(pilot: Any, holds: Any, timeout: float = PATIENCE) -> bool:
    """Let the app run until `holds()` (a real timer must fire: the suite's one patience, tests/waiting.py)."""
    waited = 0.0
    while not holds() and waited < timeout:
        await pilot.pause(0.05)
        waited += 0.05
    return holds()


def test_the_list_has_one_row_per_sensor_keyed_by_name_as_attend_sensors_lists_them(tab_home) -> None:
    listed = json.loads(tab_home.attend("sensors", "list", "--json").stdout)
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        table = _table(pilot.app)
        seen["keys"] = [k.value for k in table.rows]
        seen["build"] = [str(c) for c in table.get_row("build")]

    drive(app, scenario)
    assert seen["keys"] == [row["name"] for row in listed]
    assert "timeout" in seen["build"]  # the live state, failures with their message
    assert "the command ran longer than 10s and was killed" in seen["build"]
    assert "40s ago" in seen["build"]


def test_space_toggles_a_sensor_as_a_pending_change_written_only_by_apply(tab_home) -> None:
    before = layer_bytes(tab_home)
    app = make_app(tab_home)
    during: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("space")
        during["pending"] = [p.describe() for p in pilot.app.model.pending]
        during["bytes"] = layer_bytes(tab_home)
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        during["result"] = str(pilot.app.screen.query_one("#review-result", Static).render())

    drive(app, scenario)
    assert during["pending"] == ["attend.sensors.weather.enabled: true → false"]
    assert during["bytes"] == before  # pending: nothing written yet
    assert "written: attend.sensors.weather.enabled: true → false" in during["result"]
    got = settings_get(tab_home, "attend.sensors.weather.enabled")
    assert (got["value"], got["layer"]) == (False, "user")
    text = (tab_home.user_sensors / "weather.yaml").read_text()
    assert "# Wind at the office: the sensors tab's test sensor" in text  # comments kept
    assert "interval: 5m   # the slowest poll" in text


def test_enter_on_a_trigger_row_turns_the_trigger_off_and_the_poll_skips_it(tab_home) -> None:
    app = make_app(tab_home)

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.pause()
        select_field(pilot.app, ("triggers", "calm"))
        await pilot.press("enter")
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()

    drive(app, scenario)
    assert settings_get(tab_home, "attend.sensors.weather.triggers.calm.enabled")["value"] is False
    polled = json.loads(tab_home.attend("sensors", "poll", "weather", "--dry-run", "--json").stdout)
    assert [v["trigger"] for v in polled["triggers"]] == ["high-wind"]


def test_a_valid_edit_is_pending_until_applied_and_settings_get_then_reads_it(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        seen["after"] = await _edit(pilot, "weather", ("triggers", "high-wind", "magnitude"), "4.5")
        seen["pending"] = [p.describe() for p in pilot.app.model.pending]
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()

    drive(app, scenario)
    assert seen["after"] == "SensorsScreen"
    assert seen["pending"] == ["attend.sensors.weather.triggers.high-wind.magnitude: 3.0 → 4.5"]
    got = settings_get(tab_home, "attend.sensors.weather.triggers.high-wind.magnitude")
    assert (got["value"], got["layer"]) == (4.5, "user")


def test_an_edit_of_a_string_field_keeps_the_text_as_typed_even_after_a_hash(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        path = ("triggers", "high-wind", "description")
        seen["after"] = await _edit(pilot, "weather", path, "PR #{wind_speed_10m} needs review")
        seen["pending"] = [p.describe() for p in pilot.app.model.pending]

    drive(app, scenario)
    assert seen["after"] == "SensorsScreen"
    assert seen["pending"] == ["attend.sensors.weather.triggers.high-wind.description: "
                               "wind {wind_speed_10m} km/h → 'PR #{wind_speed_10m} needs review'"]


def test_an_invalid_edit_is_refused_in_the_form_with_the_reason_settings_set_gives_and_writes_nothing(tab_home) -> None:
    before = layer_bytes(tab_home)
    cli = tab_home.attend("settings", "set", "attend.sensors.weather.min_interval", "2h")
    assert cli.returncode == 3
    assert layer_bytes(tab_home) == before
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        seen["screen"] = await _edit(pilot, "weather", ("min_interval",), "2h")
        seen["error"] = str(pilot.app.screen.query_one("#error", Static).render())
        seen["pending"] = list(pilot.app.model.pending)
        await pilot.press("escape")

    drive(app, scenario)
    assert seen["screen"] == "EditForm"  # the form stays open with the value
    # the CLI's reason, where the tab (which writes only on apply) says it kept nothing (issue 27, item 9)
    cli_reason = cli.stderr.strip().removeprefix("attend: ").replace("nothing was written", "nothing was kept")
    assert seen["error"].strip() == app.model.shorten(cli_reason)
    assert seen["pending"] == []
    assert layer_bytes(tab_home) == before


def test_a_project_edit_that_chooses_what_runs_is_refused_for_trust_at_once(tab_home) -> None:
    before = layer_bytes(tab_home)
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await pilot.press("l")  # edits now write the project layer, as --project does
        await _edit(pilot, "weather", ("command", "timeout"), "20s")
        seen["error"] = str(pilot.app.screen.query_one("#error", Static).render())

    drive(app, scenario)
    assert "which chooses what runs" in seen["error"]
    assert "project_sensors" in seen["error"]
    assert layer_bytes(tab_home) == before


def test_d_resets_a_field_to_its_default_and_u_reverts_a_pending_change(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.pause()
        select_field(pilot.app, ("min_interval",))
        await pilot.press("d")
        select_field(pilot.app, ("interval",))
        await pilot.press("d")
        seen["both"] = [p.describe() for p in pilot.app.model.pending]
        await pilot.press("u")  # the highlighted field's change goes
        seen["left"] = [p.describe() for p in pilot.app.model.pending]
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()

    drive(app, scenario)
    got = settings_get(tab_home, "attend.sensors.weather.min_interval")
    assert got["layer"] == "default"
    assert seen["both"] == [f"attend.sensors.weather.min_interval: 30s → {got['default']} (unset)",
                            "attend.sensors.weather.interval: 5m → 60.0 (unset)"]
    assert seen["left"] == seen["both"][:1]
    assert settings_get(tab_home, "attend.sensors.weather.interval")["value"] == "5m"


def test_the_preview_polls_the_edited_sensor_once_and_writes_nothing(tab_home) -> None:
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    before = layer_bytes(tab_home)
    with open_project_store(layer_paths(tab_home.project)) as store:
        states_before = store.trigger_states("weather")
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await _edit(pilot, "weather", ("triggers", "calm", "initial"), "fire")
        await _edit(pilot, "weather", ("triggers", "calm", "where", "wind_speed_10m", "below"), "30")
        await pilot.press("p")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        seen["preview"] = str(pilot.app.screen.query_one("#preview", Static).render())

    drive(app, scenario)
    assert "dry run of weather with 2 pending changes" in seen["preview"]
    assert "poll: ok" in seen["preview"]
    assert "trigger calm:" in seen["preview"] and "trigger high-wind:" in seen["preview"]
    assert "calm: 25 km/h" in seen["preview"]  # what the edit would fire
    assert layer_bytes(tab_home) == before
    with open_project_store(layer_paths(tab_home.project)) as store:
        assert store.trigger_states("weather") == states_before
        assert store.journal(sensor="weather") == []


def test_quitting_with_pending_changes_asks_first_and_writes_nothing(tab_home) -> None:
    before = layer_bytes(tab_home)
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "build")
        await pilot.press("space")
        await pilot.press("q")
        await pilot.pause()
        seen["asked"] = str(pilot.app.screen.query_one("#question", Static).render())
        await pilot.press("n")
        await pilot.pause()
        seen["still"] = pilot.app.is_running and type(pilot.app.screen).__name__
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()

    drive(app, scenario)
    assert "1 change is pending and not written" in seen["asked"]
    assert seen["still"] == "SensorsScreen"
    assert app.return_code == 0 and not app.is_running
    assert layer_bytes(tab_home) == before


def test_apply_refuses_a_file_that_changed_on_disk_since_it_was_read(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("space")
        original = (tab_home.user_sensors / "weather.yaml").read_text()
        (tab_home.user_sensors / "weather.yaml").write_text(original + "# touched\n")
        seen["touched"] = (tab_home.user_sensors / "weather.yaml").read_bytes()
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        seen["result"] = str(pilot.app.screen.query_one("#review-result", Static).render())
        seen["pending"] = len(pilot.app.model.pending)

    drive(app, scenario)
    assert "changed on disk since it was read" in seen["result"]
    assert seen["pending"] == 1
    assert (tab_home.user_sensors / "weather.yaml").read_bytes() == seen["touched"]
    assert settings_get(tab_home, "attend.sensors.weather.enabled")["value"] is True


def test_copy_and_rename_go_through_sensors_copy_and_rename(tab_home) -> None:
    app = make_app(tab_home)

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("c")
        await pilot.pause()
        await submit_form(pilot, "weather-home")
        select_sensor(pilot.app, "build")
        await pilot.press("R")
        await pilot.pause()
        await submit_form(pilot, "make-q")
        await pilot.pause()

    drive(app, scenario)
    names = [r["name"] for r in json.loads(tab_home.attend("sensors", "list", "--json").stdout)]
    assert "weather-home" in names and "weather" in names
    assert "make-q" in names and "build" not in names
    assert "# Wind at the office" in (tab_home.user_sensors / "weather-home.yaml").read_text()


def test_deleting_a_shipped_sensor_is_refused_with_the_cli_reason_and_changes_no_byte(tab_home) -> None:
    before = layer_bytes(tab_home)
    cli = tab_home.attend("sensors", "delete", "git")
    assert cli.returncode == 3
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "git")
        await pilot.press("X")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        seen["notes"] = [n.message for n in pilot.app._notifications]

    drive(app, scenario)
    assert app.model.shorten(cli.stderr.strip().removeprefix("attend: ")) in seen["notes"]
    assert layer_bytes(tab_home) == before


def test_delete_after_asking_removes_the_user_file(tab_home) -> None:
    app = make_app(tab_home)

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "build")
        await pilot.press("X")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()

    drive(app, scenario)
    assert not (tab_home.user_sensors / "build.yaml").exists()


def test_slash_filters_the_list_and_escape_clears_the_filter(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await pilot.press("slash")
        await pilot.press(*"user")
        await pilot.pause()
        seen["filtered"] = [k.value for k in _table(pilot.app).rows]
        await pilot.press("escape")
        await pilot.pause()
        seen["all"] = len(_table(pilot.app).rows)

    drive(app, scenario)
    assert seen["filtered"] == ["build", "weather"]
    assert seen["all"] > 2


def test_a_filter_that_hides_every_sensor_then_cleared_shows_the_fields_again(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        seen["first"] = (_table(pilot.app).get_row_at(0)[0].plain, _table(pilot.app, "fields").row_count)
        await pilot.press("slash", *"zz-no-such-sensor")
        await pilot.pause()
        seen["hidden"] = (_table(pilot.app).row_count, _table(pilot.app, "fields").row_count)
        await pilot.press("escape")
        await pilot.pause()
        seen["cleared"] = (_table(pilot.app).get_row_at(0)[0].plain, _table(pilot.app, "fields").row_count)
        seen["detail"] = str(pilot.app.screen.query_one("#detail", Static).render())

    drive(app, scenario)
    assert seen["first"][1] > 0
    assert seen["hidden"] == (0, 0)
    assert seen["cleared"] == seen["first"]  # the same sensor highlighted, its fields shown again
    assert seen["detail"].startswith(seen["first"][0])


def test_question_mark_shows_every_key(tab_home) -> None:
    from attend.tui.bindings import KEYS

    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        # as shown, a wrapped description joined again (its lines continue under its column)
        seen["help"] = " ".join(" ".join(rendered_lines(pilot.app.screen.query_one("#help", Static))).split())

    drive(app, scenario)
    for keys, _, what in KEYS:
        assert keys in seen["help"] and what in seen["help"]


#: A tick that never comes within a test: what shows came from a change signal or a key.
NO_TICK = 3600.0


def test_the_open_tab_shows_a_store_change_without_its_timer(tab_home) -> None:
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    app = make_app(tab_home, refresh_seconds=NO_TICK)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        seen["before"] = str(_table(pilot.app).get_cell("build", "state"))
        with open_project_store(layer_paths(tab_home.project)) as store:
            store.update_status("build", state="ok", message="")
        await _until(pilot, lambda: str(_table(pilot.app).get_cell("build", "state")) == "ok")
        seen["after"] = str(_table(pilot.app).get_cell("build", "state"))

    drive(app, scenario)
    assert (seen["before"], seen["after"]) == ("timeout", "ok")


def test_a_new_sensor_file_appears_in_the_open_tab_without_its_timer(tab_home) -> None:
    app = make_app(tab_home, refresh_seconds=NO_TICK)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        tab_home.write_user_sensor("disk-home", "spec: 1\nname: disk-home\nkind: command\n"
                                   "command: {argv: [df]}\n")
        await _until(pilot, lambda: "disk-home" in [k.value for k in _table(pilot.app).rows])
        seen["keys"] = [k.value for k in _table(pilot.app).rows]

    drive(app, scenario)
    assert "disk-home" in seen["keys"]


def test_a_key_press_shows_the_live_state_at_once(tab_home) -> None:
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    app = make_app(tab_home, refresh_seconds=NO_TICK)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        pilot.app.model.on_change = None  # the change signal cut: only the key can show the new state
        with open_project_store(layer_paths(tab_home.project)) as store:
            store.update_status("build", state="ok", message="")
        saw = False

        def watcher_saw_it() -> bool:  # the watcher saw the commit and told nobody (asking consumes its flag)
            nonlocal saw
            saw = saw or pilot.app.model._watcher.changed("store")
            return saw

        assert await _until(pilot, watcher_saw_it)
        seen["before"] = str(_table(pilot.app).get_cell("build", "state"))
        await pilot.press("down")
        seen["after"] = str(_table(pilot.app).get_cell("build", "state"))

    drive(app, scenario)
    assert (seen["before"], seen["after"]) == ("timeout", "ok")


def test_s_shelves_the_sensor_through_sensors_shelve_and_capital_s_takes_it_down(tab_home) -> None:
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    def shelves() -> list[Any]:
        rows = json.loads(tab_home.attend("sensors", "list", "--json").stdout)
        return next(r for r in rows if r["name"] == "weather")["shelves"]

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("s")
        await pilot.pause()
        await submit_form(pilot, "2h deploy in progress")
        seen["marks"] = str(_table(pilot.app).get_cell("weather", "marks"))
        seen["listed"] = shelves()
        select_field(pilot.app, ("triggers", "calm"))
        await pilot.press("s")
        await pilot.pause()
        await submit_form(pilot, "soon")  # not a duration: the shelve command's own refusal
        seen["refused"] = str(pilot.app.screen.query_one("#error", Static).render())
        await pilot.press("escape")
        select_sensor(pilot.app, "weather")
        await pilot.press("S")
        await pilot.pause()

    drive(app, scenario)
    assert "shelved" in seen["marks"]
    assert [(s["trigger"], s["reason"]) for s in seen["listed"]] == [(None, "deploy in progress")]
    cli = tab_home.attend("sensors", "shelve", "weather/calm", "--for", "soon")
    assert seen["refused"].strip() == cli.stderr.strip().removeprefix("attend: ")
    assert shelves() == []


def test_h_shows_the_sensors_recent_polls_as_sensors_history_does(tab_home) -> None:
    # A baseline, a poll where high-wind enters, two quiet polls: the tab, like `sensors history`, shows the
    # one poll where something happened (and only its trigger that fired), and says the quiet ones are left out.
    weather = (Path(__file__).parent / "data" / "weather.yaml").read_text()
    for wind in (25, 50, 50, 50):
        tab_home.write_user_sensor("weather", weather.replace("'wind_speed_10m': 25", f"'wind_speed_10m': {wind}"))
        assert tab_home.attend("sensors", "poll", "weather").returncode == 0
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "weather")
        await pilot.press("h")
        await pilot.pause()
        seen["history"] = str(pilot.app.screen.query_one("#history", Static).render())

    drive(app, scenario)
    cli = tab_home.attend("sensors", "history", "weather", "--limit", "10")
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() in seen["history"]
    assert "high-wind: selected 1; enters" in seen["history"] and "calm:" not in seen["history"]
    assert seen["history"].count("  ok") == 1 and "(3 quiet polls left out:" in seen["history"]


def test_the_tab_shows_a_sensor_fixed_since_the_daemon_stopped_in_its_current_state(tab_home) -> None:
    # What a daemon that stopped leaves for a file that was invalid then (it is valid now): the tab reads
    # the files as they are now, as `attend sensors` does, not the error recorded at that load.
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    with open_project_store(layer_paths(tab_home.project)) as store:
        store.update_status("weather", state="invalid", message="weather.yaml:4:11: error: [bad-duration] old",
                            next_poll=None, state_source="load")
    listed = {row["name"]: row for row in json.loads(tab_home.attend("sensors", "list", "--json").stdout)}
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        seen["weather"] = [str(c) for c in _table(pilot.app).get_row("weather")]

    drive(app, scenario)
    assert listed["weather"]["state"] == "ok"
    assert "ok" in seen["weather"] and "invalid" not in seen["weather"]
    assert not any("bad-duration" in cell for cell in seen["weather"])


def test_a_refresh_tick_before_the_screen_has_its_columns_adds_no_row_and_the_tab_draws_after(tab_home) -> None:
    # The app's refresh timer starts in the app's on_mount, which may run before the screen's own
    # on_mount has added the table's columns; a tick then must wait, not add rows to a table without
    # columns (Textual: "More values provided than there are columns"). A slow on_mount makes it certain.
    import asyncio

    from attend.tui.app import SensorsApp, SensorsScreen

    class SlowScreen(SensorsScreen):
        async def on_mount(self) -> None:  # type: ignore[override]
            # Textual runs this, then SensorsScreen.on_mount (each class's handler, subclass first).
            await asyncio.sleep(0.3)  # several refresh ticks pass first

    class SlowApp(SensorsApp):
        def get_default_screen(self) -> Any:
            return SlowScreen(self.model)

    app = SlowApp(tab_home.project, refresh_seconds=0.02)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        await _until(pilot, lambda: _table(pilot.app).row_count > 0)
        seen["rows"] = [k.value for k in _table(pilot.app).rows]

    drive(app, scenario)
    assert "weather" in seen["rows"]


def test_an_escape_sequence_in_a_status_message_is_shown_escaped_in_the_list_and_the_detail(tab_home) -> None:
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    title = "\x1b]0;PWNED\x07"
    with open_project_store(layer_paths(tab_home.project)) as store:  # a command's stderr, as the poll keeps it
        store.update_status("build", state="exec_failed", message=f"exit 1: {title}\u202eboom\x9b2J")
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "build")
        await pilot.pause()
        seen["row"] = " ".join(str(c) for c in _table(pilot.app).get_row("build"))
        seen["detail"] = str(pilot.app.screen.query_one("#detail", Static).render())

    drive(app, scenario)
    for shown in (seen["row"], seen["detail"]):
        assert "\\x1b]0;PWNED\\x07\\u202eboom\\x9b2J" in shown, shown
        assert not any(c in shown for c in "\x1b\x07\u202e\x9b")


#: A subscribed resource sensor on an inline sse server with a literal token in a header.
BOARD = (Path(__file__).parents[1] / "data" / "mcp" / "board.yaml").read_text()


def test_the_detail_of_a_subscribed_resource_sensor_on_a_remote_server_says_how_it_polls_and_hides_the_token(
    tab_home,
) -> None:
    tab_home.write_user_sensor("board", BOARD)
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "board")
        await pilot.pause()
        seen["detail"] = str(pilot.app.screen.query_one("#detail", Static).render())
        fields = _table(pilot.app, "fields")
        seen["fields"] = {str(key.value): " ".join(str(c) for c in fields.get_row(key)) for key in fields.rows}

    drive(app, scenario)
    detail, fields = seen["detail"], seen["fields"]
    assert "mcp server: mcp.example: sse at https://mcp.example/sse; headers: Authorization, X-Team" in detail
    assert "mcp reads: resource board://issues" in detail and "mcp subscribe: yes: read again as soon as" in detail
    assert "https://mcp.example/sse" in fields["mcp.server.url"] and "sse" in fields["mcp.server.type"]
    assert "board://issues" in fields["mcp.resource"] and "true" in fields["mcp.subscribe"]
    assert "Bearer <hidden: 14 characters>" in fields["mcp.server.headers.Authorization"]
    assert "s3cret" not in detail + " ".join(fields.values())


def test_the_title_names_each_live_session_and_its_conduit(tab_home) -> None:
    import subprocess

    from attend.peers.identity import process_start
    from attend.runtime.store import open_project_store
    from attend.spec import layer_paths

    claude = subprocess.Popen(["sleep", "600"])  # a Claude Code process whose session its hooks alone serve
    try:
        with open_project_store(layer_paths(tab_home.project)) as store:
            store.register_session("hooked", host=(claude.pid, process_start(claude.pid)))
        app = make_app(tab_home)
        seen: dict[str, Any] = {}

        async def scenario(pilot: Any) -> None:
            await _until(pilot, lambda: _table(pilot.app).row_count > 0)
            seen["title"] = str(pilot.app.screen.query_one("#title", Static).render())

        drive(app, scenario)
    finally:
        claude.kill()
        claude.wait()
    assert "sessions: hooked hooks" in seen["title"], seen["title"]


#: A command sensor whose command's environment holds a credential and whose lines quote command lines.
LEAKY = """\
spec: 1
name: leaky
kind: command
interval: 1h
command:
  argv: [cat, leaky.json]
  env: {API_TOKEN: s3cretS3cretS3cret}
triggers:
  started:
    path: $[*]
    key: id
    on: added
    magnitude: 3
    description: "started: {cmd}"
"""
#: Secrets of the shapes attend.redact knows, each in a command line a process might have.
LEAKS = {"ghp_Q7wK2mZ9Q7wK2mZ9Q7wK2mZ9Q7wK2mZ9Ab3d": "deploy --token ghp_Q7wK2mZ9Q7wK2mZ9Q7wK2mZ9Q7wK2mZ9Ab3d",
         "sk-ant-api03-Zx9YZx9YZx9YZx9YZx9Y": 'bash -c "env ANTHROPIC_API_KEY=sk-ant-api03-Zx9YZx9YZx9YZx9YZx9Y claude"',
         "hunter2pw": "mysql -uroot -phunter2pw shop"}


def test_the_tab_shows_no_secret_in_a_sensors_fields_history_or_preview(tab_home) -> None:
    # The tab is one of the renderings the redaction policy covers (issue 33, item 1): the field holding a
    # credential, the history of lines quoting command lines, and a dry run that fires one more.
    tab_home.write_user_sensor("leaky", LEAKY)
    items = tab_home.project / "leaky.json"
    items.write_text("[]")
    assert tab_home.attend("sensors", "poll", "leaky").returncode == 0  # the baseline
    commands = list(LEAKS.values())
    items.write_text(json.dumps([{"id": i, "cmd": c} for i, c in enumerate(commands[:2])]))
    polled = tab_home.attend("sensors", "poll", "leaky")
    assert polled.returncode == 0 and "--token <redacted>" in polled.stdout, polled.stdout + polled.stderr
    items.write_text(json.dumps([{"id": i, "cmd": c} for i, c in enumerate(commands)]))  # the preview fires #2
    app = make_app(tab_home)
    seen: dict[str, Any] = {}

    async def scenario(pilot: Any) -> None:
        select_sensor(pilot.app, "leaky")
        await pilot.pause()
        fields = _table(pilot.app, "fields")
        seen["fields"] = " ".join(" ".join(str(c) for c in fields.get_row(key)) for key in fields.rows)
        seen["detail"] = str(pilot.app.screen.query_one("#detail", Static).render())
        await pilot.press("h")
        await pilot.pause()
        seen["history"] = str(pilot.app.screen.query_one("#history", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        select_sensor(pilot.app, "leaky")
        await pilot.press("p")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        seen["preview"] = str(pilot.app.screen.query_one("#preview", Static).render())

    drive(app, scenario)
    assert "<redacted>" in seen["fields"], seen["fields"]
    assert "started: deploy --token <redacted>" in seen["history"], seen["history"]
    assert "ANTHROPIC_API_KEY=<redacted> claude" in seen["history"], seen["history"]
    assert "started: mysql -uroot -p<redacted> shop" in seen["preview"], seen["preview"]
    for where, shown in seen.items():
        for secret in (*LEAKS, "s3cretS3cret"):
            assert secret[:8] not in shown, (where, secret, shown)
