"""The sensors tab's keys (DESIGN.md, the sensors tab): one table for the bindings, `?` and the README.

The keys follow the upstream settings TUI: Enter/Space toggle, `e` edit, `d` reset to default, `u`
revert, `/` filter, `?` help, `w` or Ctrl-S review, `a` apply in review, `q`/Esc quit. The tab adds
its own for what the CLI can also do: preview, copy, rename, delete, probe, shelve, and the layer its
edits write. No textual here: the README test reads this table without starting an app.
"""

from __future__ import annotations

__all__ = ["KEYS", "key_table"]

#: (keys as shown, where they work, what they do), in the order `?` and the README list them.
KEYS: tuple[tuple[str, str, str], ...] = (
    ("Enter / Space", "list", "turn the sensor on or off (a pending change)"),
    ("Enter / Space", "fields", "turn a trigger or a true/false field on or off; Enter edits any other field"),
    ("Tab", "anywhere", "move between the sensor list and the selected sensor's fields"),
    ("e", "fields", "edit the field in a form, validated as `attend settings set` validates"),
    ("d", "fields", "reset the field to its default (`attend settings unset` in the tab's layer)"),
    ("u", "list, fields", "revert the pending change of the field (in the list: all of the sensor's)"),
    ("p", "list, fields", "preview: a dry-run poll of the sensor as its pending changes leave it"),
    ("w / Ctrl-S", "anywhere", "review every pending change: key, from → to, layer and file"),
    ("a", "review", "apply the pending changes (atomic writes, comments kept)"),
    ("c", "list", "copy the sensor to a new name (`attend sensors copy`)"),
    ("R", "list", "rename the sensor's file of the tab's layer (`attend sensors rename`)"),
    ("X", "list", "delete the sensor's file of the tab's layer (`attend sensors delete`), after asking"),
    ("P", "list", "probe an mcp sensor (`attend sensors probe`), asking for your confirmation"),
    ("s", "list, fields", "shelve the sensor (or the highlighted trigger) for a while (`attend sensors shelve`)"),
    ("S", "list, fields", "take the shelf down (`attend sensors unshelve`)"),
    ("h", "list, fields", "the sensor's recent polls: why each trigger fired or was held (`attend sensors history`)"),
    ("l", "anywhere", "switch the layer edits write: user or project"),
    ("/", "anywhere", "filter the list by name, kind, layer or state; Esc clears"),
    ("?", "anywhere", "show these keys"),
    ("q / Esc", "anywhere", "quit (asking first when changes are pending); Esc first closes a dialog or clears the filter"),
)


def key_table() -> str:
    """The keys as a Markdown table (README's key table is this text)."""
    lines = ["| key | where | what it does |", "|---|---|---|"]
    lines += [f"| {k} | {where} | {what} |" for k, where, what in KEYS]
    return "\n".join(lines)
