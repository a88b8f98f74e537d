"""Compiled triggers: pure step functions with per-key transition state (DESIGN.md, Trigger semantics).

`CompiledTrigger.step(state, result)` is the one code path the daemon, `sensors poll`, `sensors fire`
and `attend test` share: it selects the items, applies `where`, compares with the state the previous
poll returned and decides what fires (`added`, `removed`, `changed`, `enters`, `leaves`). It never
mutates its inputs, and a poll that failed simply never calls it, so failure leaves state untouched.

State (JSON, versioned): ``{"v": 1, "items": {key: value, ...}, "holding": [keys where held]}`` for a
keyed trigger, ``{"v": 1, "present": bool, "value": ..., "holding": bool}`` for a keyless one. It keeps
each item's value because `changed`, `removed` and `{previous}` need it, and the keys for which `where`
held because `enters`/`leaves` compare those sets. A state of another version is treated as absent (a
baseline); version 2 will add a `pending` map for `for:` (DESIGN.md, Coming next).

`definition_hash` hashes only what shapes state (path, key, on, where, match, initial, author), in
canonical form: editing `magnitude` or `description` keeps the stored baseline, editing what is
selected or compared re-baselines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from attend import ir
from attend.compiler import ops
from attend.compiler.conditions import compile_condition, compile_where
from attend.compiler.paths import compile_path_ir, is_singular
from attend.compiler.templates import compile_template

__all__ = ["STATE_VERSION", "CompiledTrigger", "Evaluation", "Fire", "definition_hash"]

#: The version of the state format this module reads and writes.
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Fire:
    """One notification a trigger decided on: which trigger, which item, how strong, what it says."""

    trigger: str
    key: str | None
    magnitude: float
    description: str
    item: Any = field(default=None, hash=False)
    author: str | None = None


@dataclass(slots=True)
class Evaluation:
    """What one poll decided for one trigger: fires, the new state, warnings and the verdict."""

    fires: list[Fire]
    state: dict[str, Any]
    warnings: list[str]
    verdict: dict[str, Any]


def definition_hash(trigger: ir.Trigger) -> str:
    """The hex sha256 of the canonical form of the fields that shape a trigger's state."""
    where = None
    if trigger.where is not None:
        where = {"match": trigger.where.match, "conditions": sorted(str(c) for c in trigger.where.conditions)}
    canonical = {
        "path": str(trigger.path),
        "key": list(trigger.key) if trigger.key else None,
        "on": trigger.on,
        "where": where,
        "initial": trigger.initial,
        "author": list(trigger.author) if trigger.author else None,
    }
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The previous poll a test fire (or `initial: fire`) compares with: the path selected nothing.
EMPTY_KEYED: dict[str, Any] = {"v": STATE_VERSION, "items": {}, "holding": []}
EMPTY_KEYLESS: dict[str, Any] = {"v": STATE_VERSION, "present": False, "value": None, "holding": False}


#: Key value types whose key text is `str(value)` (ops.key_text); bool, a subclass of int, is not one.
_PLAIN_KEY_TYPES = frozenset({str, int})


def _plain_items(nodes: list[Any], field: str) -> dict[str, Any] | None:
    """{key: node} built with C-level passes, for the common poll: every node a mapping whose `field`
    is a string or an integer, no key repeated. None for anything else (a node without the field or
    not a mapping, another key type, a repeated key): the general loop then decides and warns."""
    try:
        keys = list(map(itemgetter(field), nodes))
    except (KeyError, TypeError):
        return None
    if not _PLAIN_KEY_TYPES.issuperset(map(type, keys)):
        return None
    items = dict(zip(map(str, keys), nodes))
    return items if len(items) == len(nodes) else None


class CompiledTrigger:
    """A trigger compiled to closures. Build with `compile_trigger` or `compile_trigger_ir`."""

    def __init__(self, trigger: ir.Trigger) -> None:
        self.name = trigger.name
        self.ir = trigger
        self.definition_hash = definition_hash(trigger)
        self.select = compile_path_ir(trigger.path)
        self.path_text = str(trigger.path)
        self.singular = is_singular(trigger.path)
        self.where = compile_where(trigger.where)
        self.conditions = (
            tuple((c, compile_condition(c)) for c in trigger.where.conditions) if trigger.where else ()
        )
        self.render = compile_template(trigger.description)
        self.key_fields = trigger.key
        self.author_fields = trigger.author
        self.magnitude = trigger.magnitude
        self._fire = self._fire_with_author if trigger.author is not None else self._plain_fire()

    def __repr__(self) -> str:
        return f"CompiledTrigger({self.ir})"

    # ------------------------------------------------------------------------------------ public

    def step(self, state: dict[str, Any] | None, result: Any) -> tuple[list[Fire], dict[str, Any]]:
        """One poll: the fires and the new state. Pure; `state=None` is a baseline (no fires).

        Args:
            state: what the previous step returned for this definition, or None.
            result: the poll result (parsed JSON).

        Returns:
            ``(fires, new_state)``.
        """
        warnings: list[str] = []
        fires, new_state, _ = self._run(state, result, warnings.append, test=False, detail=False)
        return fires, new_state

    def evaluate(
        self, state: dict[str, Any] | None, result: Any, *, test: bool = False, shared: dict[Any, Any] | None = None,
        detail: bool = True,
    ) -> Evaluation:
        """Like `step`, with warnings and a verdict saying what was selected, what held, what fired.

        Args:
            state: the stored state, or None.
            result: the poll result.
            test: a test fire: with no stored state, compare against an empty previous poll so it can fire.
            shared: a cache for one poll result, shared by the triggers of one sensor: triggers with the
                same path (and key) select (and key) the items once. Read-only for the triggers.
            detail: build the verdict (per-condition counts cost one more pass over the items).
        """
        warnings: list[str] = []
        fires, new_state, verdict = self._run(state, result, warnings.append, test=test, detail=detail, shared=shared)
        return Evaluation(fires, new_state, warnings, verdict)

    # ------------------------------------------------------------------------------------ core

    def _previous(self, state: Any, test: bool) -> tuple[dict[str, Any], bool]:
        """The previous state to compare with, and whether this poll is only a baseline."""
        usable = isinstance(state, dict) and state.get("v") == STATE_VERSION
        if usable and self.key_fields is not None and not isinstance(state.get("items"), dict):
            usable = False
        if usable and self.key_fields is None and "present" not in state:
            usable = False
        if usable:
            return state, False
        empty = EMPTY_KEYED if self.key_fields is not None else EMPTY_KEYLESS
        return empty, not (test or self.ir.initial == "fire")

    def _plain_fire(self) -> Callable[[str | None, Any, Any, Callable[[str], None]], Fire]:
        """The fire maker of a trigger without `author`: one call per fire, its constants bound."""
        name, magnitude, render = self.name, self.magnitude, self.render

        def plain_fire(key: str | None, item: Any, previous: Any, warn: Callable[[str], None]) -> Fire:
            return Fire(name, key, magnitude, render(item, key, previous, warn), item, None)

        return plain_fire

    def _fire_with_author(self, key: str | None, item: Any, previous: Any, warn: Callable[[str], None]) -> Fire:
        author = None
        value = ops.get_dotted(item, self.author_fields)  # set: this maker is chosen only for a trigger with author
        if value is ops.MISSING:
            warn(f"author: {'.'.join(self.author_fields)} is missing from item {key!r}")
        else:
            author = ops.render_value(value)
        return Fire(self.name, key, self.magnitude, self.render(item, key, previous, warn), item, author)

    def _items(self, nodes: list[Any], warn: Callable[[str], None]) -> dict[str, Any]:
        """Selected nodes → {key: node} in document order; keyless and duplicate items are warned about."""
        fields = self.key_fields
        assert fields is not None
        if len(fields) == 1:
            plain = _plain_items(nodes, fields[0])
            if plain is not None:
                return plain
        items: dict[str, Any] = {}
        missing = ops.MISSING
        without = duplicates = 0
        first_dup: str | None = None
        if len(fields) == 1:
            (kf,) = fields
            key_text = ops.key_text
            for node in nodes:
                k = node.get(kf, missing) if isinstance(node, dict) else missing
                if k is missing:
                    without += 1
                    continue
                if k.__class__ is not str:
                    k = str(k) if k.__class__ is int else key_text(k)
                if k in items:
                    duplicates += 1
                    first_dup = first_dup or k
                    continue
                items[k] = node
        else:
            for node in nodes:
                k = ops.get_dotted(node, fields)
                if k is missing:
                    without += 1
                    continue
                k = ops.key_text(k)
                if k in items:
                    duplicates += 1
                    first_dup = first_dup or k
                    continue
                items[k] = node
        key_name = ".".join(fields)
        if without:
            warn(f"{without} selected item(s) have no `{key_name}` field and were skipped")
        if duplicates:
            warn(f"{duplicates} item(s) repeat a key already seen (first: {first_dup!r}); the first item with each key wins")
        return items

    def _selection(self, result: Any, warn: Callable[[str], None], shared: dict[Any, Any] | None) -> tuple[list[Any], Any]:
        """The selected nodes and (for a keyed trigger) the items by key, from `shared` when another
        trigger of the same poll already computed them; key warnings are replayed for each trigger."""
        if shared is None:
            nodes = self.select(result)
            return nodes, (self._items(nodes, warn) if self.key_fields is not None else None)
        path_key = self.path_text
        nodes = shared.get(path_key)
        if nodes is None:
            nodes = shared[path_key] = self.select(result)
        if self.key_fields is None:
            return nodes, None
        items_key = (path_key, self.key_fields)
        cached = shared.get(items_key)
        if cached is None:
            notes: list[str] = []
            cached = shared[items_key] = (self._items(nodes, notes.append), notes)
        for note in cached[1]:
            warn(note)
        return nodes, cached[0]

    def _run(
        self, state: Any, result: Any, warn: Callable[[str], None], *, test: bool, detail: bool,
        shared: dict[Any, Any] | None = None,
    ) -> tuple[list[Fire], dict[str, Any], dict[str, Any]]:
        previous, baseline = self._previous(state, test)
        nodes, items = self._selection(result, warn, shared)
        if items is not None:
            fires, new_state, verdict = self._keyed(previous, items, warn, baseline, detail)
        else:
            fires, new_state, verdict = self._keyless(previous, nodes, warn, baseline, detail)
        if detail:
            verdict.update(
                trigger=self.name,
                on=self.ir.on,
                baseline=baseline,
                selected=len(nodes),
                fired=[f.key for f in fires],
            )
            verdict["transition"] = self._transition_text(verdict, baseline)
        return ([] if baseline else fires), new_state, verdict

    def _keyed(
        self, previous: dict[str, Any], items: dict[str, Any], warn: Callable[[str], None], baseline: bool, detail: bool
    ) -> tuple[list[Fire], dict[str, Any], dict[str, Any]]:
        prev_items: dict[str, Any] = previous["items"]
        where = self.where
        on = self.ir.on
        fires: list[Fire] = []
        new_state: dict[str, Any] = {"v": STATE_VERSION, "items": items}
        verdict: dict[str, Any] = {"items": len(items)} if detail else {}
        fire = self._fire
        missing = ops.MISSING
        if on in ("enters", "leaves"):
            assert where is not None
            holding = [k for k, v in items.items() if where(v, warn)]
            new_state["holding"] = holding
            if not baseline:
                prev_holding = set(previous.get("holding", ()))
                if on == "enters":
                    for k in holding:
                        if k not in prev_holding:
                            fires.append(fire(k, items[k], prev_items.get(k, missing), warn))
                else:
                    now = set(holding)
                    for k in previous.get("holding", ()):
                        if k not in now:
                            before = prev_items.get(k, missing)
                            current = items.get(k, missing)
                            fires.append(fire(k, before if current is missing else current, before, warn))
            if detail:
                verdict["holding"] = len(holding)
        elif not baseline:
            if on == "added":
                for k, v in items.items():
                    if k not in prev_items and (where is None or where(v, warn)):
                        fires.append(fire(k, v, missing, warn))
            elif on == "removed":
                for k, v in prev_items.items():
                    if k not in items and (where is None or where(v, warn)):
                        fires.append(fire(k, v, v, warn))
            else:  # changed
                for k, v in items.items():
                    p = prev_items.get(k, missing)
                    if p is not missing and p != v and (where is None or where(v, warn)):
                        fires.append(fire(k, v, p, warn))
        if detail:
            verdict["added"] = sum(1 for k in items if k not in prev_items)
            verdict["removed"] = sum(1 for k in prev_items if k not in items)
            verdict["changed"] = sum(1 for k, v in items.items() if k in prev_items and prev_items[k] != v)
            verdict["conditions"] = self._condition_counts(list(items.values()))
        return fires, new_state, verdict

    def _keyless(
        self, previous: dict[str, Any], nodes: list[Any], warn: Callable[[str], None], baseline: bool, detail: bool
    ) -> tuple[list[Fire], dict[str, Any], dict[str, Any]]:
        if self.singular:
            present = bool(nodes)
            value = nodes[0] if nodes else None
        else:
            present, value = True, nodes
        where = self.where
        on = self.ir.on
        holds = present and (where is None or where(value, warn))
        new_state = {"v": STATE_VERSION, "present": present, "value": value, "holding": holds}
        fires: list[Fire] = []
        prev_value = previous.get("value") if previous.get("present") else ops.MISSING
        if not baseline:
            if on == "changed":
                differs = present and (not previous.get("present") or previous.get("value") != value)
                if differs and holds:
                    fires.append(self._fire(None, value, prev_value, warn))
            elif on == "enters" and holds and not previous.get("holding"):
                fires.append(self._fire(None, value, prev_value, warn))
            elif on == "leaves" and previous.get("holding") and not holds:
                item = value if present else previous.get("value")
                fires.append(self._fire(None, item, prev_value, warn))
        verdict: dict[str, Any] = {}
        if detail:
            verdict = {"present": present, "holding": holds, "conditions": self._condition_counts([value] if present else [])}
        return fires, new_state, verdict

    def _condition_counts(self, values: list[Any]) -> list[dict[str, Any]]:
        """How many of `values` each condition held for (for the verdict; never affects decisions)."""
        ignore: Callable[[str], None] = lambda message: None  # noqa: E731 - warnings were already given
        return [
            {"condition": str(c), "held": sum(1 for v in values if pred(v, ignore)), "of": len(values)}
            for c, pred in self.conditions
        ]

    def _transition_text(self, verdict: dict[str, Any], baseline: bool) -> str:
        if baseline:
            return "baseline: first poll of this definition, nothing fires"
        n = len(verdict["fired"])
        rule = {
            "added": "keys present now and not before, where held on the current value",
            "removed": "keys present before and not now, where held on the previous value",
            "changed": "same key, different value" if self.key_fields else "the watched value changed",
            "enters": "where holds now and did not before",
            "leaves": "where held before and does not now",
        }[self.ir.on]
        return f"{self.ir.on} ({rule}): {n} fire(s)"
