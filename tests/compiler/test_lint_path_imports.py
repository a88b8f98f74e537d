"""`explain` and `attend test` never import trio, mcp or textual (the lint path must start fast)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from types import SimpleNamespace
from attend.compiler import compile_sensor, diagnose
from attend.commands import explain, test as testfiles
testfiles.main(SimpleNamespace(project_dir=sys.argv[1], paths=[], json=True))
explain.main(SimpleNamespace(project_dir=sys.argv[1], target="git", json=True))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("trio", "mcp", "anyio", "textual", "nats", "asyncio")))
"""


def test_explain_and_test_run_without_importing_trio_mcp_or_textual(home) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("peers:\n  transport: nats\n")  # peers across machines chosen: no nats here
    run = subprocess.run([sys.executable, "-c", PROBE, str(home.project)], capture_output=True, text=True,
                         env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"


CHECK_PROBE = """
import sys
from attend.cli import main
main(['compile', '--check'])
heavy = ('trio', 'mcp', 'anyio', 'textual', 'nats', 'asyncio', 'watchfiles', 'cerberus', 'regex', 'importlib.metadata')
print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy[:6]))
# start-up cuts (issue 15): the check needs none of these, so none of them may creep back
print(sorted(m for m in ('typing', 'dataclasses', 'inspect', 'json', 'shutil', 'cerberus', 'importlib',
                          'attend.grammar.parse_errors') if m in sys.modules))
from importlib.metadata import version  # the real module loads as usual after the check
print(version('attend') != '')
"""


def test_compile_check_of_the_shipped_set_imports_no_runtime_cerberus_regex_or_metadata(home) -> None:
    run = subprocess.run([sys.executable, "-c", CHECK_PROBE], capture_output=True, text=True,
                         env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-3:] == ["[]", "[]", "True"]


PATCHES_PROBE = """
import re
compile_before = re.compile
from attend.cli import main
main(['compile', '--check'])
import yaml
patterns = [yaml.reader.Reader.NON_PRINTABLE, yaml.constructor.SafeConstructor.timestamp_regexp]
patterns += [regexp for rules in yaml.resolver.Resolver.yaml_implicit_resolvers.values() for _, regexp in rules]
print(len(patterns) > 10, sorted({type(p).__name__ for p in patterns}), re.compile is compile_before)
"""


def test_compile_check_patches_nothing_of_re_or_pyyaml(home) -> None:
    # Start-up is kept low by importing late, never by patching the standard library or a third-party
    # module (DESIGN.md "Layout"): PyYAML's patterns are its own `re.Pattern`s, `re.compile` is re's.
    run = subprocess.run([sys.executable, "-c", PATCHES_PROBE], capture_output=True, text=True,
                         env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "True ['Pattern'] True"


def test_a_pattern_only_the_regex_module_reads_is_still_valid_and_a_broken_one_positioned() -> None:
    from attend.grammar import regex_problem

    assert regex_problem(r"\p{Lu}+") is None  # `re` refuses it; `regex` (what matches runs) reads it
    assert regex_problem(r"(?<=a|bc)x") is None  # variable-width lookbehind, likewise
    message, offset = regex_problem("ab(c")
    assert message == "invalid regular expression: missing )" and offset == 2  # at the "(" left open


CLI_PROBE = """
import sys
import attend.cli
attend.cli.build_parser()
print(sorted(m for m in sys.modules if m.split(".")[0] in ("trio", "mcp", "anyio", "textual")))
"""


def test_the_cli_front_imports_no_textual_or_trio_until_a_command_needs_them() -> None:
    run = subprocess.run([sys.executable, "-c", CLI_PROBE], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"


TUI_PROBE = """
import sys
from attend.tui import SensorsApp
app = SensorsApp(sys.argv[1], refresh_seconds=None)
print(len(app.model.rows) > 0, sorted(m for m in sys.modules if m.split(".")[0] in ("trio", "mcp")))
"""


def test_the_sensors_tab_starts_without_importing_trio_or_mcp(home) -> None:
    run = subprocess.run([sys.executable, "-c", TUI_PROBE, str(home.project)], capture_output=True, text=True,
                         env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "True []"
