"""The public Python API: `attend` exports its six names lazily, and the package ships `py.typed`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attend


def test_compile_trigger_returns_an_attend_compiled_trigger_whose_fires_are_attend_fires() -> None:
    trigger = attend.compile_trigger({"path": "$.items[*]", "key": "id", "on": "added", "description": "new {id}"})
    assert isinstance(trigger, attend.CompiledTrigger)
    _, state = trigger.step(None, {"items": []}, now=0.0)
    fires, _ = trigger.step(state, {"items": [{"id": 7}]}, now=1.0)
    assert [type(f) for f in fires] == [attend.Fire] and fires[0].description == "new 7"


def test_the_public_names_are_exactly_all_and_import_the_compiler_only_when_asked() -> None:
    assert sorted(attend.__all__) == ["CompileError", "CompiledTrigger", "Fire", "PathSyntaxError", "compile_path",
                                      "compile_trigger"]
    probe = ("import sys, attend; before = 'attend.compiler' in sys.modules; attend.Fire; "
             "print(before, 'attend.compiler' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]


def test_the_package_ships_py_typed() -> None:
    assert (Path(attend.__file__).parent / "py.typed").is_file()
