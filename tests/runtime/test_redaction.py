"""No credential reaches any text attend shows (attend.redact; docs/runtime.md, What a line may contain).

A property over every rendering of a fire made from generated secrets of the shapes the policy knows (its
line, the journal, the history and its --json, a hook's JSON, every cut), then the real commands end to
end: `sensors poll` (text and --json), `sensors fire --json`, `sensors history`, `explain`, a hook's output,
and a running daemon that takes a new `attend.redact` pattern at its hot reload.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from daemon_rig import journal_rows, sensors_json, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attend import redact
from attend.redact import MARK, redact_data, shorten
from attend.text import json_text, one_line, printable
from property_examples import examples


@pytest.fixture(autouse=True)
def _no_user_patterns():
    redact.use(())
    yield
    redact.use(())


_SECRET = st.text(alphabet=string.ascii_uppercase + string.digits, min_size=19, max_size=40).map(lambda s: "Q" + s)
_ENV_NAME = st.tuples(st.sampled_from(["", "MY_", "ANTHROPIC_", "DB_", "X"]),
                      st.sampled_from(["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "AUTH",
                                       "COOKIE", "SESSION", "API_KEY"]),
                      st.sampled_from(["", "_ID", "S", "_2"])).map("".join)


@st.composite
def _secrets(draw: Any) -> tuple[str, str]:
    """A credential as it appears in text, and the part of it that must never show (its value)."""
    value = draw(_SECRET)
    kind = draw(st.sampled_from(["sk", "sk-ant", "gh", "github_pat", "glpat", "xox", "akia", "jwt", "env", "flag",
                                 "flag=", "url", "authz", "bearer", "mysql"]))
    if kind == "sk":
        return f"sk-{value}", value
    if kind == "sk-ant":
        return f"sk-ant-api03-{value}", value
    if kind == "gh":
        return f"{draw(st.sampled_from(['ghp', 'gho', 'ghu', 'ghs', 'ghr']))}_{value}", value
    if kind == "github_pat":
        return f"github_pat_{value}", value
    if kind == "glpat":
        return f"glpat-{value}", value
    if kind == "xox":
        return f"xox{draw(st.sampled_from('abpr'))}-{value}", value
    if kind == "akia":
        return f"{draw(st.sampled_from(['AKIA', 'ASIA']))}{value[:16]}", value[:16]
    if kind == "jwt":
        return f"eyJ{value}.eyJ{value[::-1]}.{value.lower()}", value
    if kind == "env":
        return f"{draw(_ENV_NAME)}={value}", value
    if kind in ("flag", "flag="):
        flag = draw(st.sampled_from(["--token", "--password", "--passwd", "--secret", "--api-key", "--client-secret",
                                     "--auth", "--access-token"]))
        return f"{flag}{'=' if kind == 'flag=' else ' '}{value}", value
    if kind == "url":
        return f"https://user:{value}@example.com/repo", value
    if kind == "authz":
        return f"Authorization: {draw(st.sampled_from(['Bearer ', 'Basic ', 'token ', '']))}{value}", value
    if kind == "bearer":
        return f"Bearer {value}", value
    return f"mysql -uroot -p{value} shop", value


_FILLER = st.text(alphabet=string.ascii_lowercase + " ./:()", max_size=30)
#: What comes before a credential, and what ends one: white space or a quote (a value runs to them, as a
#: shell word does: `--token X,--other` is one value).
_BEFORE = st.sampled_from([" ", "\t", "\n", '"', "'", "(", ", ", "="])
_AFTER = st.sampled_from([" ", "\t", "\n", '"', "'", ", ", ") "])


@st.composite
def _texts(draw: Any) -> tuple[str, list[str]]:
    """A text holding one to three credentials between ordinary words, and their values."""
    parts, values = [draw(_FILLER)], []
    for _ in range(draw(st.integers(1, 3))):
        secret, value = draw(_secrets())
        parts += [draw(_BEFORE), secret, draw(_AFTER), draw(_FILLER)]
        values.append(value)
    return "".join(parts), values


def _shows(rendering: str, values: list[str]) -> list[str]:
    """The values of which `rendering` holds a piece (the first four characters: a cut's prefix too)."""
    return [v for v in values if v[:4] in rendering]


_counter = itertools.count()
_compiled: dict[Any, Any] = {}

SENSOR = """\
spec: 1
name: leaky
kind: command
command: {argv: ["true"]}
threshold: 0
triggers:
  seen: {path: '$.items[*]', key: id, on: added, magnitude: 3, description: "saw {text}"}
"""


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_texts(), limit=st.integers(8, 200))
def test_no_generated_secret_survives_in_any_rendering(case: tuple[str, list[str]], limit: int, home: Any) -> None:

    from attend.compiler import compile_sensor
    from attend.runtime.delivery import format_line
    from attend.runtime.kinds import PollOutcome
    from attend.runtime.noise.history import render_history
    from attend.runtime.noise.query import sensor_noise
    from attend.runtime.pipeline import Discloser, SensorTerms, record_poll
    from attend.runtime.store import Store
    from attend.spec import load_set

    text, values = case
    assert _shows(text, values) == values  # the secrets are there to begin with
    if home.root not in _compiled:  # once per test run, not per example
        home.write_user_sensor("leaky", SENSOR)
        _compiled[home.root] = compile_sensor(load_set(home.project, os.environ).sensors["leaky"])
    compiled = _compiled[home.root]
    store = Store(Path(home.root) / "attend.db", scope=f"example-{next(_counter)}")  # a new store costs 70 ms
    out, err = io.StringIO(), io.StringIO()
    try:
        record_poll(store, compiled, PollOutcome(result={"items": []}), now=1000.0)
        record = record_poll(store, compiled, PollOutcome(result={"items": [{"id": 1, "text": text}]}), now=1001.0)
        Discloser(store, lambda name: SensorTerms("event", 0.0), stdout=out, stderr=err, clock=lambda: 1002.0).run_once()
        renderings = {
            "fire": "\n".join(o.description for o in record.observations),
            "line": out.getvalue() + err.getvalue(),
            "format_line": format_line("leaky", "medium", text),
            "journal": "\n".join(e.description for e in store.journal()),
            "history": render_history(sensor_noise(store, "leaky")),
            "history --json": json_text(sensor_noise(store, "leaky")),
            "poll --json": json_text({"result": {"items": [{"id": 1, "text": text}]}, "lines": [text]}),
            "hook output": json_text({"decision": "block", "reason": printable(text)}, ensure_ascii=True),
            "cut": shorten(text, limit),
            "one_line": one_line(text, limit),
            "data": json.dumps(redact_data({"argv": text.split(), "env": {"X": text}})),
        }
    finally:
        store.close()
    assert record.observations, "the fire was made"
    leaks = {where: _shows(shown, values) for where, shown in renderings.items() if _shows(shown, values)}
    assert not leaks, (text, leaks)


# ------------------------------------------------------------------------------------ end to end

GH = "ghp_" + "Q7wK2mZ9" * 4 + "Ab3d"
ANTHROPIC = "sk-ant-api03-" + "Zx9Y" * 10
SECRETS = (GH, "Zx9YZx9Y", "hunter2pw", "s3cretS3cret", "AKIAQ7WK2MZ9Q7WK2MZ9"[:20])


def _no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text[:2000])


def _items_with_secrets() -> list[dict[str, Any]]:
    return [
        {"id": 1, "cmd": f'bash -c "env ANTHROPIC_API_KEY={ANTHROPIC} claude"'},
        {"id": 2, "cmd": f"deploy --token {GH} --verbose"},
        {"id": 3, "cmd": "mysql -uroot -phunter2pw shop", "env": {"DB_PASSWORD": "s3cretS3cret"}},
        {"id": 4, "cmd": "aws s3 ls", "argv": ["aws", "--profile", "x", "AKIAQ7WK2MZ9Q7WK2MZ9"]},
    ]


def test_no_command_shows_a_secret_a_sensor_polled(quiet_home, items_sensor, tmp_path) -> None:
    items = items_sensor(trigger={"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3,
                                  "description": "started: {cmd}"},
                         command={"env": {"API_TOKEN": "s3cretS3cret"}})
    assert quiet_home.attend("sensors", "poll", "items").returncode == 0  # the baseline
    items.set(_items_with_secrets())
    shown = []
    polled = quiet_home.attend("sensors", "poll", "items", "--json")
    assert polled.returncode == 0, polled.stderr
    report = json.loads(polled.stdout)
    assert len(report["lines"]) == 4 and f"--token {MARK}" in report["lines"][1]
    assert report["result"]["items"][2]["env"]["DB_PASSWORD"] == MARK
    shown += [polled.stdout, polled.stderr]
    items.set([*_items_with_secrets(), {"id": 5, "cmd": f"curl -H 'Authorization: Bearer {GH}' https://api"}])
    text = quiet_home.attend("sensors", "poll", "items")
    assert "[attend sensor=items priority=medium] started: curl -H 'Authorization: Bearer <redacted>' https://api" in text.stdout
    shown += [text.stdout, text.stderr]
    (tmp_path / "in.json").write_text(json.dumps({"items": [{"id": 9, "cmd": f"gh --token={GH}"}]}))
    fired = quiet_home.attend("sensors", "fire", "items", "--input", str(tmp_path / "in.json"), "--json")
    assert json.loads(fired.stdout)["lines"] == [f"[attend sensor=items priority=medium] [test] started: gh --token={MARK}"]
    shown += [fired.stdout, fired.stderr]
    explained = json.loads(quiet_home.attend("explain", "items", "--json").stdout)
    assert {"field": "command.env.API_TOKEN", "value": MARK} in [{k: r[k] for k in ("field", "value")}
                                                              for r in explained["fields"]]
    for argv in (["sensors", "history", "items"], ["sensors", "history", "items", "--all", "--json"],
                 ["explain", "items"], ["explain", "items", "--json"], ["sensors", "--json"], ["doctor", "--json"]):
        done = quiet_home.attend(*argv)
        shown += [done.stdout, done.stderr]
    _no_secret(*shown)
    journal = "\n".join(row["description"] for row in journal_rows(quiet_home))
    assert "started: deploy --token <redacted> --verbose" in journal
    _no_secret(journal)


def test_a_hook_hands_over_an_old_journal_row_redacted_with_the_patterns_in_force_now(quiet_home) -> None:
    """A row journaled raw (before attend redacted, or before the user's pattern existed) reaches the
    session redacted: every text is redacted again as it is printed, with the patterns of the config now."""
    import fcntl

    from attend.files import run_lock_path
    from attend.runtime.store import Observation, Store, scope_for
    from attend.runtime.store.location import default_db_path

    lock = run_lock_path(quiet_home.project, quiet_home.env())
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a live poller: the hook starts none
        store = Store(default_db_path(lock.parent), scope=scope_for(quiet_home.project))
        try:
            store.commit_poll("items", states={}, observations=[
                Observation("new", 5.0, f"deploy --token {GH} for ticket internal-424242")])
            store.disclose("items", store.pending("items"), lane="event", priority="high")
        finally:
            store.close()
        quiet_home.config_file.parent.mkdir(parents=True, exist_ok=True)
        quiet_home.config_file.write_text("attend:\n  redact: ['internal-[0-9]{6}']\n")
        payload = {"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(quiet_home.project),
                   "tool_name": "Bash"}
        done = subprocess.run([sys.executable, "-m", "attend", "drain", "--format", "hook", "--project",
                               str(quiet_home.project)], input=json.dumps(payload), capture_output=True, text=True,
                              timeout=60, env=quiet_home.env(), cwd=quiet_home.project)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[attend sensor=items priority=high] deploy --token <redacted> for ticket <redacted>" in context
    _no_secret(done.stdout)
    assert "424242" not in done.stdout


def test_a_redact_pattern_added_while_the_daemon_runs_applies_to_its_next_line(quiet_home, items_sensor, daemon) -> None:
    items = items_sensor(trigger={"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3,
                                  "description": "opened {ticket}"})
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the baseline poll")
    items.set([{"id": 1, "ticket": "internal-111111"}])
    d.wait_for(lambda lines: any("internal-111111" in line for line in lines))  # no pattern yet: as it is
    config = quiet_home.config_file.read_text()
    # The bad entry is the daemon's signal that it read the new config: it logs it (and leaves it out).
    quiet_home.config_file.write_text(config + "redact: ['internal-[0-9]{6}', '(']\n")
    wait_until(lambda: any("redact` entry 1" in line for line in d.stderr), what="the reload of config.yaml")
    items.set([{"id": 1, "ticket": "internal-111111"}, {"id": 2, "ticket": "internal-222222"}])
    lines = d.wait_for(lambda lines: any("opened" in line and "<redacted>" in line for line in lines))
    assert "[attend sensor=items priority=medium] opened <redacted>" in lines
    assert not any("222222" in line for line in lines)
    assert d.stop() == 0


def test_a_catastrophic_redact_pattern_in_a_project_file_costs_the_daemon_one_timeout_and_is_logged(
        quiet_home, items_sensor, daemon) -> None:
    # `(a|aa)+$` backtracks for minutes on a run of 40 `a` not at the end: a project's file must not stall the
    # daemon with it. The search stops at the timeout, the text is hidden whole, the pattern is logged and
    # left out; the project's other pattern still applies.
    items = items_sensor(trigger={"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3,
                                  "description": "opened {ticket}"})
    project_config = quiet_home.project / ".claude" / "attend.yaml"
    project_config.parent.mkdir(parents=True, exist_ok=True)
    project_config.write_text("redact: ['(a|aa)+$', 'internal-[0-9]{6}']\n")
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the baseline poll")
    items.set([{"id": 1, "ticket": "a" * 40 + "! internal-111111"}])
    lines = d.wait_for(lambda lines: any(line.startswith("[attend sensor=items") for line in lines))
    assert "[attend sensor=items priority=medium] <redacted>" in lines
    wait_until(lambda: any("'(a|aa)+$' ran past" in line and "no longer applied" in line for line in d.stderr),
               what="the stalled pattern logged")
    items.set([{"id": 1, "ticket": "x"}, {"id": 2, "ticket": "a" * 40 + "! internal-222222"}])
    lines = d.wait_for(lambda lines: any("internal-" in line or "opened" in line for line in lines))
    assert f"[attend sensor=items priority=medium] opened {'a' * 40}! <redacted>" in lines
    assert not any("111111" in line or "222222" in line for line in lines)
    assert d.stop() == 0
