"""`explain` and `attend test` never import trio or mcp (the lint path must start fast)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from types import SimpleNamespace
from attend.compiler import explain, testfiles, compile_sensor, diagnose
testfiles.main(SimpleNamespace(project_dir=sys.argv[1], paths=[], json=True))
explain.main(SimpleNamespace(project_dir=sys.argv[1], target="git", json=True))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("trio", "mcp", "anyio")))
"""


def test_explain_and_test_run_without_importing_trio_or_mcp(home) -> None:
    run = subprocess.run([sys.executable, "-c", PROBE, str(home.project)], capture_output=True, text=True,
                         env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"
