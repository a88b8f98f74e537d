"""The runtime tests' rig: command sensors written as real files, and the real daemon as a subprocess."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

from waiting import PATIENCE, wait_until

__all__ = ["PATIENCE", "wait_until"]  # the suite's one wait, re-exported for the runtime tests


#: A command sensor's script: prints the JSON list stored in the file named by argv[1] as {"items": [...]};
#: while `<file>.exit` exists it fails instead, with that exit code and a line on stderr.
ITEMS_SCRIPT = textwrap.dedent(
    """
    import json, pathlib, sys
    p = pathlib.Path(sys.argv[1])
    code = pathlib.Path(str(p) + ".exit")
    if code.exists():
        print("failing on purpose", file=sys.stderr)
        sys.exit(int(code.read_text()))
    print(json.dumps({"items": json.loads(p.read_text()) if p.exists() else []}))
    """
)


class Items:
    """A file of items a command sensor reports; the test changes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.set([])

    def set(self, items: list) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(items))
        tmp.replace(self.path)  # atomic: the sensor never reads half a file

    def fail(self, code: int | None) -> None:
        marker = Path(str(self.path) + ".exit")
        if code is None:
            marker.unlink(missing_ok=True)
        else:
            marker.write_text(str(code))


def sensor_yaml(name: str, argv: list[str], *, trigger: dict | None = None, **fields) -> str:
    """A command sensor file's text."""
    doc = {"spec": 1, "name": name, "kind": "command", "interval": "1s", "min_interval": "0.2s", "threshold": 0}
    doc.update(fields)
    command = {"argv": argv}
    command.update(doc.pop("command", {}))
    doc["command"] = command
    if trigger is not None:
        doc["triggers"] = {"new": trigger}
    return json.dumps(doc, indent=2)  # JSON is YAML


NEW_ITEM = {"path": "$.items[*]", "key": "id", "on": "added", "magnitude": 3, "description": "new item {id}"}


def pipeline_rig(home, name: str):
    """The user sensor `name` compiled, the project's store, and a poll context: one poll in-process."""
    from attend.compiler import compile_sensor
    from attend.runtime.kinds import PollContext
    from attend.runtime.store import Store, default_db_path, scope_for
    from attend.spec import layer_paths, load_set

    paths = layer_paths(home.project, os.environ)
    compiled = compile_sensor(load_set(home.project, os.environ).sensors[name])
    store = Store(default_db_path(paths.state_dir), scope=scope_for(home.project))
    ctx = PollContext(project_dir=home.project, env=dict(os.environ), paths=paths, store=store)
    return compiled, store, ctx


class DaemonProcess:
    """`attend run` as a real subprocess in a temporary XDG home; its stdout and stderr read by threads.

    `command` runs attend another way than `python -m attend` (the plugin's launcher, `bin/attend`).
    """

    def __init__(self, home, *args: str, env: dict[str, str] | None = None, command: list[str] | None = None) -> None:
        self.home = home
        self.proc = subprocess.Popen(
            [*(command or [sys.executable, "-m", "attend"]), "run", *args],
            cwd=home.project,
            env=home.env(**(env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        #: The session it serves (`--session`, else `ATTEND_SESSION`, else `pid-PID`), for `caught_up`.
        self.session = (args[args.index("--session") + 1] if "--session" in args
                        else (env or {}).get("ATTEND_SESSION") or f"pid-{self.proc.pid}")
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, into: list[str], notify: bool) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))
            if notify:
                self._lines.put(line.rstrip("\n"))
        stream.close()

    def wait_for(self, predicate: Callable[[list[str]], bool], timeout: float = PATIENCE) -> list[str]:
        """Wait until `predicate(stdout lines so far)` holds; return the lines."""
        deadline = time.monotonic() + timeout
        while not predicate(list(self.stdout)):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; stdout={self.stdout!r} stderr={self.stderr!r}")
            if self.proc.poll() is not None and predicate(list(self.stdout)) is False:
                time.sleep(0.2)
                if not predicate(list(self.stdout)):
                    raise AssertionError(f"daemon exited {self.proc.returncode}; stderr={self.stderr!r}")
            time.sleep(0.05)
        return list(self.stdout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = PATIENCE) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=5)
        return code


def _missing_table(error: sqlite3.OperationalError) -> bool:
    """True when `error` says a table is not there yet (the daemon creates the file before its tables)."""
    return str(error).startswith("no such table")


def query(home, sql: str, *params) -> list[tuple]:
    """Rows of `sql` on the home's store, read with a plain sqlite3 connection.

    No rows before the store is whole: the daemon creates the file first and its tables next, so a test
    reading a store being created sees no file, or a file without the table, and both read as no rows.
    """
    db = home.state / "attend" / "attend.db"
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as error:
        if _missing_table(error):
            return []
        raise
    finally:
        conn.close()


def recorded_state(home, sensor: str) -> tuple[str, str] | None:
    """`sensor`'s stored (state, state_source), or None before the daemon wrote it (or created the store)."""
    rows = query(home, "SELECT state, state_source FROM sensor_status WHERE sensor = ?", sensor)
    return rows[0] if rows else None


def scalar(home, sql: str, *params, default=0):
    """The first column of the first row of `sql` (an aggregate: a count, a largest id), or `default`."""
    rows = query(home, sql, *params)
    return rows[0][0] if rows else default


def journal_rows(home, **where) -> list[dict]:
    """The journal of the home's store, read with a plain sqlite3 connection."""
    db = home.state / "attend" / "attend.db"
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        conn.row_factory = sqlite3.Row
        clauses = " AND ".join(f"{k} = ?" for k in where) or "1"
        rows = conn.execute(f"SELECT * FROM journal WHERE {clauses} ORDER BY id", tuple(where.values()))
        return [dict(r) for r in rows]
    except sqlite3.OperationalError as error:
        if _missing_table(error):
            return []
        raise
    finally:
        conn.close()


def sensors_json(home) -> dict[str, dict]:
    """`attend sensors list --json`, keyed by name."""
    out = home.attend("sensors", "list", "--json")
    assert out.returncode == 0, out.stderr
    return {row["name"]: row for row in json.loads(out.stdout)}


def peers_list(home) -> dict[str, dict]:
    """`attend peers list --json`, keyed by session."""
    out = home.attend("peers", "list", "--json")
    assert out.returncode == 0, out.stderr
    return {row["session"]: row for row in json.loads(out.stdout)}


def last_poll(home) -> int:
    """The id of the newest poll trace in the home's store (ids only grow: a later poll has a larger id)."""
    return scalar(home, "SELECT COALESCE(MAX(id), 0) FROM poll_history")


def caught_up(home, *sessions: str, timeout: float = PATIENCE) -> None:
    """Wait until the poller finished one more poll and each named session printed the journal to its end.

    The explicit signal a test waits for before it asserts that nothing more arrived: a repeated
    notification would be a second journal row (that poll would have made it) or a row printed again by a
    session (it prints only after its recorded position), so once this returns, nothing more can show.
    """
    start = last_poll(home)
    wait_until(lambda: last_poll(home) > start, timeout, what="one more poll")
    printed_to_end(home, *sessions, timeout=timeout)


def printed_to_end(home, *sessions: str, timeout: float = PATIENCE) -> None:
    """Wait until each named session recorded its printed position at the journal's present end.

    A Monitor records what it printed just after printing it (a crash in between prints it again rather
    than never): a line read on its stdout may not be recorded yet, and a Stop hook run in that moment
    would hand it over again. A test that asserts the hooks have nothing left waits for this first.
    """
    end = scalar(home, "SELECT COALESCE(MAX(id), 0) FROM journal")

    def recorded() -> bool:
        rows = dict(query(home, "SELECT session, printed_upto FROM sessions"))
        return all(rows.get(s, -1) >= end for s in sessions)

    wait_until(recorded, timeout, what=f"sessions {', '.join(sessions)} printed the journal to its end")


def alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


class InotifyUnavailable:
    """watchfiles' `RustNotify` on a machine without inotify: setting inotify up fails as the kernel fails it
    when no instance is left (EMFILE, "Too many open files"); watchfiles' polling works. Handed to the watcher
    through its own seam (`Watcher(backend=...)`), so nothing of the machine's inotify limits is touched."""

    def __new__(cls, paths: list[str], debug: bool, force_polling: bool, poll_delay_ms: int, recursive: bool,
                ignore_permission_denied: bool) -> object:
        import errno

        from watchfiles._rust_notify import RustNotify

        if not force_polling:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return RustNotify(paths, debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied)

