"""Compiled triggers: pure step functions with per-key transition state (DESIGN.md, Trigger semantics).

`CompiledTrigger.step(state, result, now=t)` is the one code path the daemon, `sensors poll`,
`sensors fire` and `attend test` share: it selects the items, applies `where`, compares with the state
the previous poll returned and decides what fires (`added`, `removed`, `changed`, `enters`, `leaves`).
It never mutates its inputs, and a poll that failed simply never calls it, so failure leaves state
untouched. The noise controls (`for:`, `clear_where`, flap detection) live in `compiler.trigger_controls`, one
module each; this module calls them.

State (JSON, versioned; `compiler.trigger_controls.state` has the format, the migration of version 1, and the
check that turns an unreadable stored state into a re-baseline with a warning): each item's value
because `changed`, `removed` and `{previous}` need it, the keys for which `where` held because
`enters`/`leaves` compare those sets, the transitions pending `for:`, and recent fire times for flap
detection.

`definition_hash` hashes only what shapes state (path, key, on, where, clear_where, match, initial,
author), in canonical form: editing `magnitude`, `description`, `for` or `flap` keeps the stored
baseline (a pending `for:` keeps its start time), editing what is selected or compared re-baselines.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from attend import ir
from attend.bounds import STREAM_KEPT_BYTES
from attend.compiler import ops
from attend.compiler.conditions import compile_condition, compile_where
from attend.compiler.jsonpath import compile_path_ir, is_singular
from attend.compiler.templates import compile_template
from attend.compiler.trigger_controls import flap as flapping
from attend.compiler.trigger_controls import hold as holding
from attend.compiler.trigger_controls import hysteresis, resolve_flap
from attend.compiler.trigger_controls.state import (
    STATE_VERSION,
    FlapEntry,
    KeyedState,
    KeylessState,
    PendingEntry,
    TriggerState,
    read_state,
)
from attend.spec.yamltext import yaml_text
from attend.text import changes_text

if TYPE_CHECKING:
    from attend.vocab import JSON

__all__ = ["STATE_VERSION", "STREAM_KEYS_KEPT", "CompiledTrigger", "Evaluation", "Fire", "definition_hash"]

#: How many transitions (and what became of each) one poll's verdict lists per trigger; the counts
#: cover the rest. Keeps `sensors poll` output and the stored history bounded for 10,000-item polls.
OUTCOMES_LISTED = 20


@dataclass(frozen=True, slots=True)
class Fire:
    """One notification a trigger decided on: which trigger, which item, how strong, what it says."""

    trigger: str
    #: The item's key value as in the JSON (a string, a number, ...); None for a keyless trigger.
    key: JSON
    magnitude: float
    description: str
    item: Any = field(default=None, hash=False)
    author: str | None = None
    #: None for a transition; `flapping` / `settled` for flap detection's own notifications.
    note: str | None = None
    #: The item's previous value (`ops.MISSING` when it had none): what a `changed` fire leaves.
    previous: object = field(default=ops.MISSING, hash=False, compare=False, repr=False)
    #: A move to a value the key has not had within the flap window (`compiler.trigger_controls.flap`): news, which
    #: the relative refractory does not hold back (runtime/engagement.py).
    progress: bool = field(default=False, compare=False)

    def as_progress(self) -> Fire:
        """This fire marked as progress (`dataclasses.replace` without its generic field walk: a poll may mark
        thousands)."""
        return Fire(trigger=self.trigger, key=self.key, magnitude=self.magnitude, description=self.description,
                    item=self.item, author=self.author, note=self.note, previous=self.previous, progress=True)


@dataclass(slots=True)
class Evaluation:
    """What one poll decided for one trigger: fires, the new state, warnings and the verdict."""

    fires: list[Fire]
    state: TriggerState
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
        **({"clear_where": sorted(str(c) for c in trigger.clear_where.conditions)} if trigger.clear_where else {}),
        "author": list(trigger.author) if trigger.author else None,
    }
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The previous poll a test fire (or `initial: fire`) compares with: the path selected nothing.
EMPTY_KEYED: KeyedState = {"v": STATE_VERSION, "items": {}, "holding": []}
EMPTY_KEYLESS: KeylessState = {"v": STATE_VERSION, "present": False, "value": None, "holding": False}


_KEY_MARK = ops.KEY_MARK
_STR, _INT = {str}, {int}
_INT_TEXT = (_KEY_MARK + "{}").format


def _plain_items(nodes: list[Any], field: str) -> dict[str, Any] | None:
    """{key text: node} built with C-level passes, for the common poll: every node a mapping whose
    `field` is a string (not starting with `ops.KEY_MARK`), or every one an integer, no key repeated. None for anything else (a
    node without the field or not a mapping, another key type, a repeated key): the general loop then
    decides and warns."""
    try:
        keys = list(map(itemgetter(field), nodes))
    except (KeyError, TypeError):
        return None
    types = set(map(type, keys))
    if types == _STR:
        if _KEY_MARK in "".join(keys):  # one C-level pass; a mark anywhere only means the general loop
            return None
        items = dict(zip(keys, nodes, strict=False))
    elif types == _INT:
        items = dict(zip(map(_INT_TEXT, keys), nodes, strict=False))  # ops.key_text of an int, in C
    else:
        return None
    return items if len(items) == len(nodes) else None


def _checked_now(now: object) -> float:
    """`now` as the step takes it: a finite number of seconds within a float's range, returned as given.

    Raises:
        ValueError: naming `now`, for a bool, a non-number, NaN, an infinity or an integer past a float.
    """
    if isinstance(now, bool) or not isinstance(now, int | float):
        raise ValueError(f"`now` must be a number of seconds, not {type(now).__name__} {yaml_text(now, 40)}")
    try:
        finite = math.isfinite(now)
    except OverflowError:
        raise ValueError(f"`now` is past a float's range: {yaml_text(now, 40)}") from None
    if not finite:
        raise ValueError(f"`now` must be a finite number of seconds, not {yaml_text(now, 40)}")
    return now


#: The keys a streaming sensor's keyed trigger remembers (the most recently updated); an older key is
#: forgotten, so its next record reads as added. Bounds the stored state of an endless stream, with
#: `STREAM_KEPT_BYTES` (attend.bounds) bounding the JSON of what they hold.
STREAM_KEYS_KEPT = 500


def stream_items(
    previous: dict[str, Any], nodes: list[object], keyed: Callable[[list[Any], Callable[[str], None]], dict[str, Any]],
    warn: Callable[[str], None],
) -> dict[str, Any]:
    """A streaming trigger's items: `previous` updated by `nodes` (this evaluation's records, oldest
    first), the newest record of each key winning and moving to the end; at most `STREAM_KEYS_KEPT`, and
    only the newest whose JSON fits in `STREAM_KEPT_BYTES` (the newest one always).

    `keyed` maps nodes to {key: node} (the trigger's `_items`); a key repeated within the records is
    normal in a stream, so the newest one is taken and only records without the key are warned about.
    """
    notes: list[str] = []
    newest = keyed(nodes[::-1], notes.append)  # the first of the reversed records: the newest one
    for note in notes:
        if "repeat a key" not in note:
            warn(note)
    items = dict(previous)
    for k, v in reversed(newest.items()):
        items.pop(k, None)
        items[k] = v
    if len(items) > STREAM_KEYS_KEPT:
        for k in list(items)[: len(items) - STREAM_KEYS_KEPT]:
            del items[k]
    keys, size = list(items), 0
    for index in range(len(keys) - 1, -1, -1):  # newest first
        size += len(json.dumps(items[keys[index]], separators=(",", ":"), ensure_ascii=False))
        if size > STREAM_KEPT_BYTES:
            # This one and the older ones are forgotten; the newest is kept whatever its size.
            for k in keys[: min(index + 1, len(keys) - 1)]:
                del items[k]
            break
    return items


def _transition(key: str | None, item: object, previous: object, warn: Callable[[str], None]) -> tuple[str | None, object, object]:
    """The fire maker of a trigger with `for:`: the transition, rendered only once it fires."""
    return key, item, previous


class CompiledTrigger:
    """A trigger compiled to closures. Build with `compile_trigger` or `compile_trigger_ir`.

    `sensor_flap` is the sensor's `flap:` (`ir.Flap`), which the trigger's own fields override.
    """

    def __init__(self, trigger: ir.Trigger, sensor_flap: ir.Flap | None = None, *, stream: bool = False) -> None:
        self.name = trigger.name
        #: A streaming sensor's trigger (`output: stream`): with a key, the items are the stored ones updated
        #: by this evaluation's records (the newest record per key is the current value; a key is never
        #: removed, only forgotten beyond `STREAM_KEYS_KEPT`); without one, the records as they come.
        self.stream = stream
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
        self.hold = trigger.hold
        self.clear = compile_where(trigger.clear_where) if trigger.clear_where is not None else None
        self.flap = resolve_flap(trigger.flap, sensor_flap)
        #: Where the flap settings came from, for `explain`.
        self.flap_from = "the trigger's flap" if trigger.flap is not None else (
            "the sensor's flap" if sensor_flap is not None else "the defaults")

    def __repr__(self) -> str:
        return f"CompiledTrigger({self.ir})"

    # ------------------------------------------------------------------------------------ public

    def step(
        self, state: TriggerState | dict[str, Any] | None, result: object, now: float | None = None
    ) -> tuple[list[Fire], TriggerState]:
        """One poll: the fires and the new state. Pure; `state=None` is a baseline (no fires).

        Args:
            state: what the previous step returned for this definition, or None.
            result: the poll result (parsed JSON).
            now: the poll's time in wall-clock seconds (default `time.time()`): what `for:` and flap
                detection measure against.

        Returns:
            ``(fires, new_state)``: `new_state` is JSON data (mappings with string keys, lists, strings,
            finite numbers, booleans, null), to store and pass back as it is or through JSON.

        Raises:
            ValueError: `now` is not a finite number of seconds (a bool, a string, NaN, an infinity, an
                integer past a float's range), or `result` is not JSON data within the bounds of a poll
                result (`compiler.results.check_json`). A stored `state` that cannot be read is not an
                error: the trigger re-baselines (this poll fires nothing).
        """
        from attend.compiler.results import MalformedResult, check_json

        try:
            check_json(result)
        except MalformedResult as exc:
            raise ValueError(f"`result` is not JSON data: {exc.message}") from None
        unreadable = None
        if state is not None:
            try:
                check_json(state)
            except MalformedResult as exc:
                unreadable = f"the stored state is not JSON data ({exc.message})"
        warnings: list[str] = []
        fires, new_state, _ = self._run(None if unreadable else state, result, warnings.append, test=False,
                                        detail=False, now=now, unreadable=unreadable)
        return fires, new_state

    def evaluate(
        self, state: TriggerState | dict[str, Any] | None, result: object, *, test: bool = False, shared: dict[Any, Any] | None = None,
        detail: bool = True, now: float | None = None,
    ) -> Evaluation:
        """Like `step`, with warnings and a verdict saying what was selected, what held, what fired.

        Args:
            state: the stored state, or None.
            result: the poll result.
            test: a test fire: with no stored state, compare against an empty previous poll so it can fire.
            shared: a cache for one poll result, shared by the triggers of one sensor: triggers with the
                same path (and key) select (and key) the items once. Read-only for the triggers.
            detail: build the verdict (per-condition counts cost one more pass over the items).
            now: the poll's time (default `time.time()`).
        """
        warnings: list[str] = []
        fires, new_state, verdict = self._run(
            state, result, warnings.append, test=test, detail=detail, shared=shared, now=now
        )
        return Evaluation(fires, new_state, warnings, verdict)

    def due(self, state: object) -> float | None:
        """When a transition pending `for:` in `state` will have held long enough (None: none pending).

        The daemon polls again no later than this, so a `for:` fires on time, not at the next interval.
        """
        if self.hold is None or not isinstance(state, dict) or not isinstance(state.get("pending"), dict):
            return None
        try:
            return holding.due(state["pending"], self.hold)
        except (TypeError, KeyError, ValueError, AttributeError):
            return None

    # ------------------------------------------------------------------------------------ core

    def _previous(self, state: object, test: bool, warn: Callable[[str], None],
                  unreadable: str | None = None) -> tuple[TriggerState, bool]:
        """The previous state to compare with (version 1 migrated), and whether this poll is only a
        baseline. A stored state that cannot be read (or that `unreadable` says why not) is warned about
        and re-baselined."""
        previous, problem = read_state(state, keyed=self.key_fields is not None, key_fields=self.key_fields)
        problem = unreadable or problem
        if previous is not None:
            return previous, False
        if problem is not None:
            warn(f"{problem}; re-baselined: this poll fires nothing and sets the new baseline")
        empty: TriggerState = EMPTY_KEYED if self.key_fields is not None else EMPTY_KEYLESS
        return empty, not (test or self.ir.initial == "fire")

    def _plain_fire(self) -> Callable[[str | None, object, object, Callable[[str], None]], Fire]:
        """The fire maker of a trigger without `author`: one call per fire, its constants bound."""
        name, magnitude, render = self.name, self.magnitude, self.render

        key_value = ops.key_value

        def plain_fire(key: str | None, item: object, previous: object, warn: Callable[[str], None]) -> Fire:
            value = None if key is None else key_value(key)
            return Fire(name, value, magnitude, render(item, value, previous, warn), item, None, None, previous)

        return plain_fire

    def _fire_with_author(self, key: str | None, item: object, previous: object, warn: Callable[[str], None]) -> Fire:
        key_value = None if key is None else ops.key_value(key)
        author = None
        assert self.author_fields is not None  # this maker is chosen only for a trigger with author
        value = ops.get_dotted(item, self.author_fields)
        if value is ops.MISSING:
            warn(f"author: {'.'.join(self.author_fields)} is missing from item {key!r}")
        else:
            author = ops.render_value(value)
        return Fire(self.name, key_value, self.magnitude, self.render(item, key_value, previous, warn), item, author, None,
                    previous)

    def _items(self, nodes: list[JSON], warn: Callable[[str], None]) -> dict[str, JSON]:
        """Selected nodes → {key: node} in document order; keyless and duplicate items are warned about."""
        fields = self.key_fields or ()
        if len(fields) == 1:
            plain = _plain_items(nodes, fields[0])
            if plain is not None:
                return plain
        items: dict[str, JSON] = {}
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
                if k.__class__ is not str or k[:1] == _KEY_MARK:
                    k = key_text(k)
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
            first = ops.key_value(first_dup) if first_dup is not None else None
            warn(f"{duplicates} item(s) repeat a key already seen (first: {first!r}); the first item with each key wins")
        return items

    def _selection(self, result: object, warn: Callable[[str], None], shared: dict[Any, Any] | None) -> tuple[list[Any], Any]:
        """The selected nodes and (for a keyed trigger) the items by key, from `shared` when another
        trigger of the same poll already computed them; key warnings are replayed for each trigger."""
        if shared is None:
            nodes = self.select(result)
            return nodes, (self._items(nodes, warn) if self.key_fields is not None else None)
        path_key = self.path_text
        cached_nodes: list[Any] | None = shared.get(path_key)
        if cached_nodes is None:
            cached_nodes = shared[path_key] = self.select(result)
        nodes = cached_nodes
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
        self, state: object, result: object, warn: Callable[[str], None], *, test: bool, detail: bool,
        shared: dict[Any, Any] | None = None, now: float | None = None, unreadable: str | None = None,
    ) -> tuple[list[Fire], TriggerState, dict[str, Any]]:
        now = time.time() if now is None else _checked_now(now)
        previous, baseline = self._previous(state, test, warn, unreadable)
        try:
            return self._evaluate(previous, baseline, result, warn, detail=detail, shared=shared, now=now, test=test)
        except (TypeError, KeyError, AttributeError, ValueError, OverflowError) as exc:
            if previous is EMPTY_KEYED or previous is EMPTY_KEYLESS:
                raise  # not the stored state's fault: the poll result cannot be evaluated
            # A stored state that passed the shape check and still broke the comparison: re-baseline.
            warn(f"the stored state could not be compared ({type(exc).__name__}: {exc}); re-baselined: this poll "
                 "fires nothing and sets the new baseline")
            empty: TriggerState = EMPTY_KEYED if self.key_fields is not None else EMPTY_KEYLESS
            return self._evaluate(empty, True, result, warn, detail=detail, shared=shared, now=now, test=test)

    def _evaluate(
        self, previous: TriggerState, baseline: bool, result: object, warn: Callable[[str], None], *, detail: bool,
        shared: dict[Any, Any] | None, now: float, test: bool = False,
    ) -> tuple[list[Fire], TriggerState, dict[str, Any]]:
        nodes, items = self._selection(result, warn, shared)
        maker = self._fire if self.hold is None else _transition
        new_state: TriggerState
        # `read_state` checked `previous` has the shape of this trigger's kind: keyed items come with a keyed state
        if items is not None:
            keyed = cast("KeyedState", previous)
            if self.stream:
                items = stream_items(keyed["items"], nodes, self._items, warn)
            fires, new_state, verdict = self._keyed(keyed, items, warn, baseline, detail, maker)
        else:
            fires, new_state, verdict = self._keyless(cast("KeylessState", previous), nodes, warn, baseline, detail,
                                                      maker)
        if baseline:
            fires = []
        found = len(fires)
        pending_keys: list[str] = []
        if self.hold is not None:
            fires, pending_keys = self._hold(previous, new_state, fires, items, now, warn)
        held: list[Fire] = []
        if test:
            # A test fire is never held, flapping included (docs/runtime.md, `sensors fire`), and never
            # counts toward a key's flapping: the stored flap entries stay as they were (`--commit`).
            if previous.get("flap"):
                new_state["flap"] = previous["flap"]
        elif self.flap.limit and (fires or previous.get("flap")):
            fires, flap_state, held, moved = flapping.apply_flap(
                fires, previous.get("flap") or {}, limit=self.flap.limit, window=self.flap.window, now=now,
                token=self._flap_token, note=self._flap_note, settle_note=self._settle_note,
            )
            if moved:
                news = {id(f) for f in moved}
                fires = [f.as_progress() if id(f) in news else f for f in fires]
            if flap_state:
                new_state["flap"] = flap_state
        if detail:
            verdict.update(
                trigger=self.name,
                on=self.ir.on,
                baseline=baseline,
                selected=len(nodes),
                fired=[f.key for f in fires if f.note is None],
            )
            verdict["transition"] = self._transition_text(verdict, baseline, found)
            verdict["outcomes"] = self._outcomes(fires, held, pending_keys, new_state.get("pending"))
            verdict["flapping"] = flapping.flapping_keys(new_state.get("flap"))
        return fires, new_state, verdict

    def _hold(
        self, previous: TriggerState, new_state: TriggerState, transitions: list[Any], items: dict[str, Any] | None,
        now: float, warn: Callable[[str], None],
    ) -> tuple[list[Fire], list[str]]:
        """`for:`: this poll's transitions join `pending`; the pending ones that held long enough fire."""
        assert self.hold is not None
        on = self.ir.on
        ignore: Callable[[str], None] = lambda message: None  # noqa: E731 - the step already warned
        if items is not None:
            inside = set(cast("KeyedState", new_state).get("holding", ()))
            where = self.where

            def still(key: str, entry: PendingEntry) -> bool:
                if on == "added":
                    return key in items and (where is None or where(items[key], ignore))
                if on == "removed":
                    return key not in items
                if on == "changed":
                    return key in items and items[key] == entry["value"]
                return (key in inside) == (on == "enters")

            def current(key: str, entry: PendingEntry) -> Any:
                return entry["value"] if on == "removed" else items.get(key, entry["value"])

            found = [(k, item, prev) for k, item, prev in transitions]
        else:
            keyless = cast("KeylessState", new_state)
            value, holds, present = keyless["value"], keyless.get("holding", False), keyless["present"]

            def still(key: str, entry: PendingEntry) -> bool:
                if on == "changed":
                    return present and holds and value == entry["value"]
                return holds == (on == "enters")

            def current(key: str, entry: PendingEntry) -> Any:
                return value if present else entry["value"]

            found = [("", item, prev) for _, item, prev in transitions]
        ready, pending = holding.settle(
            previous.get("pending") or {}, found, hold=self.hold, now=now, still=still, current=current
        )
        if pending:
            new_state["pending"] = pending
        fires = [self._fire(k if items is not None else None, item, prev, warn) for k, item, prev in ready]
        return fires, list(pending)

    def _flap_token(self, fire: Fire) -> tuple[str, str | None]:
        """What flap detection compares (`compiler.trigger_controls.flap`): for `changed`, the digests of the value a
        fire moves to and of the one it leaves; for the other transitions, the state the key moves into."""
        if self.ir.on != "changed":
            return self.ir.on, None
        left = None if fire.previous is ops.MISSING else flapping.value_hash(fire.previous)
        return flapping.value_hash(fire.item), left

    def _flap_note(self, fire: Fire, note: str, why: str) -> Fire:
        who = "the watched value" if fire.key is None else f"key {ops.render_value(fire.key)}"
        text = (f"{self.name}: {who} is flapping ({why}); its further changes are held until it stays quiet for "
                f"{flapping.span_text(self.flap.window)}, then one line states its newest value. Last: {fire.description}")
        return Fire(fire.trigger, fire.key, fire.magnitude, text, fire.item, fire.author, note)

    def _settle_note(self, key: str, entry: FlapEntry) -> Fire:
        """The line that says a flapping key settled, stating its newest value (the newest fire's description)."""
        who = "the watched value" if self.key_fields is None else f"key {ops.render_value(ops.key_value(key))}"
        quiet = f"{self.name}: {who} settled (quiet for {flapping.span_text(self.flap.window)})"
        newest = entry.get("text")
        text = (f"{quiet}: {newest} ({changes_text(entry['held'])})" if newest
                else f"{quiet}; {entry['held']} fire(s) were held while it flapped")  # an entry stored before `text`
        return Fire(self.name, None if self.key_fields is None else ops.key_value(key), self.magnitude, text, None, None, flapping.SETTLED)

    def _outcomes(
        self, fires: list[Fire], held: list[Fire], pending_keys: list[str], pending: dict[str, PendingEntry] | None
    ) -> list[dict[str, Any]]:
        """What became of each transition of this poll (and each pending one): the verdict's trace, bounded."""
        out: list[dict[str, Any]] = []
        for f in fires:
            out.append({"key": f.key, "outcome": f.note or "fired", "description": f.description})
        for f in held:
            out.append({"key": f.key, "outcome": "held", "reason": "flapping", "description": f.description})
        for k in pending_keys:
            entry = (pending or {}).get(k)
            since = None if entry is None else entry["since"]
            out.append({"key": ops.key_value(k) if self.key_fields is not None else None, "outcome": "held", "reason": "for",
                        "until": None if since is None or self.hold is None else since + self.hold})
        if len(out) > OUTCOMES_LISTED:
            out = out[:OUTCOMES_LISTED] + [{"more": len(out) - OUTCOMES_LISTED}]
        return out

    def _keyed(
        self, previous: KeyedState, items: dict[str, Any], warn: Callable[[str], None], baseline: bool, detail: bool,
        fire: Callable[..., Any],
    ) -> tuple[list[Any], KeyedState, dict[str, Any]]:
        prev_items: dict[str, Any] = previous["items"]
        where = self.where
        on = self.ir.on
        fires: list[Fire] = []
        new_state: KeyedState = {"v": STATE_VERSION, "items": items}
        verdict: dict[str, Any] = {"items": len(items)} if detail else {}
        missing = ops.MISSING
        if on in ("enters", "leaves"):
            if self.clear is None:
                holding = [k for k, v in items.items() if where is None or where(v, warn)]
            else:
                assert where is not None  # enters and leaves need a where (the spec refuses one without)
                holding = hysteresis.holding_keys(items, set(previous.get("holding", ())), where, self.clear, warn)
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
                            if before is missing:  # only a state this trigger did not write
                                raise KeyError(f"the stored `holding` names a key without an item: {k!r}")
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
        self, previous: KeylessState, nodes: list[JSON], warn: Callable[[str], None], baseline: bool, detail: bool,
        fire: Callable[..., Any],
    ) -> tuple[list[Any], KeylessState, dict[str, Any]]:
        if self.singular:
            present = bool(nodes)
            value = nodes[0] if nodes else None
        else:
            present, value = True, nodes
        where = self.where
        on = self.ir.on
        if self.clear is not None and where is not None:
            holds = present and hysteresis.holds(value, bool(previous.get("holding")), where, self.clear, warn)
        else:
            holds = present and (where is None or where(value, warn))
        new_state: KeylessState = {"v": STATE_VERSION, "present": present, "value": value, "holding": holds}
        fires: list[Any] = []
        prev_value = previous.get("value") if previous.get("present") else ops.MISSING
        if not baseline:
            if on == "changed":
                differs = present and (not previous.get("present") or previous.get("value") != value)
                if differs and holds:
                    fires.append(fire(None, value, prev_value, warn))
            elif on == "enters" and holds and not previous.get("holding"):
                fires.append(fire(None, value, prev_value, warn))
            elif on == "leaves" and previous.get("holding") and not holds:
                item = value if present else previous.get("value")
                fires.append(fire(None, item, prev_value, warn))
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

    def _transition_text(self, verdict: dict[str, Any], baseline: bool, found: int) -> str:
        if baseline:
            return "baseline: first poll of this definition, nothing fires"
        n = found
        rule = {
            "added": "keys present now and not before, where held on the current value",
            "removed": "keys present before and not now, where held on the previous value",
            "changed": "same key, different value" if self.key_fields else "the watched value changed",
            "enters": "where holds now and did not before",
            "leaves": "where held before and does not now",
        }[self.ir.on]
        if self.hold is not None:
            return f"{self.ir.on} ({rule}): {n} transition(s), each pending until it has held for {self.hold:g}s"
        return f"{self.ir.on} ({rule}): {n} fire(s)"
