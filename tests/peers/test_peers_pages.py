"""`attend peers inbox --limit/--page/--before/--id` and `attend peers whoami --machine`, through the CLI
(attend.cli.main in-process) over real message files and batch files."""

from __future__ import annotations

import json
import socket

import pytest
from tests.conftest import run_in_process

from attend.peers.mailbox import Mailbox, Message, _real_folder, peers_dir, write_received

#: How the seven messages are stored: a file each (sent here), received together from the peers server as
#: batch files (peers/natsbox.py), or some of each; every listing reads the same whichever it is.
SHAPES = {"files": [[1], [2], [3], [4], [5], [6], [7]], "batches": [[1, 2, 3], [4, 5, 6, 7]],
          "mixed": [[1], [2, 3, 4, 5], [6], [7]]}


@pytest.fixture(params=sorted(SHAPES))
def stored(home, request):
    """Seven messages to this project from session `a`, one second apart (ids 1..7 in time order)."""
    mailbox = Mailbox(peers_dir(home.env()))
    project = str(home.project.resolve())
    messages = {n: Message(f"{1764565200000 + n * 1000:013d}-00000{n}", "a", "session", "/elsewhere", project, None,
                           None, f"note {n}", 1764565200.0 + n) for n in range(1, 8)}
    for group in SHAPES[request.param]:
        if len(group) == 1:
            mailbox.post(messages[group[0]])
        else:
            write_received(_real_folder(mailbox.root / mailbox.tray_name(project)), [messages[n] for n in group])
    return [messages[n].id for n in range(1, 8)]


def inbox(home, *args: str):
    return run_in_process(["peers", "inbox", *args], env=home.env(ATTEND_SESSION="b"), cwd=home.project)


def texts(out) -> list[str]:
    assert out.returncode == 0, out.stderr
    return [m["text"] for m in json.loads(out.stdout)]


def test_inbox_pages_go_back_from_the_newest_limit_messages_at_a_time(home, stored) -> None:
    assert texts(inbox(home, "--json", "--limit", "3")) == ["note 5", "note 6", "note 7"]
    assert texts(inbox(home, "--json", "--limit", "3", "--page", "2")) == ["note 2", "note 3", "note 4"]
    assert texts(inbox(home, "--json", "--limit", "3", "--page", "3")) == ["note 1"]
    assert texts(inbox(home, "--json", "--limit", "3", "--page", "4")) == []
    plain = inbox(home, "--limit", "2", "--page", "2")
    assert [line.rsplit(": ", 1)[1] for line in plain.stdout.splitlines()] == ["note 4", "note 5"]


def test_inbox_before_an_id_lists_only_older_messages_and_pages_from_there(home, stored) -> None:
    assert texts(inbox(home, "--json", "--before", stored[4])) == ["note 1", "note 2", "note 3", "note 4"]
    assert texts(inbox(home, "--json", "--before", stored[4], "--limit", "2")) == ["note 3", "note 4"]
    assert texts(inbox(home, "--json", "--before", stored[4], "--limit", "2", "--page", "2")) == ["note 1", "note 2"]
    assert texts(inbox(home, "--json", "--all", "--before", stored[2])) == ["note 1", "note 2"]


def test_inbox_id_flag_shows_one_message_whole_as_the_positional_id_does(home, stored) -> None:
    flag, positional = inbox(home, "--id", stored[2]), inbox(home, stored[2])
    assert flag.returncode == 0 and flag.stdout == positional.stdout
    assert flag.stdout.splitlines()[-1] == "note 3"
    assert json.loads(inbox(home, "--id", stored[2], "--json").stdout)["text"] == "note 3"
    missing = inbox(home, "--id", "1764565200000-ffffff")
    assert missing.returncode == 1 and "no message 1764565200000-ffffff" in missing.stderr


@pytest.mark.parametrize(("args", "says"), [
    (("--limit", "0"), "0 is less than 1"),
    (("--page", "x"), "'x' is not a whole number"),
    (("--before", "yesterday"), "--before yesterday: not a message id"),
    (("--id", "1764565200000-000001", "--limit", "2"), "inbox ID shows one message"),
    (("1764565200000-000001", "--id", "1764565200000-000002"), "not allowed with argument"),
    (("--all", "--page", "2"), "--all lists every message"),
])
def test_inbox_paging_arguments_that_make_no_sense_are_usage_errors(home, stored, args, says) -> None:
    out = inbox(home, *args)
    assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr


def test_whoami_machine_names_this_machines_id_and_host(home) -> None:
    out = run_in_process(["peers", "whoami", "--machine", "--json"], env=home.env(), cwd=home.project)
    assert out.returncode == 0, out.stderr
    machine = json.loads(out.stdout)
    assert machine["name"] == socket.gethostname()
    assert (home.state / "attend" / "machine-id").read_text().strip() == machine["machine"]
    again = run_in_process(["peers", "whoami", "--machine"], env=home.env(), cwd=home.project)
    assert again.stdout.strip() == f"{machine['machine']} ({socket.gethostname()})"
