"""Every example in docs/authoring.md is checked: each fenced block carries a `<!-- check: … -->` marker
saying how (a sensor file, a test file, a trigger, a layer override, config, the Python sensor)."""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from pathlib import Path

import pytest

import attend
from attend.compiler import compile_sensor
from attend.runtime.kinds import PollContext
from attend.runtime.kinds.crate import poll
from attend.runtime.store import Store
from attend.spec import layer_paths, load_paths, load_set
from attend.spec.loaded import MergedSensor
from attend.spec.loading import parse_yaml

DOC = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"

#: A marker line, then a fenced block: (check kind, argument, language, body).
BLOCK = re.compile(r"<!-- check: (\S+)(?: (\S+))? -->\n```(\w+)\n(.*?)\n```", re.S)


def examples(kind: str) -> list[tuple[str, str]]:
    """The (argument, body) of every block of `kind` in the guide."""
    return [(arg, body) for k, arg, _, body in BLOCK.findall(DOC.read_text()) if k == kind]


def test_every_yaml_python_and_toml_block_in_the_guide_is_marked_for_a_check():
    text = DOC.read_text()
    fences = re.findall(r"(?:(<!-- check: [^>]+ -->)\n)?```(yaml|python|toml)\n", text)
    unmarked = [lang for marker, lang in fences if not marker]
    assert fences and not unmarked


def write_walkthrough(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for kind in ("sensor", "test"):
        for name, body in examples(kind):
            (folder / name).write_text(body + "\n")
            names.append(name)
    return names


def test_the_guide_s_sensor_files_pass_compile_check_strict(home, tmp_path):
    names = write_walkthrough(tmp_path / "doc")
    assert {"net-links.yaml", "net-links.test.yaml", "loadavg.yaml"} <= set(names)
    done = home.attend("compile", "--check", "--strict", str(tmp_path / "doc"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors, 0 warnings" in done.stdout + done.stderr


def test_the_walkthrough_sensor_passes_its_test_file(home, tmp_path):
    write_walkthrough(tmp_path / "doc")
    done = home.attend("test", str(tmp_path / "doc" / "net-links.test.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "net-links, 3 polls" in done.stdout


@pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2's ip is not installed")
def test_the_walkthrough_sensor_polls_for_real_from_the_user_layer(home):
    ((name, body),) = [(n, b) for n, b in examples("sensor") if n == "net-links.yaml"]
    home.write_user_sensor("net-links", body + "\n")
    done = home.attend("sensors", "poll", "net-links", "--dry-run", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"ifname"' in done.stdout


def test_the_guide_s_trigger_snippets_compile():
    snippets = examples("trigger")
    assert len(snippets) >= 3
    for i, (_, body) in enumerate(snippets):
        parsed = parse_yaml(body, "docs/authoring.md")  # attend's own loader: `on` is a key, not True
        assert not parsed.diagnostics
        trigger = attend.compile_trigger(parsed.data, name=f"doc-{i}")
        assert trigger.name == f"doc-{i}"


def test_the_override_example_tunes_the_shipped_git_sensor(home):
    ((name, body),) = examples("override")
    home.write_user_sensor(Path(name).stem, body + "\n")
    done = home.attend("compile", "--check", "--strict")
    assert done.returncode == 0, done.stdout + done.stderr
    git = load_set(home.project, home.env()).sensors["git"]
    assert (git.layer, git.data["interval"]) == ("user", 120.0)
    assert git.data["triggers"]["new-dirty-file"]["magnitude"] == 0.25
    assert git.data["triggers"]["new-dirty-file"]["on"] == "added"  # the rest comes from the shipped file


def test_the_config_example_lets_a_listed_project_run_its_command_sensor(home):
    ((_, body),) = examples("config")
    listed = home.root / "src" / "my-service"
    sensor = dict(examples("sensor"))["net-links.yaml"]
    folder = listed / ".claude" / "attend" / "sensors"
    folder.mkdir(parents=True)
    (folder / "net-links.yaml").write_text(sensor + "\n")
    assert load_set(listed, home.env()).sensors["net-links"].status == "refused"
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(body + "\n")
    assert load_set(listed, home.env()).sensors["net-links"].status == "ok"


@pytest.fixture
def loadavg_package(tmp_path, monkeypatch):
    """The guide's Python sensor installed as a package with the guide's entry point."""
    ((module, code),) = examples("python")
    ((_, toml_text),) = examples("entry-point")
    points = tomllib.loads(toml_text)["project"]["entry-points"]["attend.sensors"]
    site = tmp_path / "site"
    package, _, leaf = module.partition(".")
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    (site / package / f"{leaf}.py").write_text(code + "\n")
    info = site / "my_sensors-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-sensors\nVersion: 1.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in points.items())
    (info / "entry_points.txt").write_text("[attend.sensors]\n" + lines)
    monkeypatch.syspath_prepend(str(site))
    yield points
    import sys

    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="needs Linux's /proc/loadavg")
async def test_the_python_sensor_of_the_guide_registers_and_polls(loadavg_package, tmp_path):
    assert loadavg_package == {"loadavg": "my_sensors.loadavg:LoadSensor"}
    write_walkthrough(tmp_path / "doc")
    sensor = load_paths([tmp_path / "doc" / "loadavg.yaml"], tmp_path, os.environ).sensors["loadavg"]
    compiled = compile_sensor(sensor)
    with Store(tmp_path / "attend.db") as store:
        ctx = PollContext(project_dir=tmp_path, env={}, paths=layer_paths(tmp_path, os.environ), store=store)
        outcome = await poll(compiled, ctx)
        assert outcome.ok, outcome.message
        assert set(outcome.result) == {"load1", "load5", "cpus", "per_cpu"}
        fires = compiled.step(None, outcome.result).fires
        assert fires == []  # the first poll is a baseline
        # the same sensor with its crate block pointed elsewhere (a merged sensor's document is read once: a new one)
        moved = MergedSensor(name=sensor.name, data={**sensor.data, "crate": {"path": str(tmp_path / "missing")}},
                             origins=sensor.origins, files=sensor.files)
        outcome = await poll(compile_sensor(moved), ctx)
        assert outcome.state == "unavailable" and "cannot read" in outcome.message
