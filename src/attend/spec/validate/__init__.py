"""Validating a merged sensor against spec v1 and normalising it (ADR-403 §1–§3a, DESIGN.md Spec v1).

Validation runs on the *merged* sensor (a higher layer may hold only the fields it overrides), and each
problem is reported at the file, line and column of the layer that supplied the offending key or
value, found through the sensor's origins. By concept:

- `shape`: cerberus checks the shape against `spec/schema.py`, its errors said in the spec's words;
- `rules`: the rules cerberus cannot say (spec version, name, kind blocks, interval order, on/key/where,
  message lane, supersedes) and `validate_sensor`, which runs them all;
- `trigger`: one trigger given on its own (`attend.compile_trigger`), checked by the same rules;
- `normalise`: defaults filled in, durations as float seconds;
- `locate` and `wording`: where a key path stands, and how a message says a value.
"""

from __future__ import annotations

from attend.spec.validate.locate import Locator
from attend.spec.validate.normalise import normalise
from attend.spec.validate.rules import validate_sensor
from attend.spec.validate.trigger import API_FILE, normalise_trigger, trigger_problems

__all__ = ["API_FILE", "Locator", "normalise", "normalise_trigger", "trigger_problems", "validate_sensor"]
