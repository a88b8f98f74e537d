"""A damaged store (issue 28, items 4 and 6): a bad row is skipped and listed by `attend doctor` with its
table and rowid, never fatal; an unusable file is one line, `cannot use the state store`, from every
command and from a running daemon (never exit 70); a store deleted, emptied or replaced is said."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess

import pytest
from daemon_rig import sensors_json, wait_until

from attend.runtime.store import SCHEMA_VERSION

pytestmark = pytest.mark.slow

UNUSABLE = "attend: cannot use the state store "


def _db(home):
    return home.state / "attend" / "attend.db"


def _sql(home, script: str) -> None:
    conn = sqlite3.connect(_db(home))
    try:
        conn.executescript(script)
        conn.commit()
    finally:
        conn.close()


def _scope(home) -> str:
    return str(home.project.resolve())


def _baseline(home, items) -> None:
    """A store holding one poll of `items` and one fire of it (a journal row, a trace, a status)."""
    assert home.attend("sensors", "poll", "items").returncode == 0
    items.set([{"id": 1}])
    assert home.attend("sensors", "poll", "items").returncode == 0


def _no_internal_error(out) -> None:
    assert out.returncode != 70 and "internal error" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def _doctor_store(home) -> dict[str, dict]:
    out = home.attend("doctor", "--json")
    _no_internal_error(out)
    return {c["check"]: c for c in json.loads(out.stdout)["checks"]}


# -- item 4: one bad row -----------------------------------------------------------------------------

def test_a_trace_that_is_not_json_is_skipped_and_doctor_names_its_row(items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    _sql(quiet_home, "UPDATE poll_history SET trace = '{bad' WHERE id = 1")
    for args in (("sensors",), ("sensors", "history", "items"), ("sensors", "poll", "items")):
        out = quiet_home.attend(*args)
        assert out.returncode == 0, (args, out.stderr)
    rows = _doctor_store(quiet_home)["store rows"]
    assert rows["status"] == "warn"
    assert "poll_history rowid 1: trace is not JSON" in rows["message"]


BAD_ROWS = {
    "pending meta": "INSERT INTO pending (scope, sensor, time, trigger, magnitude, description, meta)"
                    " VALUES ('{scope}', 'items', 1, 'new', 3, 'old', '{{not json')",
    "pending magnitude": "INSERT INTO pending (scope, sensor, time, trigger, magnitude, description)"
                         " VALUES ('{scope}', 'items', 1, 'new', 'three', 'old')",
    "huge fires": "UPDATE sensor_status SET fires = '[1" + "0" * 400 + "]'",
    "journal meta": "UPDATE journal SET meta = 'nope', printed = 0, drained = 0",
}


@pytest.mark.parametrize("damage", sorted(BAD_ROWS))
def test_a_damaged_row_leaves_the_daemon_polling_and_printing(damage, items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    _sql(quiet_home, BAD_ROWS[damage].format(scope=_scope(quiet_home)))
    assert _doctor_store(quiet_home)["store rows"]["status"] == "warn"
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    items.set([{"id": 1}, {"id": 2}])
    d.wait_for(lambda ls: any(line.endswith("] new item 2") for line in ls))
    assert d.proc.poll() is None
    assert d.stop() == 0
    assert not any("skipped" in line for line in d.stderr), d.stderr  # no round failing over and over
    hook = quiet_home.attend("drain", "--format", "hook", input="{}")
    assert hook.returncode == 0, hook.stderr


def test_damaged_shelf_and_session_rows_and_a_missing_table_leave_every_reader_working(items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    assert quiet_home.attend("sensors", "shelve", "items", "--for", "1h").returncode == 0
    assert quiet_home.attend("drain", "--session", "s1").returncode == 0
    _sql(quiet_home, "UPDATE shelves SET until = 'soon'; UPDATE sessions SET pid = 'abc'; DROP TABLE crate_state")
    for args in (("sensors",), ("sensors", "history", "items"), ("sensors", "poll", "items"),
                 ("drain", "--session", "s1"), ("doctor",)):
        out = quiet_home.attend(*args)
        _no_internal_error(out)
        assert out.returncode in (0, 1), (args, out.stderr)  # doctor fails on the missing Claude Code wiring
    checks = _doctor_store(quiet_home)
    assert "shelves rowid 1: until is not a number" in checks["store rows"]["message"]
    assert "sessions rowid 1: pid is not an integer" in checks["store rows"]["message"]


def test_a_missing_table_is_created_again_and_said(items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    _sql(quiet_home, "DROP TABLE shelves")
    out = quiet_home.attend("sensors", "shelve", "items", "--for", "1h")
    assert out.returncode == 0, out.stderr
    assert "had lost its table(s) shelves; they start over empty" in out.stderr


def test_a_table_made_again_without_its_columns_after_a_check_passed_is_refused(items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)  # every open so far found the tables whole (remembered with the schema cookie)
    _sql(quiet_home, "DROP TABLE shelves; CREATE TABLE shelves (x TEXT)")
    out = quiet_home.attend("sensors")
    _no_internal_error(out)
    assert out.returncode == 1 and "its table shelves has no column" in out.stderr, out.stderr


# -- item 6: an unusable or replaced file ------------------------------------------------------------

def _garbage_pages(home, *, last: int | None = None) -> None:
    """Overwrite the `last` pages (default: every page but the first) with random bytes: the header and
    the schema still say attend's store, so the file opens and the damage shows at the first read of them."""
    db = _db(home)
    data = bytearray(db.read_bytes())
    start = 4096 if last is None else len(data) - 4096 * last
    noise = random.Random(28)
    data[start:] = bytes(noise.randrange(256) for _ in range(len(data) - start))
    db.write_bytes(bytes(data))


def test_a_garbage_page_is_at_most_one_line_from_any_command_and_doctor_finds_it(items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    _garbage_pages(quiet_home, last=2)
    for args in (("sensors", "poll", "items"), ("sensors", "fire", "items", "--input", str(items.path)),
                 ("sensors",), ("sensors", "history", "items")):
        out = quiet_home.attend(*args, timeout=60)
        _no_internal_error(out)  # a command that reads a damaged page says so in one line
        assert out.returncode == 0 or (out.returncode == 1 and out.stderr.count(UNUSABLE) == 1), (args, out.stderr)
    store = _doctor_store(quiet_home)["store"]
    assert store["status"] == "fail", store  # PRAGMA quick_check finds the damage (or meets it, malformed)
    assert "is damaged (PRAGMA quick_check: " in store["message"] or "malformed" in store["message"], store


def test_a_sqlite_file_of_other_tables_is_one_line_from_every_command(quiet_home) -> None:
    _db(quiet_home).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(_db(quiet_home))
    conn.executescript("CREATE TABLE journal (x TEXT); CREATE TABLE sessions (y TEXT);"
                       f" PRAGMA user_version = {SCHEMA_VERSION};")
    conn.close()
    for args in (("sensors",), ("drain", "--format", "hook"), ("sensors", "history", "context"), ("run",)):
        out = quiet_home.attend(*args, timeout=60)
        _no_internal_error(out)
        assert out.returncode == 1 and out.stderr.startswith(UNUSABLE) and out.stderr.count("\n") == 1, (args, out.stderr)
        assert "is not attend's store" in out.stderr
    assert _doctor_store(quiet_home)["store"]["status"] == "fail"


@pytest.mark.parametrize("how", ["deleted", "emptied", "replaced"])
def test_a_store_deleted_emptied_or_replaced_starts_over_and_says_so(how, items_sensor, quiet_home) -> None:
    items = items_sensor()
    _baseline(quiet_home, items)
    db = _db(quiet_home)
    if how == "deleted":
        db.unlink()
    elif how == "emptied":
        os.truncate(db, 0)
    else:
        db.unlink()
        sqlite3.connect(db).close()  # another, empty SQLite file in its place
    out = quiet_home.attend("sensors")
    assert out.returncode == 0, out.stderr
    assert "was deleted, emptied or replaced; attend started a new one" in out.stderr
    again = quiet_home.attend("sensors")
    assert "deleted, emptied or replaced" not in again.stderr  # said once
    assert "started over at " in _doctor_store(quiet_home)["store"]["message"]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "text", "wal"])
def test_store_damage_under_a_running_daemon_ends_it_with_one_line(damage, items_sensor, daemon, quiet_home) -> None:
    items = items_sensor()
    d = daemon()
    wait_until(lambda: sensors_json(quiet_home)["items"]["last_poll"] is not None, what="the first poll")
    db = _db(quiet_home)
    if damage != "wal":
        # Every page into the main file, the daemon's page cache out of date: its next read meets the damage.
        _sql(quiet_home, "PRAGMA wal_checkpoint(TRUNCATE)")
    if damage == "truncate":
        os.truncate(db, 0)
    elif damage == "garbage":
        _garbage_pages(quiet_home)
    elif damage == "text":
        with open(db, "r+b") as f:  # the same file, its content text
            f.write(b"not a database\n" * 2000)
    else:
        (db.parent / "attend.db-wal").write_bytes(random.Random(6).randbytes(50_000))
    for n in range(2, 60):  # the daemon meets the damage at its next reads and writes
        items.set([{"id": i} for i in range(n)])
        try:
            d.proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    assert d.stop() == 1
    assert sum(UNUSABLE in line for line in d.stderr) == 1, d.stderr
    assert not any("internal error" in line or "Traceback" in line for line in d.stderr), d.stderr
