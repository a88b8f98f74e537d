"""Messages received together from the peers server are stored as batch files (peers/mailbox.py
`write_received`): one file per fetch and folder instead of a file per message, read by every reader as the
message files are."""

from __future__ import annotations

import json
import os

from attend.bounds import MAX_PEER_BATCH_BYTES
from attend.peers.mailbox import BATCH_NAME_RE, Mailbox, Message, _real_folder, peers_dir, write_received


def message(n: int, text: str = "") -> Message:
    return Message(f"{1764565200000 + n:013d}-{n:06x}", "a", "session", "/p", None, "open", None,
                   text or f"note {n}", 1764565200.0 + n / 1000)


def test_one_message_is_a_message_file_and_several_are_one_batch_file_named_by_their_newest_and_oldest_ids(home):
    box = Mailbox(peers_dir(home.env()))
    folder = _real_folder(box.root / "open")
    [single] = write_received(folder, [message(1)])
    assert single.name == f"{message(1).id}.json"
    [batch] = write_received(folder, [message(4), message(2), message(3), message(2)])  # in any order, a repeat
    assert batch.name == f"{message(4).id}+{message(2).id}.jsonl" and BATCH_NAME_RE.fullmatch(batch.name)
    assert [json.loads(line)["id"] for line in batch.read_text().splitlines()] == [message(n).id for n in (2, 3, 4)]
    assert [m.id for m in box.read_folder(folder)] == [message(n).id for n in (1, 2, 3, 4)]
    found = box.find(message(3).id)
    assert found is not None and found.text == "note 3"
    assert sorted(os.listdir(folder)) == sorted([single.name, batch.name])  # no temporary file left


def test_a_batch_whose_name_is_taken_keeps_the_file_there_and_writes_what_it_lacks_beside_it(home):
    """Two receivers of one machine storing one redelivery: nothing either stored is replaced or lost, and each
    message is read once."""
    box = Mailbox(peers_dir(home.env()))
    folder = _real_folder(box.root / "open")
    [first] = write_received(folder, [message(1), message(3)])
    before = first.read_bytes()
    written = write_received(folder, [message(1), message(2), message(3)])
    assert first.read_bytes() == before
    assert [p.name for p in written] == [f"{message(2).id}.json"]
    assert [m.id for m in box.read_folder(folder)] == [message(n).id for n in (1, 2, 3)]
    assert [m.id for m in box.newest_visible("b", home.project, 10)] == [message(n).id for n in (1, 2, 3)]


def test_a_batch_past_the_bound_is_split_into_files_each_within_it(home):
    box = Mailbox(peers_dir(home.env()))
    folder = _real_folder(box.root / "open")
    big = "x" * 7000  # with JSON escapes and fields, some 7 KB a line
    messages = [message(n, big) for n in range(1, 1 + 2 * MAX_PEER_BATCH_BYTES // 7000)]
    written = write_received(folder, messages)
    assert len(written) >= 2
    assert all(p.stat().st_size <= MAX_PEER_BATCH_BYTES for p in written)
    assert [m.id for m in box.read_folder(folder)] == [m.id for m in messages]


def test_a_sweep_removes_the_batch_files_of_a_gone_projects_tray_too(home, tmp_path):
    box = Mailbox(peers_dir(home.env()))
    gone = tmp_path / "gone"
    tray = _real_folder(box.root / box.tray_name(tmp_path / "gone"))
    (tray / ".project").write_text(str(gone))
    write_received(tray, [message(1), message(2)])
    write_received(tray, [message(3)])
    assert box.sweep() == 2  # two files: a batch and a message file
    assert not tray.exists()


def test_the_newest_window_reads_only_the_newest_batch_files(home, monkeypatch):
    """A backlog stored as batch files: the sensor's and inbox's newest messages cost the newest files' reads."""
    import attend.peers.mailbox as mailbox

    box = Mailbox(peers_dir(home.env()))
    folder = _real_folder(box.root / "open")
    for start in range(0, 1000, 100):
        write_received(folder, [message(n) for n in range(start + 1, start + 101)])
    read = []
    real = mailbox.read_stored
    monkeypatch.setattr(mailbox, "read_stored", lambda path: read.append(path.name) or real(path))
    newest = box.newest_visible("b", home.project, 150)
    assert [m.id for m in newest] == [message(n).id for n in range(851, 1001)]
    assert len(read) == 2
