"""`attend run` stays up (DESIGN.md, "Delivery": Staying up): real daemons in temporary homes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from daemon_rig import journal_rows, query, sensors_json, wait_until

from attend.runtime.sessions.upkeep import STAMP, Reexec, keep_polling, reexec_argv

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

FAST = {"interval": "0.5s", "min_interval": "0.2s"}


def polls(home, monitor) -> None:
    wait_until(lambda: any("sensor(s) running" in line for line in monitor.stderr), what="the monitor polls")
    wait_until(lambda: (sensors_json(home).get("items") or {}).get("last_poll") is not None, what="the first poll")


def test_the_state_folder_removed_under_a_running_daemon_loses_no_later_line(items_sensor, daemon, quiet_home) -> None:
    items = items_sensor(**FAST)
    monitor = daemon("--session", "s1")
    polls(quiet_home, monitor)
    items.set([{"id": 1}])
    monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 1" in lines)
    shutil.rmtree(quiet_home.state / "attend")
    items.set([{"id": 1}, {"id": 2}])
    lines = monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 2" in lines)
    assert lines.count("[attend sensor=items priority=medium] new item 1") == 1  # nothing re-baselined
    wait_until(lambda: [r["description"] for r in journal_rows(quiet_home, sensor="items")] == ["new item 1", "new item 2"],
               what="the journal written again, with the later line")
    wait_until(lambda: any("recovered in place" in line for line in monitor.stderr), what="the recovery logged")
    doctor = json.loads(quiet_home.attend("doctor", "--json").stdout)
    (recovery,) = [c for c in doctor["checks"] if c["check"] == "recoveries"]
    assert "was removed or replaced; recovered in place" in recovery["message"]


def test_a_new_session_id_in_claude_codes_record_moves_the_running_monitor_to_it(items_sensor, daemon, quiet_home) -> None:
    record = quiet_home.root / ".claude" / "sessions" / f"{os.getpid()}.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"pid": os.getpid(), "sessionId": "old"}))
    items = items_sensor(**FAST)
    monitor = daemon()
    polls(quiet_home, monitor)
    items.set([{"id": 1}])
    monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 1" in lines)
    record.write_text(json.dumps({"pid": os.getpid(), "sessionId": "new"}))
    wait_until(lambda: query(quiet_home, "SELECT pid, role FROM sessions WHERE session = 'new'")
               == [(monitor.proc.pid, "polling")], what="the same process serves the new id")
    items.set([{"id": 1}, {"id": 2}])
    lines = monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 2" in lines)
    assert lines.count("[attend sensor=items priority=medium] new item 1") == 1
    (old,) = query(quiet_home, "SELECT printed_upto FROM sessions WHERE session = 'old'")
    (new,) = query(quiet_home, "SELECT printed_upto FROM sessions WHERE session = 'new'")
    assert new[0] >= old[0] > 0
    wait_until(lambda: any("(/clear)" in line for line in monitor.stderr), what="the move logged")


def plugin_venv(path: Path, version: str, *, marker: bool = False) -> Path:
    """A plugin virtualenv as bin/attend's build leaves it, stamped `version`: its python is this interpreter,
    over this interpreter's packages. With `marker`, every interpreter started from it writes its pid to
    `path/started` (a line of its own .pth), so a test knows which virtualenv a process runs from."""
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").symlink_to(sys.executable)
    (path / "pyvenv.cfg").symlink_to(Path(sys.prefix) / "pyvenv.cfg")
    here = Path(sysconfig.get_paths()["purelib"])  # this interpreter's packages (attend among them)
    if marker:
        packages = path / here.relative_to(sys.prefix)
        packages.mkdir(parents=True)
        (packages / "00-test.pth").write_text(
            f"import site; site.addsitedir({str(here)!r})\n"
            f"import os, sys; open(os.path.join(sys.prefix, 'started'), 'a').write('%d\\n' % os.getpid())\n")
    else:
        (path / "lib").symlink_to(Path(sys.prefix) / "lib")
    (path / STAMP).write_text(version + "\n")
    return path


def test_a_plugin_version_installed_under_a_running_monitor_makes_it_start_again_on_the_new_one(
        items_sensor, daemon, quiet_home) -> None:
    version = next(line.split('"')[1] for line in (REPO / "pyproject.toml").read_text().splitlines()
                   if line.startswith("version = "))
    data = quiet_home.root / "plugin-data"
    plugin_venv(data / "venv", version)
    items = items_sensor(**FAST)
    monitor = daemon("--session", "s1", command=[str(REPO / "plugin" / "bin" / "attend")], env={"CLAUDE_PLUGIN_DATA": str(data)})
    polls(quiet_home, monitor)
    items.set([{"id": 1}])
    monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 1" in lines)
    # The launcher's install: the new virtualenv built beside the old one, stamped, then swapped in.
    new = plugin_venv(data / "venv.new-1", "99.0.0", marker=True)
    (data / "venv").rename(data / "venv.old-1")
    new.rename(data / "venv")
    started = data / "venv" / "started"
    wait_until(lambda: started.exists() and str(monitor.proc.pid) in started.read_text().split(),
               what="the monitor started again from the new virtualenv (the same pid: an exec)")
    doctor = json.loads(quiet_home.attend("doctor", "--json").stdout)
    (recovery,) = [c for c in doctor["checks"] if c["check"] == "recoveries"]
    assert f"attend 99.0.0 was installed under this attend run ({version}); recovered in place" in recovery["message"]
    items.set([{"id": 1}, {"id": 2}])
    lines = monitor.wait_for(lambda lines: "[attend sensor=items priority=medium] new item 2" in lines)
    assert lines.count("[attend sensor=items priority=medium] new item 1") == 1  # the same stdout, nothing again
    assert monitor.proc.poll() is None


async def test_a_failed_polling_loop_is_logged_and_started_again_but_a_reexec_ends_it(autojump_clock) -> None:
    runs, logged = [], []

    async def loop() -> None:
        runs.append(1)
        if len(runs) < 3:
            raise RuntimeError("store locked")

    await keep_polling(loop, logged.append, ends=(Reexec,))
    assert len(runs) == 3 and len(logged) == 2
    assert logged[0].startswith("the polling loop failed (RuntimeError: store locked); recovered in place")

    async def reexec() -> None:
        raise Reexec("new version")

    with pytest.raises(Reexec):
        await keep_polling(reexec, logged.append, ends=(Reexec,))


def test_a_reexec_runs_attend_from_this_interpreter_without_the_working_folder_first(tmp_path) -> None:
    # `attend run` runs in the project folder: a re-exec as `python -m attend` would import a checkout's own
    # attend/ package from there (sys.path[0]) in place of attend. -P keeps that folder off sys.path.
    argv = reexec_argv(["attend", "run", "--session", "s1"])
    assert argv == [sys.executable, "-P", "-m", "attend", "run", "--session", "s1"]
    planted = tmp_path / "attend"
    planted.mkdir()
    (planted / "__init__.py").write_text("raise SystemExit('the checkout ran')\n")
    done = subprocess.run([*argv[:3], "attend", "--version"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("attend "), done.stderr
