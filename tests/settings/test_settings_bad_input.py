"""Bad input never reaches a traceback: any key, value or name ends in a defined exit code."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import main_reusing_parsers as main

from property_examples import examples

#: The exit codes of settings and management commands (0 done, 1 lint found, 2 usage, 3 rejected,
#: 4 overridden, 5 write failed); 70 would be attend's internal-error code.
DEFINED = {0, 2, 3, 4}

FIELD_WORDS = ["interval", "threshold", "triggers", "high-wind", "where", "wind_speed_*", "above", "command",
               "argv", "lane", "enabled", "magnitude", "on", "path", "x", "", ".", '"', "..", "*", "0"]
keys = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(FIELD_WORDS), max_size=6).map(
        lambda parts: ".".join(["attend", "sensors", "weather", *parts])),
    st.lists(st.sampled_from(["engagement", "governor", "event", "limit", "project_sensors", "x"]), max_size=3).map(
        lambda parts: ".".join(["attend", *parts])),
)
yaml_values = st.one_of(st.text(max_size=20), st.sampled_from(
    ["5s", "-1", "[1, 2]", "{above: 3}", "{", "null", "true", "*x", "!!python/object:os.system ls", "1e400"]))
def _run(argv: list[str]) -> int:
    """The exit code of the CLI; argparse's own usage errors (a VALUE like `-:`) exit 2 by SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


relaxed = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@relaxed
@given(keys)
def test_get_and_help_of_any_key_end_in_a_defined_exit_code(home, weather, capsys, key):
    for command in ("get", "help"):
        code = _run(["settings", command, key])
        err = capsys.readouterr().err
        assert code in DEFINED, (key, err)
        assert "Traceback" not in err and "internal error" not in err


@relaxed
@given(keys, yaml_values)
def test_set_of_any_key_and_value_ends_in_a_defined_exit_code(home, weather, capsys, key, value):
    code = _run(["settings", "set", key, value])
    err = capsys.readouterr().err
    assert code in DEFINED, (key, value, err)
    assert "internal error" not in err


@relaxed
@given(st.one_of(st.text(max_size=20), st.from_regex(r"[a-z0-9][a-z0-9_-]{0,8}", fullmatch=True),
                 st.sampled_from(["../x", "..", "/etc/x", "a/../../b", "x.yaml", "weather/../../y"])))
def test_any_name_given_to_copy_rename_or_delete_is_refused_or_stays_in_the_layer_folder(home, weather, capsys,
                                                                                        name):
    for args in (("copy", "weather", name), ("delete", name)):
        code = _run(["sensors", *args])
        err = capsys.readouterr().err
        assert code in DEFINED, (args, err)
        assert "internal error" not in err
    folders = {home.user_sensors, home.project_sensors}
    written = [p for p in home.root.parent.rglob("*") if p.is_file() and home.cache not in p.parents]
    assert [p for p in written if p.parent not in folders] == []
