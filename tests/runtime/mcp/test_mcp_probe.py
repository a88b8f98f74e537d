"""`attend sensors probe` through the real CLI, real test servers and the real store."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from typing import Any

from mcp_rig import Behind, mcp_sensor_yaml

from attend.runtime.mcp.probe import compare_results
from attend.runtime.store import Store, default_db_path
from attend.spec import layer_paths


def stored_probe(home: Any, name: str) -> dict[str, Any] | None:
    with Store(default_db_path(layer_paths(home.project, home.env()).state_dir)) as store:
        return store.get_probe(name)


def test_a_clean_tool_passes_and_confirm_records_it_with_both_results(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    done = home.attend("sensors", "probe", "tracker", "--confirm")
    assert done.returncode == 0, done.stderr
    assert "holds all 1 item(s)" in done.stdout
    record = stored_probe(home, "tracker")
    assert record is not None
    assert record["ok"] is True and record["confirmed"] is True
    assert record["tool"] == "list_items" and record["server_name"] == "listing.py"
    assert record["first"] == record["second"] == {"items": [{"id": "a", "title": "first"}]}
    assert record["time"].endswith("Z")


def test_a_message_lane_sensor_without_author_can_be_probed_as_the_daemon_runs_it(home: Any, behind: Behind) -> None:
    doc = json.loads(mcp_sensor_yaml("chat", behind.inline("listing")))
    doc["lane"] = "message"  # no `author`: the daemon runs it on the event lane
    home.write_user_sensor("chat", json.dumps(doc))
    done = home.attend("sensors", "probe", "chat", "--confirm")
    assert done.returncode == 0, done.stdout + done.stderr
    record = stored_probe(home, "chat")
    assert record is not None and record["ok"] is True and record["confirmed"] is True


def test_a_tool_that_advances_a_cursor_fails_the_probe(home: Any, behind: Behind) -> None:
    behind.write_items([{"id": "m1", "title": "hello"}, {"id": "m2", "title": "again"}])
    server = behind.inline("cursor")
    home.write_user_sensor("inbox", mcp_sensor_yaml("inbox", server, "unread"))
    done = home.attend("sensors", "probe", "inbox", "--confirm")
    assert done.returncode == 1
    assert "lost 2 of 2 item(s): m1, m2" in done.stdout
    record = stored_probe(home, "inbox")
    assert record is not None and record["ok"] is False and record["confirmed"] is False
    assert record["lost"] == {"new-item": ["m1", "m2"]}


def test_without_a_terminal_or_confirm_the_record_stays_unconfirmed_and_says_how(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    done = home.attend("sensors", "probe", "tracker", input="")
    assert done.returncode == 0
    assert "attend sensors probe tracker --confirm" in done.stdout
    record = stored_probe(home, "tracker")
    assert record is not None and record["ok"] is True and record["confirmed"] is False


def test_json_output_is_the_stored_record(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    done = home.attend("sensors", "probe", "tracker", "--confirm", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == stored_probe(home, "tracker")


def test_a_refused_tool_cannot_be_probed(home: Any, behind: Behind) -> None:
    home.write_user_sensor("plain", mcp_sensor_yaml("plain", behind.inline("unannotated")))
    done = home.attend("sensors", "probe", "plain", "--confirm")
    assert done.returncode == 1
    assert "refused" in done.stderr and "readOnlyHint" in done.stderr
    assert stored_probe(home, "plain") is None


def test_probing_an_unknown_or_non_mcp_sensor_is_a_usage_error(home: Any) -> None:
    home.write_user_sensor(
        "echo", "spec: 1\nname: echo\nkind: command\ncommand:\n  argv: [echo, '{}']\ntriggers: {}\n"
    )
    unknown = home.attend("sensors", "probe", "nothing")
    assert unknown.returncode == 2 and "no sensor named 'nothing'" in unknown.stderr
    command = home.attend("sensors", "probe", "echo")
    assert command.returncode == 2 and "only mcp sensors are probed" in command.stderr


class _Trigger:
    """The two fields of a compiled trigger the comparison reads."""

    def __init__(self, path: str, key: str | None) -> None:
        from attend.compiler import compile_trigger

        definition: dict[str, Any] = {"path": path, "on": "changed"}
        if key:
            definition["key"] = key
        self.ir = compile_trigger(definition).ir


def test_the_comparison_uses_dotted_keys_and_ignores_reordering_and_additions() -> None:
    triggers = {"t": _Trigger("$.data[*]", "ref.id")}
    first = {"data": [{"ref": {"id": 1}}, {"ref": {"id": 2}}]}
    second = {"data": [{"ref": {"id": 3}}, {"ref": {"id": 2}}, {"ref": {"id": 1}}]}
    assert compare_results(triggers, first, second).ok
    lost = compare_results(triggers, second, first)
    assert not lost.ok and lost.lost == {"t": ["3"]}


def test_a_keyless_trigger_compares_the_watched_value_and_an_empty_first_call_is_noted() -> None:
    assert not compare_results({"t": _Trigger("$.count", None)}, {"count": 2}, {"count": 1}).ok
    empty = compare_results({"t": _Trigger("$.items[*]", "id")}, {"items": []}, {"items": []})
    assert empty.ok and "nothing could be compared" in empty.notes[0]



def probe_on_a_terminal(home: Any, name: str, answer: str) -> tuple[int, str]:
    """Run `attend sensors probe NAME` with a pseudo-terminal as stdin/stdout and type `answer` at the prompt."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "attend", "sensors", "probe", name],
            cwd=home.project, env=home.env(), stdin=follower, stdout=follower, stderr=subprocess.PIPE,
        )
        os.close(follower)
        seen = b""
        deadline = time.monotonic() + 60
        while b"[y/N]" not in seen and time.monotonic() < deadline:
            seen += os.read(leader, 4096)
        os.write(leader, answer.encode() + b"\n")
        code = proc.wait(timeout=60)
        proc.stderr.close()
        try:
            while chunk := os.read(leader, 4096):
                seen += chunk
        except OSError:  # the terminal closes with the process (EIO on Linux)
            pass
    finally:
        os.close(leader)
    return code, seen.decode(errors="replace")


def test_the_operator_answers_the_prompt_on_a_terminal(home: Any, behind: Behind) -> None:
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    code, out = probe_on_a_terminal(home, "tracker", "y")
    assert code == 0, out
    assert "still unread or otherwise untouched" in out
    record = stored_probe(home, "tracker")
    assert record is not None and record["confirmed"] is True

    code, out = probe_on_a_terminal(home, "tracker", "n")
    assert code == 1
    assert "recorded as not confirmed" in out
    record = stored_probe(home, "tracker")
    assert record is not None and record["ok"] is True and record["confirmed"] is False


def _listed(home: Any, name: str) -> dict[str, Any]:
    out = home.attend("sensors", "list", "--json")
    assert out.returncode == 0, out.stderr
    return {row["name"]: row for row in json.loads(out.stdout)}[name]


def test_an_mcp_sensor_never_probed_lists_as_unprobed_with_the_command_that_lets_it_poll(
    quiet_home: Any, behind: Behind
) -> None:
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    row = _listed(quiet_home, "tracker")
    assert row["state"] == "unprobed"
    assert "not probed yet" in row["message"] and "`attend sensors probe tracker --confirm`" in row["message"]
    assert behind.starts() == []  # listing starts no server


def test_a_successful_probe_clears_unprobed_in_the_listing_at_once(quiet_home: Any, behind: Behind) -> None:
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    failed = quiet_home.attend("sensors", "poll", "tracker")  # stores the `unprobed` state, as a daemon's poll would
    assert failed.returncode == 1 and "unprobed" in failed.stdout
    assert "attend sensors probe tracker --confirm" in failed.stdout
    probed = quiet_home.attend("sensors", "probe", "tracker", "--confirm")
    assert probed.returncode == 0, probed.stderr
    assert _listed(quiet_home, "tracker")["state"] == "ok"


def test_a_probe_taken_with_other_args_lists_as_unprobed_again(quiet_home: Any, behind: Behind) -> None:
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", behind.inline("listing")))
    assert quiet_home.attend("sensors", "probe", "tracker", "--confirm").returncode == 0
    assert _listed(quiet_home, "tracker")["state"] == "ok"
    changed = quiet_home.attend("settings", "set", "attend.sensors.tracker.mcp.args", "{limit: 5}")
    assert changed.returncode == 0, changed.stderr
    row = _listed(quiet_home, "tracker")
    assert row["state"] == "unprobed" and "another server, tool or args" in row["message"]
