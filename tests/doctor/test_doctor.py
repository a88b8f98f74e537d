"""`attend doctor [--json]`: one line per check with its fix; exit 1 when a check fails (DESIGN.md,
"Sessions, Claude Code and the plugin"). Each check is shown failing here with the state that breaks it;
the plugin test (tests/plugin/) shows it passing on a machine wired by the real Claude Code CLI."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time

from attend.commands.doctor import Check, check_path
from attend.files import run_lock_path
from attend.runtime.sessions.runlock import open_lock, try_lock
from attend.runtime.store.tables import SCHEMA_VERSION

STOP_HOOK = {"hooks": {"Stop": [{"hooks": [{"type": "command", "timeout": 10,
                                             "command": 'attend drain --format hook --project "$CLAUDE_PROJECT_DIR"'}]}]}}


def doctor(home) -> tuple[int, dict[str, dict]]:
    done = home.attend("doctor", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0)
    return done.returncode, {c["check"]: c for c in report["checks"]}


#: The four hooks of docs/claude-code.md, section 2 (the Stop hook's command for each event).
ALL_HOOKS = {"hooks": dict.fromkeys(("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"),
                                    STOP_HOOK["hooks"]["Stop"])}


def wire_stop_hook(home, settings_doc: dict = ALL_HOOKS) -> None:
    """The hooks wired by hand as docs/claude-code.md says (all four, or `settings_doc`)."""
    settings = home.root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(settings_doc))


def test_doctor_on_a_fresh_machine_says_to_install_the_plugin_and_exits_1(home):
    done = home.attend("doctor")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[1].rstrip(":") for line in lines] == [
        "versions", "store", "sensors", "daemon", "sessions", "recoveries", "claude-code", "path", "commands", "permissions",
        "mcp"]
    (wiring,) = [line for line in lines if " claude-code: " in line]
    assert wiring.startswith("FAIL claude-code: neither the attend plugin nor a Stop hook")
    assert "fix: in Claude Code: `/plugin marketplace add <your attend clone>`, then `/plugin install attend@attend`" in wiring
    (daemon,) = [line for line in lines if " daemon: " in line]
    assert daemon.startswith("warn daemon: no `attend run` polls ") and "fix: " in daemon


def test_doctor_passes_once_the_stop_hook_is_in_settings_json(home):
    wire_stop_hook(home)
    code, checks = doctor(home)
    assert code == 0, checks
    assert checks["claude-code"]["status"] == "ok"
    assert "Stop hook running `attend drain`" in checks["claude-code"]["message"]
    assert {c["status"] for c in checks.values()} <= {"ok", "warn"}
    assert checks["store"]["message"].endswith(f"schema v{SCHEMA_VERSION} (current)")


def test_doctor_warns_when_only_the_stop_hook_is_wired_and_names_the_missing_hooks(home):
    # it said ok: a session without a live Monitor would hear nothing until it stopped, and no hook would
    # start a headless poller
    wire_stop_hook(home, STOP_HOOK)
    code, checks = doctor(home)
    assert code == 0, checks
    check = checks["claude-code"]
    assert check["status"] == "warn", check
    assert "but none for SessionStart, UserPromptSubmit, PostToolUse" in check["message"]
    assert check["fix"].startswith("add the SessionStart, UserPromptSubmit, PostToolUse hook(s) of docs/claude-code.md")


def test_doctor_takes_the_stop_hook_alone_when_conduits_is_monitor(home):
    wire_stop_hook(home, STOP_HOOK)
    assert home.attend("settings", "set", "attend.delivery.conduits", "monitor").returncode == 0
    code, checks = doctor(home)
    assert checks["claude-code"]["status"] == "ok", checks["claude-code"]


def test_doctor_fails_on_an_installed_but_disabled_plugin_with_the_enable_command(home):
    plugins = home.root / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"attend@attend": [{"scope": "user", "installPath": "/x", "version": "0.1.0"}]}}))
    (home.root / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"attend@attend": False}}))
    code, checks = doctor(home)
    assert code == 1
    assert checks["claude-code"]["message"] == "plugin attend@attend is installed but not enabled"
    assert checks["claude-code"]["fix"] == "in Claude Code: `/plugin enable attend@attend`"


def test_doctor_fails_when_a_sensor_does_not_compile_and_names_it(home):
    wire_stop_hook(home)
    home.write_user_sensor("broken", "spec: 1\nname: broken\nkind: command\ncommand: {argv: [true]}\ninterval: often\n")
    code, checks = doctor(home)
    assert code == 1
    assert checks["sensors"]["status"] == "fail"
    assert checks["sensors"]["message"].startswith("1 do not compile: broken (")
    assert "attend compile --check" in checks["sensors"]["fix"]


def test_doctor_fails_when_the_state_folder_is_unusable(home):
    wire_stop_hook(home)
    (home.state / "attend").write_text("not a folder")
    code, checks = doctor(home)
    assert code == 1
    assert checks["store"]["status"] == "fail" and "aside" in checks["store"]["fix"]
    assert checks["sensors"]["status"] == "ok"  # one broken check never hides the others


def test_doctor_fails_when_a_newer_attend_wrote_the_store(home):
    wire_stop_hook(home)
    assert home.attend("sensors").returncode == 0  # creates the store
    with sqlite3.connect(home.state / "attend" / "attend.db") as db:
        db.execute("PRAGMA user_version = 99")
    code, checks = doctor(home)
    assert code == 1
    assert checks["store"]["message"].endswith(f"has schema v99, this attend reads v{SCHEMA_VERSION}")


def test_doctor_names_the_process_polling_the_project_and_since_when(home):
    wire_stop_hook(home)
    lock = open_lock(run_lock_path(home.project, home.env()))
    assert try_lock(lock)  # this process holds the run lock, as a poller without a session row would
    try:
        code, checks = doctor(home)
    finally:
        lock.close()
    assert code == 0
    assert checks["daemon"]["status"] == "ok"
    assert checks["daemon"]["message"].startswith(f"pid {os.getpid()} polls {home.project} since 20")


def test_doctor_fails_when_an_enabled_command_sensor_s_program_is_not_on_path(home):
    wire_stop_hook(home)
    home.write_user_sensor("ghost", "spec: 1\nname: ghost\nkind: command\ncommand: {argv: [no-such-program-xyz]}\n")
    home.write_user_sensor("off", "spec: 1\nname: off\nkind: command\nenabled: false\ncommand: {argv: [no-such-xyz2]}\n")
    code, checks = doctor(home)
    assert code == 1
    assert checks["commands"]["message"] == "not on PATH: ghost needs `no-such-program-xyz`"
    assert "attend.sensors.ghost.enabled false" in checks["commands"]["fix"]


def test_doctor_fails_when_an_enabled_mcp_sensor_s_server_does_not_resolve(home):
    wire_stop_hook(home)
    home.write_user_sensor("tracker", "spec: 1\nname: tracker\nkind: mcp\nmcp: {server: nowhere, tool: list}\n")
    home.write_user_sensor("inline", "spec: 1\nname: inline\nkind: mcp\n"
                                     "mcp: {server: {command: no-such-server-xyz}, tool: list}\n")
    code, checks = doctor(home)
    assert code == 1
    message = checks["mcp"]["message"]
    assert "tracker: no MCP server named 'nowhere'" in message
    assert "inline: server no-such-server-xyz needs `no-such-server-xyz`, not on PATH" in message


def test_doctor_names_the_polling_session_and_the_attached_ones_of_real_daemons(quiet_home):
    home = quiet_home
    wire_stop_hook(home)
    daemons = [subprocess.Popen([sys.executable, "-m", "attend", "run", "--session", name], cwd=home.project,
                                env=home.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for name in ("first", "second")]
    try:
        deadline = time.monotonic() + 90  # two cold daemon starts on a loaded two-core machine
        while True:
            code, checks = doctor(home)
            settled = checks["sessions"]["message"].startswith("1 attached") and \
                checks["daemon"]["message"].startswith("session ")  # both sides recorded, not just one
            if settled or time.monotonic() > deadline:
                break
            time.sleep(0.3)
    finally:
        for daemon in daemons:
            daemon.send_signal(signal.SIGTERM)
        for daemon in daemons:
            daemon.wait(timeout=30)
    assert code == 0, checks
    pids = {"first": daemons[0].pid, "second": daemons[1].pid}
    polling = checks["daemon"]["message"]
    poller = "first" if polling.startswith("session first ") else "second"
    other = ({"first", "second"} - {poller}).pop()
    assert polling.startswith(f"session {poller} (pid {pids[poller]}) polls {home.project} since 20")
    assert checks["sessions"]["message"] == f"1 attached (each prints every notification): {other} (pid {pids[other]})"


def test_doctor_quotes_the_project_path_in_the_command_it_suggests_so_it_pastes_as_one_word(home):
    project = home.root / "my proj ünï 日本"
    project.mkdir()
    done = home.attend("doctor", "--project", str(project))
    (daemon,) = [line for line in done.stdout.splitlines() if " daemon: " in line]
    suggested = daemon.split("`")[-2]
    assert shlex.split(suggested) == ["attend", "run", "--project", str(project)]


def test_doctor_warns_that_a_remote_mcp_server_that_refuses_connections_leaves_its_sensor_unprobed(home):
    # doctor said nothing: the sensor stayed unprobed, never polled, and no check named it
    import socket

    wire_stop_hook(home)
    with socket.socket() as closed:  # a port nothing listens on once this socket is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    home.write_user_sensor("remote", "spec: 1\nname: remote\nkind: mcp\n"
                                     f"mcp: {{server: {{type: http, url: '{url}'}}, tool: list}}\n")
    code, checks = doctor(home)
    assert checks["mcp"]["status"] == "ok"
    reach = checks["mcp reach"]
    assert reach["status"] == "warn"
    assert reach["message"] == f"remote: connection refused at {url}; not probed, so never polled", reach
    assert code == 0


def test_after_a_plugin_only_install_doctor_states_the_link_that_puts_attend_on_path(tmp_path):
    # The plugin runs attend by its launcher's full path (issue 34, item 6): `attend` is not on PATH, and the
    # fix links the command the launcher writes beside its virtualenv (tests/plugin runs the real one).
    data = tmp_path / "plugin-data"
    (data / "venv").mkdir(parents=True)
    (data / "bin").mkdir()
    (data / "bin" / "attend").write_text("#!/bin/sh\necho \"attend from the plugin's virtualenv\"\n")
    (data / "bin" / "attend").chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ATTEND_PLUGIN_VENV": str(data / "venv")}
    check = check_path(env)
    local_bin = tmp_path / ".local" / "bin"
    assert (check.status, check.message) == ("warn", "`attend` is not on PATH (the Claude Code plugin runs it by its full path)")
    assert check.fix == (f"`mkdir -p {local_bin} && ln -sf {data / 'bin' / 'attend'} {local_bin / 'attend'}`, "
                         f"and put {local_bin} on PATH")
    subprocess.run(["sh", "-c", check.fix.split("`")[1]], env=env, check=True, timeout=60)  # the command, as stated
    env["PATH"] = f"{local_bin}:{env['PATH']}"
    assert check_path(env) == Check("path", "ok", f"attend on PATH: {local_bin / 'attend'}")
    done = subprocess.run(["attend"], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout == "attend from the plugin's virtualenv\n"


def test_doctor_says_a_plugin_virtualenv_built_without_its_command_is_built_again_to_write_it(tmp_path):
    venv = tmp_path / "plugin-data" / "venv"
    venv.mkdir(parents=True)
    check = check_path({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ATTEND_PLUGIN_VENV": str(venv)})
    assert check.status == "warn"
    assert check.fix.startswith(f"delete {venv} (the plugin's next command builds it again and writes "
                                f"{venv.parent / 'bin' / 'attend'}), then `mkdir -p ")
