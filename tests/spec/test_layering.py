"""The package rule (DESIGN.md, Layout), read from the source so an import inside a function counts too:
spec is the contract layer and imports only the leaves, never grammar, compiler, settings or runtime;
sensors and peers sit under runtime and import neither runtime, commands nor cli, and peers imports no
sensors; settings sits beside runtime and imports neither runtime nor the commands."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent.parent / "src" / "attend"
SPEC = SRC / "spec"
FORBIDDEN = ("attend.grammar", "attend.compiler", "attend.settings", "attend.runtime", "attend.commands",
             "attend.cli", "attend.tui", "attend.sensors", "attend.peers")
#: What each package below runtime may not import.
BELOW_RUNTIME = {
    "sensors": ("attend.runtime", "attend.commands", "attend.cli"),
    "peers": ("attend.runtime", "attend.commands", "attend.cli", "attend.sensors"),
}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def forbidden_imports(path: Path, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(name for name in imported_modules(path)
                  if any(name == layer or name.startswith(layer + ".") for layer in forbidden))


@pytest.mark.parametrize("path", sorted(SPEC.glob("*.py")), ids=lambda p: p.name)
def test_a_spec_module_imports_no_module_above_the_leaves(path: Path) -> None:
    assert forbidden_imports(path, FORBIDDEN) == []


SETTINGS = SPEC.parent / "settings"
ABOVE_SETTINGS = ("attend.runtime", "attend.commands", "attend.cli", "attend.tui", "attend.sensors", "attend.peers")


@pytest.mark.parametrize("path", sorted(SETTINGS.glob("*.py")), ids=lambda p: p.name)
def test_a_settings_module_imports_neither_runtime_nor_the_commands(path: Path) -> None:
    # settings sits beside runtime (DESIGN.md, Layout): a config key's type, default and text come from the
    # spec's CONFIG_SCHEMA, never from the runtime's parameter classes.
    assert forbidden_imports(path, ABOVE_SETTINGS) == []


@pytest.mark.parametrize("path", sorted(p for package in BELOW_RUNTIME for p in (SRC / package).rglob("*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_sensors_or_peers_module_imports_neither_runtime_commands_nor_cli(path: Path) -> None:
    package = path.relative_to(SRC).parts[0]
    assert forbidden_imports(path, BELOW_RUNTIME[package]) == []
