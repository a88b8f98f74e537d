"""spec is the contract layer: it imports only the leaves, never grammar, compiler, settings or runtime
(DESIGN.md, Layout). Read from the source, so an import inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SPEC = Path(__file__).parent.parent.parent / "src" / "attend" / "spec"
FORBIDDEN = ("attend.grammar", "attend.compiler", "attend.settings", "attend.runtime", "attend.commands",
             "attend.cli", "attend.tui", "attend.sensors", "attend.peers")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", sorted(SPEC.glob("*.py")), ids=lambda p: p.name)
def test_a_spec_module_imports_no_module_above_the_leaves(path: Path) -> None:
    above = sorted(name for name in imported_modules(path)
                   if any(name == layer or name.startswith(layer + ".") for layer in FORBIDDEN))
    assert above == []


SETTINGS = SPEC.parent / "settings"
ABOVE_SETTINGS = ("attend.runtime", "attend.commands", "attend.cli", "attend.tui", "attend.sensors", "attend.peers")


@pytest.mark.parametrize("path", sorted(SETTINGS.glob("*.py")), ids=lambda p: p.name)
def test_a_settings_module_imports_neither_runtime_nor_the_commands(path: Path) -> None:
    # settings sits beside runtime (DESIGN.md, Layout): a config key's type, default and text come from the
    # spec's CONFIG_SCHEMA, never from the runtime's parameter classes.
    above = sorted(name for name in imported_modules(path)
                   if any(name == layer or name.startswith(layer + ".") for layer in ABOVE_SETTINGS))
    assert above == []

