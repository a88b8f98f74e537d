"""`wake_on` end to end: a real daemon, real files, real git; a change polls at once, not at `interval`.

No timed assertion: each sensor's interval is far longer than the test waits, so a notification that
arrives at all came from the wake, and the store's times say it came before the interval could fire.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from daemon_rig import PATIENCE, journal_rows, sensors_json, wait_until

pytestmark = pytest.mark.slow


def _first_poll(home, name: str) -> float:
    """The time of the sensor's first poll, as `attend sensors list --json` shows it (epoch seconds)."""
    wait_until(lambda: sensors_json(home)[name]["last_poll"] is not None, what=f"the first poll of {name}")
    return datetime.fromisoformat(sensors_json(home)[name]["last_poll"]).timestamp()


def test_a_command_sensor_with_a_long_interval_reports_a_change_to_its_file_at_once(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(interval="60s", min_interval="0.2s", wake_on=[str(quiet_home.root / "items.json")])
    d = daemon()
    first = _first_poll(quiet_home, "items")
    items.set([{"id": 1}])
    assert d.wait_for(lambda ls: "[attend sensor=items priority=medium] new item 1" in ls, timeout=PATIENCE)
    [row] = journal_rows(quiet_home)
    assert row["time"] - first < 60.0  # before the 60 s interval could have polled again
    assert d.stop() == 0


def test_the_history_of_a_woken_poll_says_when_the_change_was_seen_and_how_long_the_poll_took(
    items_sensor, daemon, quiet_home
) -> None:
    items = items_sensor(interval="60s", min_interval="0.2s", wake_on=[str(quiet_home.root / "items.json")])
    d = daemon()
    _first_poll(quiet_home, "items")
    # A change made before the sensor's watch started is polled when the watch starts, a poll asked for, not a
    # change seen; by the time the line of a first change comes the watch is on, so a second change is seen.
    items.set([{"id": 1}])
    assert d.wait_for(lambda ls: "new item 1" in "".join(ls), timeout=PATIENCE)
    items.set([{"id": 1}, {"id": 2}])
    assert d.wait_for(lambda ls: "new item 2" in "".join(ls), timeout=PATIENCE)
    polls = _polls(quiet_home, "items")  # newest first
    woken, first = polls[0], polls[-1]
    assert "woken" not in first and first["took"] >= 0  # the first poll: at start, not woken
    assert woken["woken"] <= woken["time"] - woken["took"] and woken["took"] >= 0
    shown = quiet_home.attend("sensors", "history", "items").stdout
    assert "(woken by a change: polled " in shown and " after it was seen, the poll took " in shown, shown
    assert d.stop() == 0


#: An items command that changes its own file after its first output: the change comes while the first poll
#: runs, before the daemon could have watched the file had it waited for that poll to end.
CHANGES_DURING_FIRST_POLL = """
import json, pathlib, sys
p = pathlib.Path(sys.argv[1])
print(json.dumps({"items": json.loads(p.read_text())}), flush=True)
done = pathlib.Path(str(p) + ".changed")
if not done.exists():
    done.touch()
    p.write_text(json.dumps([{"id": 1}]))
"""


def test_a_change_made_during_the_first_poll_wakes_the_sensor_instead_of_waiting_out_its_interval(
    daemon, quiet_home
) -> None:
    import sys

    from daemon_rig import NEW_ITEM, sensor_yaml

    items = quiet_home.root / "items.json"
    items.write_text("[]")
    script = quiet_home.root / "changes.py"
    script.write_text(CHANGES_DURING_FIRST_POLL)
    quiet_home.write_user_sensor("items", sensor_yaml("items", [sys.executable, str(script), str(items)],
                                                      trigger=NEW_ITEM, interval="1h", wake_on=[str(items)]))
    d = daemon()
    assert d.wait_for(lambda ls: "[attend sensor=items priority=medium] new item 1" in ls, timeout=PATIENCE)
    first, woken = _polls(quiet_home, "items")[::-1][:2]
    assert "woken" not in first and woken["woken"] >= first["time"] - first["took"]  # seen during the first
    assert d.stop() == 0


def _polls(home, name: str) -> list[dict]:
    """Every stored poll trace of `name`, newest first (`attend sensors history --all --json`)."""
    import json

    return json.loads(home.attend("sensors", "history", name, "--all", "--json").stdout)["history"]


def test_the_shipped_git_sensor_reports_a_branch_switch_before_its_interval(daemon, quiet_home) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "sensors"))
    from sensor_material import GitRepo

    repo = GitRepo(quiet_home.project)
    repo.commit("initial", "README")
    # The shipped interval (30 s); min_interval 0.5 s instead of 5 s, so the wake's poll need not wait 5 s
    # after the first one (only the wake can poll before the interval either way).
    quiet_home.write_user_sensor("git", "spec: 1\nenabled: true\nmin_interval: 0.5s\n")
    d = daemon()
    first = _first_poll(quiet_home, "git")
    repo.git("checkout", "-q", "-b", "feature")
    wait_until(lambda: any(r["description"] == "branch changed: main → feature" for r in journal_rows(quiet_home)),
               timeout=PATIENCE, what="the branch switch in the journal")
    row = next(r for r in journal_rows(quiet_home) if r["description"] == "branch changed: main → feature")
    assert row["time"] - first < 30.0  # the shipped interval: only the wake could poll this early
    assert d.stop() == 0


def test_a_checkout_is_one_poll_that_sees_all_of_it(daemon, quiet_home) -> None:
    """A checkout writes the index, then a new branch's ref, then HEAD (after its work tree, here 300 files):
    the poll it wakes comes after all of them, so no poll reads the new index under the old HEAD (which
    `git status` would show as every switched file staged)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "sensors"))
    from sensor_material import GitRepo

    repo = GitRepo(quiet_home.project)
    for n in range(300):
        (quiet_home.project / f"f{n}").write_text(f"{n}\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "initial")
    repo.git("checkout", "-q", "-b", "other")
    for n in range(0, 300, 2):
        (quiet_home.project / f"f{n}").write_text(f"{n} on other\n")
    repo.git("commit", "-q", "-am", "other")
    repo.git("checkout", "-q", "main")
    quiet_home.write_user_sensor("git", "spec: 1\nenabled: true\nmin_interval: 0.5s\n")
    d = daemon()
    _first_poll(quiet_home, "git")
    repo.git("checkout", "-q", "other")
    wait_until(lambda: any(r["description"] == "branch changed: main → other" for r in journal_rows(quiet_home)),
               timeout=PATIENCE, what="the branch switch in the journal")
    polls = list(reversed(_polls(quiet_home, "git")))  # oldest first: the baseline, then the checkout's poll
    assert "woken" not in polls[0] and "woken" in polls[1], polls
    fired = [o for t in polls[1]["triggers"] for o in t["outcomes"]]
    assert [o["description"] for o in fired] == ["branch changed: main → other"], fired  # nothing staged, nothing dirty
    assert d.stop() == 0


@pytest.mark.parametrize("pattern", ["/proc/**", "/"])
def test_a_wake_on_that_cannot_be_watched_leaves_the_sensor_on_its_interval_and_says_so(
    items_sensor, daemon, quiet_home, pattern
) -> None:
    # The user layer may watch anything; /proc (alone or under /) cannot be watched: permission errors.
    items = items_sensor(interval="1s", min_interval="0.2s", wake_on=[pattern])
    d = daemon()
    wait_until(lambda: "cannot watch" in sensors_json(quiet_home)["items"]["wake_error"], what="the wake_error")
    listed = quiet_home.attend("sensors")
    assert "wake_on not watched: " in listed.stdout, listed.stdout
    items.set([{"id": 1}])  # polled on its interval: the daemon runs on
    assert d.wait_for(lambda ls: "[attend sensor=items priority=medium] new item 1" in ls, timeout=PATIENCE)
    assert d.proc.poll() is None
    assert d.stop() == 0
    assert any("wake_on: cannot watch" in line for line in d.stderr), d.stderr


def test_an_untrusted_checkout_linking_proc_with_a_project_wake_on_cannot_stop_the_daemon(
    items_sensor, daemon, quiet_home
) -> None:
    (quiet_home.project / "link").symlink_to("/proc")
    items = items_sensor(interval="1s", min_interval="0.2s")
    quiet_home.write_project_sensor("items", 'spec: 1\nwake_on: ["link/**"]\n')  # no trust needed to tune
    d = daemon()
    _first_poll(quiet_home, "items")
    items.set([{"id": 1}])
    assert d.wait_for(lambda ls: "[attend sensor=items priority=medium] new item 1" in ls, timeout=PATIENCE)
    wait_until(lambda: any("wake_on link/** not watched: outside the project" in line for line in d.stderr),
               what="the refusal in the log")
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_a_project_wake_on_through_a_symlink_out_of_the_project_is_refused_like_dot_dot(
    items_sensor, daemon, quiet_home, tmp_path
) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (quiet_home.project / "escape").symlink_to(outside)
    items_sensor(interval="1s", min_interval="0.2s")
    quiet_home.write_project_sensor("items", 'spec: 1\nwake_on: ["escape/**", "../**"]\n')
    d = daemon()
    wait_until(lambda: sum("not watched: outside the project" in line for line in d.stderr) == 2,
               what="both refusals in the log")
    assert any("wake_on escape/** not watched" in line for line in d.stderr), d.stderr
    assert sensors_json(quiet_home)["items"]["wake_error"] == ""
    assert d.stop() == 0
