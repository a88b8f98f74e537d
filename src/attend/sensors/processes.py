"""The processes sensor: processes working in the project start and exit (read through psutil, Linux only).

Which processes: every process of any user we may inspect whose working directory is the project
directory or a folder below it, except attend itself and its own children when
`ignore_own_descendants` is set (the git sensor's and command sensors' subprocesses would otherwise
report themselves): not only the polling process but every `attend run` serving the project, with its
children (`attend_sessions`: the live heartbeats of this project's sessions, the run lock's holder, and
any process running `attend run` here). The sessions of a project take turns at polling, so leaving
out only the poller would report an attached session as started and, once it took over and left itself
out, as exited while it runs. And, unless `include_session_processes` is set, the agent session's own process
tree: every descendant of the Claude Code process that owns the session (found through the session
identity, `peers.identity`), or of attend's parent when no session record names one. An agent told
about its own tool calls (`bash`, `sleep 40`, `attend sensors list`) learns nothing; a build started
from another terminal is still reported. A process is identified across polls by its pid and start time
(clock ticks after boot, as in ``/proc/<pid>/stat``), so a reused pid is a new process.

Watched tools (`watch`, e.g. cargo, make, npm, pytest) are matched on the process name, the program's
file name, or the script/module an interpreter (python, node) runs; their start and exit are louder.

Failure: Linux keeps a process's exit status only until its parent collects it. The sensor reads it
(``/proc/<pid>/stat`` field 52) when a watched process it was tracking is seen as a zombie, which
happens when its parent has not yet called wait(); a shell or a build tool usually collects its
children at once, so most failures are not visible this way and are reported as plain exits. The
result never guesses: `failures` lists only exit statuses actually read. That one field is read here
(`zombie_wait_status`): psutil does not give it; every other process fact comes from psutil.

Result::

    {"processes": [{"id": "4242-991", "pid": 4242, "name": "make", "cmdline": "make -j4",
                    "cwd": "/home/me/proj", "tool": "make", "watched": true}],
     "failures": [{"id", "pid", "tool", "cmdline", "exit_status", "signal"}]}
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attend.sensors.base import Focus, SensorUnavailable, require

__all__ = ["ProcessFacts", "ProcessesSensor", "attend_sessions", "decode_wait_status", "is_attend_run",
           "stat_wait_status", "watched_tool", "zombie_wait_status"]

#: Where Linux exposes processes.
PROC = Path("/proc")

#: The boot time psutil's remembered processes were read against (see `ProcessesSensor._read_facts`).
_boot_seen: float | None = None

#: Interpreters whose first argument (a script, or `-m module`) names the tool that runs.
INTERPRETERS = ("python", "node", "ruby", "perl")


@dataclass(frozen=True, slots=True)
class ProcessFacts:
    """What the sensor knows of every process before looking at its working directory (from psutil)."""

    pid: int
    ppid: int
    zombie: bool
    start_time: int  # clock ticks after boot (``/proc/<pid>/stat`` field 22): with the pid, the item id


def stat_wait_status(text: str) -> int | None:
    """The raw wait status in ``/proc/<pid>/stat`` text (field 52, kept while the process is a zombie),
    or None when the kernel writes no such field. The name (field 2) may hold spaces and parentheses,
    so the fields are counted from its last ``)``."""
    fields = text.rpartition(")")[2].split()
    # fields[0] is field 3 (state); field n is fields[n - 3].
    try:
        return int(fields[49]) if len(fields) > 49 else None
    except ValueError:
        return None


def zombie_wait_status(pid: int) -> int | None:
    """The wait status of the zombie `pid`, which psutil does not give; None when unreadable."""
    try:
        return stat_wait_status((PROC / str(pid) / "stat").read_text(errors="replace"))
    except OSError:
        return None


def decode_wait_status(status: int) -> tuple[int, int]:
    """A wait status as (exit_status, signal): a signal death reads as 128 + signal, like a shell."""
    signal = status & 0x7F
    if signal:
        return 128 + signal, signal
    return (status >> 8) & 0xFF, 0


def watched_tool(name: str, argv: Sequence[str], watch: Iterable[str]) -> str:
    """The watched tool a process runs, or "" when it runs none of them.

    Args:
        name: The process name (psutil's: the kernel's name, which is cut at 15 characters, made whole
            from the command line when that shows the rest).
        argv: The command line.
        watch: Tool names to look for.

    Returns:
        The first name of `watch` the process matches.
    """
    names = [name]
    if argv:
        program = os.path.basename(argv[0])
        names.append(program)
        if program.startswith(INTERPRETERS) and len(argv) > 1:
            if argv[1] == "-m" and len(argv) > 2:
                names.append(argv[2].split(".")[0])
            elif not argv[1].startswith("-"):
                names.append(os.path.basename(argv[1]))
    for tool in watch:
        if tool in names:
            return tool
    return ""


def session_root(env: Mapping[str, str] | None = None) -> int:
    """The process whose descendants are the agent session's own commands: the Claude Code process
    that owns this session (its record in Claude Code's sessions folder), else attend's parent."""
    from attend.peers.identity import resolve_session

    try:
        session = resolve_session(env={k: v for k, v in (os.environ if env is None else env).items()
                                       if k != "ATTEND_SESSION"})
    except Exception:  # noqa: BLE001 - an unreadable identity only loses the exclusion, never the poll
        session = None
    owner = getattr(session, "owner_pid", None)
    return owner if isinstance(owner, int) and owner > 1 else os.getppid()


def is_attend_run(argv: Sequence[str]) -> bool:
    """True when `argv` runs `attend run`: `attend run ...`, `python -m attend run ...`, or a launcher
    script named attend (the plugin's ``bin/attend run ...``)."""
    if not argv:
        return False
    if os.path.basename(argv[0]) == "attend":
        return argv[1:2] == ["run"]
    if not os.path.basename(argv[0]).startswith("python"):
        return False
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":  # the interpreter's own options
        i += 2 if argv[i] in ("-X", "-W", "-c") else 1
    if argv[i : i + 1] == ["-m"]:
        i += 1
        if argv[i : i + 1] != ["attend"]:
            return False
    elif i >= len(argv) or os.path.basename(argv[i]) != "attend":
        return False
    return argv[i + 1 : i + 2] == ["run"]


def attend_sessions(project: str, env: Mapping[str, str] | None = None) -> set[int]:
    """The pids of the `attend run` processes registered for `project`: its sessions' live heartbeats
    (peers/mailbox.py) and the holder of its run lock (`attend.files.run_lock_holder`). An unreadable source only
    loses its pids, never the poll."""
    from attend.peers.mailbox import Mailbox, peers_dir

    env = os.environ if env is None else env
    pids: set[int] = set()
    try:
        pids |= {p.pid for p in Mailbox(peers_dir(env)).presences()
                 if isinstance(p.pid, int) and os.path.realpath(p.project) == project}
    except OSError:
        pass
    try:
        from attend.files import run_lock_holder, run_lock_path

        holder = run_lock_holder(run_lock_path(project, env))
    except Exception:  # noqa: BLE001 - an unusable state folder: the lock names nobody
        holder = None
    if holder is not None and holder > 1:
        pids.add(holder)
    return pids


def is_within(path: str, folder: str) -> bool:
    """True when `path` is `folder` or below it (both absolute, normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class ProcessesSensor:
    """Tracks the processes working in the project.

    Crate fields (set in ``sensors.d/processes.yaml``): `watch` (tool names), `ignore_own_descendants`
    (leave out attend and its children), `include_session_processes` (also report the agent session's
    own process tree; off by default), `cmdline_limit` (characters of a command line kept).

    State between polls: the watched processes being tracked (id → tool), so a zombie that was one of
    them can be recognised after it lost its working directory.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        watch = require(config, "watch", list)
        self.watch: tuple[str, ...] = tuple(str(w) for w in watch)
        self.ignore_own_descendants: bool = require(config, "ignore_own_descendants", bool)
        self.cmdline_limit: int = require(config, "cmdline_limit", int)
        include = config.get("include_session_processes", False)
        self.include_session_processes: bool = include if isinstance(include, bool) else False
        self._tracked: dict[str, dict[str, Any]] = {}

    def export_state(self) -> dict[str, Any]:
        """The watched processes being tracked."""
        return {"tracked": self._tracked}

    def import_state(self, state: Any) -> None:
        """Restore what `export_state` returned."""
        if isinstance(state, dict) and isinstance(state.get("tracked"), dict):
            self._tracked = {str(k): v for k, v in state["tracked"].items() if isinstance(v, dict)}

    def poll(self, focus: Focus) -> dict[str, Any]:
        """The processes working in `focus.cwd`, and the visible failures of watched ones.

        Raises:
            SensorUnavailable: there is no /proc (not Linux, or not mounted).
        """
        if not (PROC / "self" / "stat").exists():
            raise SensorUnavailable(f"{PROC} is not available; the processes sensor reads Linux's /proc")
        project = os.path.realpath(focus.cwd)
        handles = {fact.pid: (fact, process) for fact, process in self._read_facts()}
        facts = {pid: fact for pid, (fact, _) in handles.items()}
        described = {pid: self._describe(process, fact, f"{pid}-{fact.start_time}", project)
                     for pid, (fact, process) in handles.items() if not fact.zombie}
        own: set[int] = set()
        if self.ignore_own_descendants:
            # attend's own: this process, and every `attend run` serving the project (a session that
            # polls later, or polled before), each with its children.
            roots = {os.getpid()} | attend_sessions(project)
            roots |= {pid for pid, found in described.items() if found is not None and found[1]}
            for root in roots:
                own |= self._descendants(facts, root)
        if not self.include_session_processes:
            own |= self._descendants(facts, session_root())

        processes: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        tracked: dict[str, dict[str, Any]] = {}
        for pid, fact in facts.items():
            if pid in own:
                continue
            ident = f"{pid}-{fact.start_time}"
            if fact.zombie:
                was = self._tracked.get(ident)
                status = zombie_wait_status(pid) if was is not None else None
                if was is not None and status is not None:
                    exit_status, signal = decode_wait_status(status)
                    if exit_status:
                        failures.append({**was, "exit_status": exit_status, "signal": signal})
                continue
            found = described[pid]
            if found is None:
                continue
            item = found[0]
            processes.append(item)
            if item["watched"]:
                tracked[ident] = {k: item[k] for k in ("id", "pid", "tool", "cmdline")}
        self._tracked = tracked
        processes.sort(key=lambda p: p["pid"])
        failures.sort(key=lambda p: p["pid"])
        return {"processes": processes, "failures": failures}

    def _describe(self, process: Any, fact: ProcessFacts, ident: str, project: str) -> tuple[dict[str, Any], bool] | None:
        """The item of a process (a `psutil.Process`) working in `project` (None for any other), and
        whether it runs `attend run`."""
        import psutil

        try:
            cwd = process.cwd()
            if not cwd or not is_within(cwd, project):
                return None
            argv = [a for a in process.cmdline() if a]
            name = process.name()
        except (psutil.Error, OSError):  # gone, a zombie by now, a kernel thread, or another user's process
            return None
        if not argv:
            return None
        tool = watched_tool(name, argv, self.watch)
        return ({
            "id": ident,
            "pid": fact.pid,
            "name": name,
            "cmdline": " ".join(argv)[: self.cmdline_limit],
            "cwd": cwd,
            "tool": tool,
            "watched": bool(tool),
        }, is_attend_run(argv))

    @staticmethod
    def _read_facts() -> Iterable[tuple[ProcessFacts, Any]]:
        """Every process psutil can read, with its `psutil.Process` (psutil's `process_iter`, which keeps
        a process's handle between polls). The start time is turned back into clock ticks after boot:
        psutil gives boot time + ticks / CLK_TCK, and the boot time moves when the wall clock is
        stepped, so when it has moved since the last poll psutil's remembered processes (whose creation
        times were computed against the old one) are dropped first; an id never moves with the clock."""
        import psutil

        global _boot_seen
        boot = psutil.boot_time()
        if boot != _boot_seen:
            psutil.process_iter.cache_clear()
            _boot_seen = boot
        ticks = os.sysconf("SC_CLK_TCK")
        for process in psutil.process_iter(["ppid", "status", "create_time"]):
            ppid, status, created = (process.info[k] for k in ("ppid", "status", "create_time"))
            if ppid is None or status is None or created is None:
                continue  # not ours to read
            yield ProcessFacts(process.pid, ppid, status == psutil.STATUS_ZOMBIE, round((created - boot) * ticks)), process

    @staticmethod
    def _descendants(facts: Mapping[int, ProcessFacts], root: int) -> set[int]:
        """`root` and every process below it (nothing for pid 1 or less: never the whole system)."""
        if root <= 1:
            return set()
        children: dict[int, list[int]] = {}
        for pid, fact in facts.items():
            children.setdefault(fact.ppid, []).append(pid)
        found, todo = set(), [root]
        while todo:
            pid = todo.pop()
            if pid not in found:
                found.add(pid)
                todo.extend(children.get(pid, ()))
        return found
