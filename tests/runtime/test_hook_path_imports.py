"""The cheap path: a hook with nothing to hand over loads no sensor and imports no trio (DESIGN.md, "Delivery").

A `PostToolUse` hook runs after every tool call, so the one with nothing to hand over answers from the
store alone: no YAML reader, no validator, no sensors, no trio, no subprocess (a poller is live).
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys

from attend.files import run_lock_path

PROBE = """
import io, sys
sys.stdin = io.StringIO(sys.argv[2])
from attend.cli import main
code = main(['drain', '--format', 'hook', '--project', sys.argv[1]])
heavy = ('trio', 'yaml', 'hashlib', 'locale', 'subprocess', 'platform', 'uuid', 'typing', 'dataclasses', 'inspect', 'attend.runtime.delivery',
         'attend.sensors', 'attend.compiler', 'attend.grammar', 'attend.spec.loading',
         'attend.spec.config', 'attend.spec.layers', 'attend.spec.validate', 'attend.runtime.daemon',
         'attend.runtime.sessions.cold_start', 'attend.runtime.serve', 'attend.runtime.sessions.printer',
         'nats', 'asyncio', 'attend.peers.natslink', 'attend.peers.natsbox', 'attend.peers.transport')
print(code, sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)))
"""


def test_a_post_tool_use_hook_with_nothing_to_hand_over_loads_no_sensor_and_imports_no_trio(home) -> None:
    # Peers across machines chosen (docs/peers.md): still no nats, no asyncio, no transport on this path.
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("peers:\n  transport: nats\n")
    path = run_lock_path(home.project, home.env())
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as lock:  # a live poller: the hook has none to start
        fcntl.flock(lock, fcntl.LOCK_EX)
        payload = json.dumps({"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash"})
        # The first makes the store (its id, with uuid; the project's hash, with hashlib, which the store
        # remembers); the second is every later hook.
        for _ in range(2):
            run = subprocess.run([sys.executable, "-c", PROBE, str(home.project), payload], capture_output=True,
                                 text=True, env=home.env(), cwd=home.project, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "0 []"


#: `python -m attend ARGS` as bin/attend runs it, telling on stderr at exit whether the collector was on and
#: whether what start-up made was frozen (moved where no collection looks at it again).
MAIN_PROBE = """
import atexit, gc, runpy, sys
atexit.register(lambda: sys.stderr.write(f"collector on: {gc.isenabled()}; frozen: {gc.get_freeze_count() > 0}\\n"))
sys.argv = ["attend", *sys.argv[1:]]
runpy.run_module("attend", run_name="__main__", alter_sys=True)
"""


def test_python_m_attend_runs_a_hook_without_the_cyclic_collector_and_any_other_command_with_it_past_its_start_up(
        home) -> None:
    payload = json.dumps({"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash"})
    said = {}
    path = run_lock_path(home.project, home.env())
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as lock:  # a live poller: the hook has none to start
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, argv, stdin in (("hook", ["drain", "--format", "hook", "--project", str(home.project)], payload),
                                  ("compile", ["compile", "--check"], "")):
            run = subprocess.run([sys.executable, "-c", MAIN_PROBE, *argv], input=stdin, capture_output=True,
                                 text=True, env=home.env(), cwd=home.project, timeout=60)
            assert run.returncode == 0, run.stderr
            said[name] = run.stderr.strip().splitlines()[-1]
    assert said == {"hook": "collector on: False; frozen: False", "compile": "collector on: True; frozen: True"}


def test_attend_cli_main_called_in_process_leaves_the_callers_collector_as_it_was(home, monkeypatch) -> None:
    import gc

    from attend.cli import main

    monkeypatch.chdir(home.project)
    for env in home.env().items():
        monkeypatch.setenv(*env)
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        assert main(["compile", "--check"]) == 0
        assert not gc.isenabled()
        assert gc.get_freeze_count() == frozen  # nothing of the caller's frozen
    finally:
        gc.enable()
