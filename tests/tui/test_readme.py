"""README's sensors-tab section: the key table is the tab's own, and `attend tui` is a real command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attend.cli import build_parser
from attend.tui.bindings import key_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_shows_the_tabs_key_table_as_the_app_binds_it() -> None:
    assert key_table() in README.read_text()


def test_attend_tui_parses_with_and_without_project() -> None:
    parser = build_parser()
    assert parser.parse_args(["tui"]).handler == "attend.commands.tui:main"
    assert parser.parse_args(["tui", "--project=/tmp"]).project == "/tmp"


#: How a binding's key is written in the key table.
SHOWN = {"space": "Space", "slash": "/", "question_mark": "?", "ctrl+s": "Ctrl-S", "escape": "Esc", "enter": "Enter"}


def _tokens() -> set[str]:
    from attend.tui.bindings import KEYS

    return {token for keys, _, _ in KEYS for token in keys.split(" / ")}


def _bound(*screens: Any) -> set[str]:
    return {SHOWN.get(key, key) for screen in screens for binding in screen.BINDINGS
            for key in binding.key.split(",")}


def test_every_key_the_tab_binds_is_in_the_key_table_and_every_listed_key_is_bound() -> None:
    from attend.tui.app import SensorsScreen
    from attend.tui.screens import ReviewScreen

    bound = _bound(SensorsScreen, ReviewScreen)
    # Enter is the DataTable's own select key (the tab turns its selection into a toggle or an edit),
    # Tab Textual's focus key.
    assert bound | {"Enter", "Tab"} == _tokens()
