"""The processes sensor: processes working in the project start and exit (read through psutil, Linux only).

What a user cares about is the work going on in the project that no agent session and no attend process
is doing: a build started from a terminal, a server, a watched tool. So, of every process of any user we
may inspect whose working directory is the project directory or a folder below it, these are left out:

- Every attend process and what it runs (`ignore_own_descendants`): this process, every `attend run`
  serving the project (`attend_sessions`: the live heartbeats of this project's sessions and the run
  lock's holder), and any process in the project running attend at all (`is_attend`: `attend run`, the
  headless poller `python -m attend run --headless`, a hook `sh -c '"<plugin>/bin/attend" drain --format
  hook ...'`, `python -m attend ...`), each with its children. The sessions of a project take turns at
  polling, so leaving out only the poller would report an attached session as started and, once it took
  over and left itself out, as exited while it runs.
- Every live Claude Code session's process tree, unless `include_session_processes` is set
  (`session_roots`): each process Claude Code recorded a live session for (its records in the sessions
  folder, ``~/.claude/sessions/<pid>.json``, whose process runs and started before the record was
  written: a record left behind by a crash may name a pid used again since), each process running
  Claude Code by name (`CLAUDE_NAMES`), and this session's own (the process that owns it, found through
  the session identity `peers.identity`, or attend's parent when no record names one), with every
  descendant: the Bash tool's shell wrappers, the commands they run, the MCP servers, the hooks. An
  agent told about its own tool calls (`bash`, `sleep 40`, `pytest`) or a peer session's learns nothing.
  attend's session rows in the store name the Claude Code process of a session only as its record did,
  so the records are read directly (a sensor does not open the store).
- Processes younger than `min_lifetime` (2 s by default), unless they run a watched tool: a
  process is reported once it has lived that long, so one that ends sooner (`sleep 0.3`, `head -1`,
  a shell's pipeline) is never reported, neither its start nor its exit. Its age is measured on the
  boot clock (`CLOCK_BOOTTIME`), which a wall-clock step does not move.

A process is identified across polls by its pid and start time (clock ticks after boot, as in
``/proc/<pid>/stat``), so a reused pid is a new process.

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
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from attend.redact import shorten
from attend.sensors.base import Focus, SensorUnavailable, require, require_seconds

if TYPE_CHECKING:
    import psutil


class ProcessItem(TypedDict):
    """One process working in the project, as the sensor's result lists it."""

    id: str
    pid: int
    name: str
    cmdline: str
    cwd: str
    tool: str
    watched: bool

__all__ = ["CLAUDE_NAMES", "ProcessFacts", "ProcessesSensor", "attend_sessions", "boot_clock", "decode_wait_status",
           "is_attend", "session_roots", "stat_wait_status", "watched_tool", "zombie_wait_status"]

#: Where Linux exposes processes.
PROC = Path("/proc")

#: The boot time psutil's remembered processes were read against (see `ProcessesSensor._read_facts`).
_boot_seen: float | None = None

#: Interpreters whose first argument (a script, or `-m module`) names the tool that runs.
INTERPRETERS = ("python", "node", "ruby", "perl")

#: Shells whose script, or `-c` command, is read for the program it runs (`is_attend`).
SHELLS = ("sh", "bash", "dash", "zsh", "ksh")

#: The process names Claude Code runs under (npm's `claude` link to the native binary, or the binary's own
#: name): each is a session's process, whose tree `session_roots` leaves out.
CLAUDE_NAMES = ("claude", "claude.exe")

#: Seconds a Claude Code record's `startedAt` may come before its process's start (clocks read apart): a
#: process that started later than that after the record was written is not the one it names (a pid used
#: again after a crash left the record behind).
RECORD_SLACK = 5.0


def boot_clock() -> float:
    """Seconds since boot (`CLOCK_BOOTTIME`): the clock a process's age is measured on."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


@dataclass(frozen=True, slots=True)
class ProcessFacts:
    """What the sensor knows of every process before looking at its working directory (from psutil)."""

    pid: int
    ppid: int
    zombie: bool
    start_time: int  # clock ticks after boot (``/proc/<pid>/stat`` field 22): with the pid, the item id
    name: str = ""  # the kernel's name of the process (cut at 15 characters)


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


def session_root(env: Mapping[str, str]) -> int:
    """The process whose descendants are the agent session's own commands: the Claude Code process
    that owns this session (its record in Claude Code's sessions folder), else attend's parent."""
    from attend.peers.identity import resolve_session

    try:
        session = resolve_session(env={k: v for k, v in env.items() if k != "ATTEND_SESSION"})
    except Exception:  # noqa: BLE001 - an unreadable identity only loses the exclusion, never the poll
        session = None
    owner = getattr(session, "owner_pid", None)
    return owner if isinstance(owner, int) and owner > 1 else os.getppid()


def is_attend(argv: Sequence[str], _depth: int = 0) -> bool:
    """True when `argv` runs attend, whatever it does: `attend ...`, `python [options] -m attend ...`, an
    interpreter or a shell running a launcher script named attend (the plugin's ``bin/attend drain ...``),
    or a shell's `-c` command that starts with one (Claude Code runs a hook as
    ``sh -c '"<plugin>/bin/attend" drain --format hook ...'``; leading `NAME=value` words and `exec` are
    read past)."""
    if not argv or _depth > 3:
        return False
    program = os.path.basename(argv[0])
    if program == "attend":
        return True
    if program.startswith("python"):
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":  # the interpreter's own options
            if argv[i] == "-c":
                return False  # a program given inline: whatever follows is its arguments
            i += 2 if argv[i] in ("-X", "-W") else 1
        if argv[i : i + 1] == ["-m"]:
            return argv[i + 1 : i + 2] == ["attend"]
        return i < len(argv) and os.path.basename(argv[i]) == "attend"
    if program not in SHELLS:
        return False
    i, command = 1, False
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in ("-", "--"):
        command = command or (not argv[i].startswith("--") and "c" in argv[i])  # -c, -lc, -ec
        i += 1
    if i >= len(argv):
        return False
    if not command:
        return os.path.basename(argv[i]) == "attend"
    try:
        words = shlex.split(argv[i])
    except ValueError:  # an unbalanced quote: not a command this can read
        return False
    while words and (words[0] == "exec" or ("=" in words[0] and words[0].split("=", 1)[0].isidentifier())):
        words.pop(0)
    return is_attend(words, _depth + 1)


def attend_sessions(project: str, env: Mapping[str, str]) -> set[int]:
    """The pids of the `attend run` processes registered for `project`: its sessions' live heartbeats
    (peers/mailbox.py) and the holder of its run lock (`attend.files.run_lock_holder`). An unreadable source only
    loses its pids, never the poll."""
    from attend.peers.mailbox import Mailbox, peers_dir

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


def session_roots(facts: Mapping[int, ProcessFacts], now: float, env: Mapping[str, str]) -> set[int]:
    """The Claude Code processes of every live session, whose trees the sensor leaves out: each process a
    record in Claude Code's sessions folder names (`peers.identity.claude_records`) that runs and started
    no later than `RECORD_SLACK` after the record was written, and each process named as Claude Code runs
    (`CLAUDE_NAMES`).

    Args:
        facts: every process, by pid.
        now: the boot clock's reading (`boot_clock`) that the facts' start times are compared with.
        env: where the sessions folder is (`CLAUDE_CONFIG_DIR`, `HOME`): the poll's (`focus.env`).
    """
    from attend.peers.identity import claude_records

    roots = {pid for pid, fact in facts.items() if fact.name in CLAUDE_NAMES and not fact.zombie}
    try:
        records = claude_records(env)
    except Exception:  # noqa: BLE001 - an unreadable folder only loses the exclusion, never the poll
        records = []
    ticks = os.sysconf("SC_CLK_TCK")
    wall = time.time()
    for found in records:
        fact = facts.get(found.pid)
        if fact is None or fact.zombie:
            continue  # its process has exited: the record was left behind
        started = wall - (now - fact.start_time / ticks)  # the process's start on the wall clock
        if found.started is not None and started > found.started + RECORD_SLACK:
            continue  # the pid is another process's now
        roots.add(found.pid)
    return roots


def is_within(path: str, folder: str) -> bool:
    """True when `path` is `folder` or below it (both absolute, normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class ProcessesSensor:
    """Tracks the processes working in the project.

    Crate fields (set in ``sensors.d/processes.yaml``): `watch` (tool names), `ignore_own_descendants`
    (leave out attend and its children), `include_session_processes` (also report the process trees of
    the live Claude Code sessions; off by default), `cmdline_limit` (characters of a command line kept),
    `min_lifetime` (a duration: a process that is not a watched tool is reported once it has lived
    this long).

    `clock` reads the boot clock (`boot_clock`); a test passes another reading to age every process.

    State between polls: the watched processes being tracked (id → tool), so a zombie that was one of
    them can be recognised after it lost its working directory.
    """

    def __init__(self, config: Mapping[str, Any], *, clock: Callable[[], float] = boot_clock) -> None:
        watch = require(config, "watch", list)
        self.watch: tuple[str, ...] = tuple(str(w) for w in watch)
        self.ignore_own_descendants: bool = require(config, "ignore_own_descendants", bool)
        self.cmdline_limit: int = require(config, "cmdline_limit", int)
        self.min_lifetime: float = require_seconds(config, "min_lifetime")
        self.clock = clock
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
        now = self.clock()
        handles = {fact.pid: (fact, process) for fact, process in self._read_facts()}
        facts = {pid: fact for pid, (fact, _) in handles.items()}
        described = {pid: self._describe(process, fact, f"{pid}-{fact.start_time}", project)
                     for pid, (fact, process) in handles.items() if not fact.zombie}
        roots: set[int] = set()
        if self.ignore_own_descendants:
            # attend's own: this process, every `attend run` serving the project (a session that polls
            # later, or polled before), and any attend process working here (a hook, a one-shot command).
            roots |= {os.getpid()} | attend_sessions(project, focus.env)
            roots |= {pid for pid, found in described.items() if found is not None and found[1]}
        if not self.include_session_processes:
            roots |= session_roots(facts, now, focus.env) | {session_root(focus.env)}
        own = self._descendants(facts, roots)
        ticks = os.sysconf("SC_CLK_TCK")

        processes: list[ProcessItem] = []
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
            if not item["watched"] and now - fact.start_time / ticks < self.min_lifetime:
                continue  # too young to tell from a passing command: reported at a later poll, if it lives on
            processes.append(item)
            if item["watched"]:
                tracked[ident] = {k: item[k] for k in ("id", "pid", "tool", "cmdline")}
        self._tracked = tracked
        processes.sort(key=lambda p: p["pid"])
        failures.sort(key=lambda p: p["pid"])
        return {"processes": processes, "failures": failures}

    def _describe(self, process: psutil.Process, fact: ProcessFacts, ident: str, project: str) -> tuple[ProcessItem, bool] | None:
        """The item of a process (a `psutil.Process`) working in `project` (None for any other), and
        whether it runs attend (`is_attend`)."""
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
            "cmdline": shorten(" ".join(argv), self.cmdline_limit),  # redacted, then cut (attend.redact)
            "cwd": cwd,
            "tool": tool,
            "watched": bool(tool),
        }, is_attend(argv))

    @staticmethod
    def _read_facts() -> Iterable[tuple[ProcessFacts, psutil.Process]]:
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
        for process in psutil.process_iter(["ppid", "status", "create_time", "name"]):
            ppid, status, created, name = (process.info[k] for k in ("ppid", "status", "create_time", "name"))
            if ppid is None or status is None or created is None:
                continue  # not ours to read
            yield ProcessFacts(process.pid, ppid, status == psutil.STATUS_ZOMBIE, round((created - boot) * ticks),
                               name if isinstance(name, str) else ""), process

    @staticmethod
    def _descendants(facts: Mapping[int, ProcessFacts], roots: Iterable[int]) -> set[int]:
        """`roots` and every process below them (nothing for pid 1 or less: never the whole system)."""
        todo = [root for root in roots if root > 1]
        if not todo:
            return set()
        children: dict[int, list[int]] = {}
        for pid, fact in facts.items():
            children.setdefault(fact.ppid, []).append(pid)
        found: set[int] = set()
        while todo:
            pid = todo.pop()
            if pid not in found:
                found.add(pid)
                todo.extend(children.get(pid, ()))
        return found
