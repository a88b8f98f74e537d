"""What `wake_on` watches and whom a change wakes (runtime/wake_targets.py): pure, on real folders."""

from __future__ import annotations

from pathlib import Path

from attend.runtime.watching.targets import plan_watches, watch_target


def test_a_named_file_watches_its_folder_flat_and_wakes_on_that_name_only(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text("{}")
    target = watch_target("data.json", tmp_path)
    assert (target.base, target.recursive) == (tmp_path, False)
    plan = plan_watches({"s": [target]})
    assert plan.flat == {tmp_path} and plan.recursive == set()
    assert plan.woken([str(tmp_path / "data.json")]) == ({"s"}, False)
    assert plan.woken([str(tmp_path / "other.json"), str(tmp_path / "data.json.tmp")]) == (set(), False)


def test_a_named_folder_covers_everything_under_it(tmp_path: Path) -> None:
    (tmp_path / "inbox" / "deep").mkdir(parents=True)
    plan = plan_watches({"s": [watch_target("inbox", tmp_path)]})
    assert plan.recursive == {tmp_path / "inbox"}
    assert plan.woken([str(tmp_path / "inbox" / "deep" / "a.txt")]) == ({"s"}, False)
    assert plan.woken([str(tmp_path / "outbox.txt")]) == (set(), False)


def test_a_globstar_watches_its_base_recursively_and_matches_dot_files(tmp_path: Path) -> None:
    (tmp_path / ".git" / "refs").mkdir(parents=True)
    target = watch_target(".git/refs/**", tmp_path)
    assert (target.base, target.recursive) == (tmp_path / ".git" / "refs", True)
    plan = plan_watches({"git": [target]})
    assert plan.woken([str(tmp_path / ".git/refs/remotes/origin/.main.lock")]) == ({"git"}, False)
    assert plan.woken([str(tmp_path / ".git/objects/ab/cdef")]) == (set(), False)


def test_a_one_level_glob_is_flat_and_a_glob_with_a_folder_part_is_recursive(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    flat = watch_target("logs/*.json", tmp_path)
    deep = watch_target("logs/*/status.json", tmp_path)
    assert (flat.base, flat.recursive, deep.base, deep.recursive) == (tmp_path / "logs", False, tmp_path / "logs", True)
    plan = plan_watches({"flat": [flat], "deep": [deep]})
    assert plan.woken([str(tmp_path / "logs/a.json")]) == ({"flat"}, False)
    assert plan.woken([str(tmp_path / "logs/job1/status.json")]) == ({"deep"}, False)


def test_tilde_is_the_home_given_and_absolute_paths_stay(tmp_path: Path) -> None:
    assert watch_target("~/notes.md", tmp_path / "p", home=str(tmp_path)).glob == str(tmp_path / "notes.md")
    assert watch_target(str(tmp_path / "x.json"), Path("/elsewhere")).base == tmp_path


def test_glob_characters_in_the_project_folder_name_are_literal(tmp_path: Path) -> None:
    project = tmp_path / "a[1]"
    project.mkdir()
    plan = plan_watches({"s": [watch_target("f.json", project)], "g": [watch_target("*.json", project)]})
    assert plan.woken([str(project / "f.json")]) == ({"s", "g"}, False)
    assert plan.woken([str(tmp_path / "a1" / "f.json")]) == (set(), False)


def test_a_missing_base_is_watched_through_its_nearest_folder_and_its_creation_replans(tmp_path: Path) -> None:
    plan = plan_watches({"git": [watch_target(".git/refs/**", tmp_path)]})
    assert plan.flat == {tmp_path} and plan.missing == {tmp_path / ".git" / "refs": tmp_path}
    assert plan.woken([str(tmp_path / ".git")]) == ({"git"}, True)
    assert plan.woken([str(tmp_path / "README.md")]) == (set(), False)


def test_nested_recursive_folders_are_watched_once(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    plan = plan_watches({"outer": [watch_target("a/**", tmp_path)], "inner": [watch_target("a/b/**", tmp_path)],
                         "file": [watch_target("a/b/c.json", tmp_path)]})
    assert plan.recursive == {tmp_path / "a"} and plan.flat == set()
    assert plan.woken([str(tmp_path / "a/b/c.json")]) == ({"outer", "inner", "file"}, False)


def test_the_wake_on_example_in_docs_runtime_md_is_a_valid_sensor_and_resolves(home) -> None:
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "runtime.md").read_text()
    section = doc.split("## `wake_on`: polling on a change", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    path = home.write_user_sensor("feed", "spec: 1\nname: feed\nkind: command\ncommand: {argv: [cat, data/status.json]}\n"
                                  + block)
    run = home.attend("compile", "--check", str(path))
    assert run.returncode == 0, run.stdout + run.stderr
    import yaml

    patterns = yaml.safe_load(block)["wake_on"]
    targets = [watch_target(p, home.project, home=str(home.root)) for p in patterns]
    assert [(t.base, t.recursive) for t in targets] == [
        (home.project / "data", False), (home.project / "inbox", False), (home.root / ".cache" / "builds", True)]


def test_a_project_files_wake_on_outside_the_project_is_refused_and_logged_once(home) -> None:
    from types import SimpleNamespace

    from attend.compiler import compile_sensor
    from attend.runtime.watching.wake import WakeHub
    from attend.spec import load_set

    home.write_user_sensor("feed", "spec: 1\nname: feed\nkind: command\ncommand: {argv: [cat, f.json]}\n"
                                   "wake_on: [\"~/notes/**\"]\n")
    sensor = load_set(home.project).sensors["feed"]
    ctx = SimpleNamespace(project_dir=home.project, env={"HOME": str(home.root)}, crate_instances={})
    logged: list[str] = []
    hub = WakeHub(home.project, ctx.env, logged.append)
    hub.declare(compile_sensor(sensor), ctx)  # the user layer may watch the home folder
    assert hub._patterns["feed"] == ("~/notes/**",) and logged == []

    home.write_project_sensor("feed", "wake_on: [data/f.json, ../elsewhere.json, \"~/notes/**\", /etc/hosts]\n")
    sensor = load_set(home.project).sensors["feed"]
    assert sensor.status == "ok"  # tuning: no trust needed, and the project's own paths are watched
    hub.declare(compile_sensor(sensor), ctx)
    hub.declare(compile_sensor(sensor), ctx)
    assert hub._patterns["feed"] == ("data/f.json",)
    assert [line.split(" not watched")[0] for line in logged] == [
        "sensor feed: wake_on ../elsewhere.json", "sensor feed: wake_on ~/notes/**", "sensor feed: wake_on /etc/hosts"]

    run = home.attend("explain", "feed")
    assert "    ../elsewhere.json  (file)  → not watched: outside the project" in run.stdout
    assert "    data/f.json  (file)  → watches " in run.stdout


def test_a_project_pattern_through_a_symlink_out_of_the_project_is_outside(tmp_path) -> None:
    from attend.runtime.watching.targets import inside_project, watch_target

    project = tmp_path / "project"
    (tmp_path / "outside").mkdir()
    (project / "inner").mkdir(parents=True)
    (project / "escape").symlink_to(tmp_path / "outside")
    (project / "here").symlink_to(project / "inner")
    assert not inside_project(watch_target("escape/**", project), project)
    assert not inside_project(watch_target("escape/new/x.json", project), project)
    assert inside_project(watch_target("here/**", project), project)
    assert inside_project(watch_target("inner/*.json", project), project)
