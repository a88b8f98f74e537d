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


def _leaves(parser, path=()):
    """(command path, handler) for every command that takes no further subcommand."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, parser.get_default("handler"))]
    return [leaf for a in subs for name, sub in a.choices.items() for leaf in _leaves(sub, (*path, name))]


def test_every_command_names_a_handler_that_exists():
    from attend.cli import _resolve

    leaves = _leaves(build_parser())
    assert len(leaves) >= 22  # run, compile, explain, test, drain, spec schema, sensors ..., settings ...
    for path, target in leaves:
        assert target, f"attend {' '.join(path)} has no handler"
        assert callable(_resolve(target)), target


def test_a_project_before_the_command_word_is_read_by_the_command(tmp_path: Path):
    from attend.cli import _project_after_command

    def early(*argv: str):
        return build_parser().parse_args(_project_after_command(bind_project(argv)))

    assert early("--project", str(tmp_path), "sensors", "list").project == str(tmp_path)
    assert early(f"--project={tmp_path}", "settings", "set", "attend.sensors.git.interval", "45s").project == str(tmp_path)
    assert early("--project", "compile", "--check").project == "."
    assert _project_after_command(["--project=x", "test", "--", "--project=y"]) == ["test", "--project=x", "--", "--project=y"]
