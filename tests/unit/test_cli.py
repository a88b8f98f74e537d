"""The argparse front: `--project [DIR]` never swallows the command's own arguments."""

from pathlib import Path

from attend.cli import bind_project, build_parser


def parse(*argv: str):
    return build_parser().parse_args(bind_project(argv))


def test_a_bare_project_before_a_settings_key_leaves_the_key_in_place():
    args = parse("settings", "set", "--project", "attend.sensors.git.interval", "45s")
    assert (args.project, args.key, args.value) == (".", "attend.sensors.git.interval", "45s")


def test_a_bare_project_before_a_sensor_target_leaves_the_target_in_place():
    args = parse("explain", "--project", "git/new-commit")
    assert (args.project, args.target) == (".", "git/new-commit")


def test_project_takes_the_next_word_when_it_names_a_directory(tmp_path: Path):
    assert parse("sensors", "list", "--project", str(tmp_path)).project == str(tmp_path)
    assert parse("drain", "--project", "./sub").project == "./sub"
    assert parse("run", "--project", "..").project == ".."


def test_project_last_or_with_an_equals_sign_behaves_as_written(tmp_path: Path):
    assert parse("sensors", "--project").project == "."
    assert parse("sensors", f"--project={tmp_path}").project == str(tmp_path)
    assert parse("sensors").project is None


def test_words_after_a_double_dash_are_left_alone():
    assert bind_project(["test", "--", "--project", "x"]) == ["test", "--", "--project", "x"]


def _handlers(parser) -> list[str]:
    import argparse

    found = [parser.get_default("handler")]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_handlers(sub))
    return [h for h in found if h]


def test_every_command_names_a_handler_that_exists():
    from attend.cli import _resolve

    handlers = set(_handlers(build_parser()))
    assert len(handlers) == 22  # run, compile, explain, test, drain, spec schema, 10 sensors, 6 settings
    for target in handlers:
        assert callable(_resolve(target)), target
