"""The vocabulary's tuples list the words of their `Literal` aliases, in order: the aliases exist only for type
checkers (attend.vocab imports no typing at run time), so this is what ties the two copies together."""

from __future__ import annotations

import ast
from pathlib import Path

import attend.vocab as vocab

# Each tuple and the alias it lists.
PAIRS = {
    "FAILURE_STATES": "FailureState",
    "SENSOR_STATES": "SensorState",
    "STATE_SOURCES": "StateSource",
    "KINDS": "Kind",
    "LANES": "Lane",
    "SCOPES": "Scope",
    "PRIORITIES": "Priority",
    "FIRE_OUTCOMES": "FireOutcome",
    "CONDUITS": "Conduit",
    "CONDUIT_CHOICES": "ConduitChoice",
    "SESSION_ROLES": "SessionRole",
}


def _aliases() -> dict[str, tuple[str, ...]]:
    """Each `Name: TypeAlias = Literal[...]` of the module's TYPE_CHECKING block, its words expanded (the
    other aliases, `JSON` and `JSONObject`, list no words)."""
    tree = ast.parse(Path(vocab.__file__).read_text())
    found: dict[str, tuple[str, ...]] = {}

    def words(node: ast.expr) -> tuple[str, ...]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return (node.value,)
        if isinstance(node, ast.Name):
            return found[node.id]
        assert isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return tuple(w for item in items for w in words(item))

    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                and isinstance(node.annotation, ast.Name) and node.annotation.id == "TypeAlias" \
                and isinstance(node.value, ast.Subscript) and getattr(node.value.value, "id", None) == "Literal":
            found[node.target.id] = words(node.value)
    return found


def test_each_tuple_lists_its_aliases_words_in_order():
    aliases = _aliases()
    assert set(aliases) == set(PAIRS.values()) | {"LiveRole"}  # LiveRole: no code lists its words
    for name, alias in PAIRS.items():
        assert getattr(vocab, name) == aliases[alias], name


def test_every_tuple_is_exported():
    assert set(PAIRS) | {"OK"} == set(vocab.__all__)
