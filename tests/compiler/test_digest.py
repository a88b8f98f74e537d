"""A sensor's `digest:`: more than `over` fires in one poll become one line; checked like any field."""

from __future__ import annotations

from attend.compiler.sensors import compile_sensor
from attend.spec import load_set

ITEMS = """spec: 1
name: items
kind: command
command: {argv: [cat, items.json]}
digest:
  over: 2
  description: "{count} new items{{!}}"
triggers:
  new:
    path: $[*]
    key: id
    on: added
    magnitude: 1.5
    description: "item {id}"
"""


def compiled_items(home, text: str = ITEMS):
    home.write_user_sensor("items", text)
    return compile_sensor(load_set(home.project, home.env()).sensors["items"])


def test_more_than_over_fires_in_one_poll_are_one_line_and_over_or_fewer_are_each_a_line(home) -> None:
    compiled = compiled_items(home)
    base = compiled.step(None, [])
    two = compiled.step(base.states, [{"id": 1}, {"id": 2}])
    assert [f.description for f in two.fires] == ["item 1", "item 2"]
    three = compiled.step(two.states, [{"id": n} for n in range(1, 6)])
    assert [(f.trigger, f.key, f.magnitude, f.description) for f in three.fires] == [
        ("digest", None, 1.5, "3 new items{!}")]
    assert len(compiled.step(two.states, [{"id": n} for n in range(1, 6)], digest=False).fires) == 3


def test_a_bad_digest_template_or_a_missing_over_is_an_error_at_its_line(home) -> None:
    home.write_user_sensor("items", ITEMS.replace("{count} new items{{!}}", "{count new"))
    done = home.attend("compile", "--check")
    assert done.returncode == 1 and "items.yaml:7:" in done.stdout and "template-syntax" in done.stdout
    home.write_user_sensor("items", ITEMS.replace("  over: 2\n", ""))
    done = home.attend("compile", "--check")
    assert done.returncode == 1 and "over" in done.stdout


def test_explain_shows_the_digest_with_its_origin(home) -> None:
    home.write_user_sensor("items", ITEMS)
    shown = home.attend("explain", "items").stdout
    assert "digest.over         2" in shown and "items.yaml:6" in shown
