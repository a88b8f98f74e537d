"""Random YAML and random bytes through `compile --check`: positioned diagnostics, exit 0 or 1, never a traceback.

Most examples run in-process through `attend.compiler.check.run` (fast); a few go through the real CLI
as a subprocess, the way a user meets it.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attend.commands.check import run
from property_examples import examples

#: `file:line:col: error|warning: [code] message`, as DESIGN.md prints a diagnostic.
DIAGNOSTIC = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (error|warning): \[[a-z-]+\] .+$")

FIELDS = ["spec", "name", "kind", "interval", "min_interval", "lane", "triggers", "command", "mcp", "crate",
          "on", "key", "where", "path", "argv", "magnitude", "description", "author", "enabled", "<<", "x"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=20), st.sampled_from(["5m", "30s", "1h", "command", "mcp", "added",
                                                           "$.items[*]", "{x}", "*", "&a", "*a", "!!str"]))
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=8)), inner, max_size=5)),
    max_leaves=25)
yaml_text = st.one_of(
    documents.map(lambda doc: _dump(doc)),
    st.lists(st.sampled_from(["spec: 1\n", "name: f\n", "kind: command\n", "command:\n", "  argv: [a]\n",
                              "triggers:\n", "  t:\n", "    on: added\n", "    where: {a: 1}\n", "x: &a [1]\n",
                              "y: *a\n", "- z\n", "  - [\n", "\t\n", "a: 'b\n", "k: !!binary aGk=\n",
                              "interval: 5m\n", "interval: 2x\n", "? [a]\n: b\n"]), max_size=12).map("".join),
    st.text(max_size=200),
)


def _dump(doc: object) -> str:
    import yaml

    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def assert_checked(code: int, out: str, err: str, file: str) -> None:
    assert code in (0, 1), (code, out, err)
    assert "Traceback" not in out + err
    lines = [line for line in out.splitlines() if not line.startswith("    ")]
    for line in lines:
        match = DIAGNOSTIC.match(line)
        assert match, line
        assert int(match["line"]) >= 1 and int(match["col"]) >= 1
    if code == 1:
        assert any(": error: " in line for line in lines)


def check_bytes(folder: Path, payload: bytes) -> tuple[int, str, str]:
    target = folder / "fuzz.yaml"
    target.write_bytes(payload)
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    code = run([str(target), str(folder / "anchor.yaml")], str(folder), env=env, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _fresh(tmp_path_factory, prefix: str) -> Path:
    """A new empty folder for one example (`mkdtemp`: `tmp_path_factory.mktemp` rescans its numbered
    folders at every call, which grew to milliseconds an example)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=tmp_path_factory.getbasetemp()))


def _folder(tmp_path_factory) -> Path:
    folder = _fresh(tmp_path_factory, "fuzz")
    # A file with a known problem beside the fuzzed one: it must always be reported (nothing is lost).
    (folder / "anchor.yaml").write_text("spec: 1\nname: anchor\nkind: crate\nintervall: 5\n")
    return folder


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=yaml_text)
def test_random_yaml_gets_positioned_diagnostics_and_never_a_traceback(tmp_path_factory, text: str) -> None:
    folder = _folder(tmp_path_factory)
    code, out, err = check_bytes(folder, text.encode("utf-8", "surrogatepass"))
    assert_checked(code, out, err, "fuzz.yaml")
    assert "anchor.yaml:4:1: error: [unknown-field]" in out


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.binary(max_size=400))
def test_random_bytes_get_positioned_diagnostics_and_never_a_traceback(tmp_path_factory, payload: bytes) -> None:
    folder = _folder(tmp_path_factory)
    code, out, err = check_bytes(folder, payload)
    assert_checked(code, out, err, "fuzz.yaml")
    assert "anchor.yaml:4:1: error: [unknown-field]" in out


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.one_of(yaml_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)))
def test_random_input_through_the_real_cli_never_prints_a_traceback(tmp_path_factory, payload: bytes) -> None:
    folder = _folder(tmp_path_factory)
    (folder / "fuzz.yaml").write_bytes(payload)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(folder), XDG_CONFIG_HOME=str(folder / "config"))
    result = subprocess.run([sys.executable, "-m", "attend", "compile", "--check", "fuzz.yaml", "anchor.yaml"],
                            cwd=folder, env=env, capture_output=True, text=True, timeout=60)
    assert_checked(result.returncode, result.stdout, result.stderr, "fuzz.yaml")
    assert "anchor.yaml:4:1: error: [unknown-field]" in result.stdout


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=yaml_text, project=yaml_text)
def test_random_layer_files_merge_and_check_without_a_traceback(tmp_path_factory, user: str, project: str) -> None:
    home = _fresh(tmp_path_factory, "layers")
    user_dir = home / "config" / "attend" / "sensors"
    project_dir = home / "project" / ".claude" / "attend" / "sensors"
    user_dir.mkdir(parents=True)
    project_dir.mkdir(parents=True)
    (user_dir / "fuzz.yaml").write_bytes(user.encode("utf-8", "surrogatepass"))
    (project_dir / "fuzz.yaml").write_bytes(project.encode("utf-8", "surrogatepass"))
    (user_dir / "anchor.yaml").write_text("spec: 1\nname: anchor\nkind: crate\nintervall: 5\n")
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
    code = run([], str(home / "project"), env=env, out=out, err=err)
    assert_checked(code, out.getvalue(), err.getvalue(), "fuzz.yaml")
    assert "anchor.yaml:4:1: error: [unknown-field]" in out.getvalue()


expressions = st.one_of(st.text(max_size=15), st.sampled_from(["$", "$.a", "$..*", "$[-1]", "{x}", "{{", "}", "[a-",
                                                               "*", "re:(", "$['a']", "{previous.x}"]))
where_values = st.one_of(
    expressions, st.integers(), st.floats(), st.booleans(), st.none(), st.lists(expressions, max_size=3),
    st.dictionaries(st.sampled_from(["equals", "not", "in", "contains", "like", "matches", "above", "below", "x"]),
                    st.one_of(expressions, st.integers(), st.lists(expressions, max_size=2)), max_size=3))
triggers = st.fixed_dictionaries(
    {"on": st.sampled_from(["added", "removed", "changed", "enters", "leaves"]), "key": expressions,
     "where": st.dictionaries(expressions, where_values, min_size=1, max_size=3)},
    optional={"path": expressions, "description": expressions, "author": expressions,
              "match": st.sampled_from(["all", "any"])})


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trigger=triggers)
def test_random_expressions_in_a_well_formed_sensor_reach_the_compiler_check_safely(tmp_path_factory,
                                                                                    trigger: dict) -> None:
    folder = _folder(tmp_path_factory)
    document = {"spec": 1, "name": "fuzz", "kind": "crate", "triggers": {"t": trigger}}
    code, out, err = check_bytes(folder, _dump(document).encode())
    assert_checked(code, out, err, "fuzz.yaml")
