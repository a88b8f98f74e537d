"""Named crash points, so the fault tests kill `attend run` at a chosen stage instead of a random moment.

`ATTEND_CRASH_AT="STAGE:N"` (read once, at the first point reached) makes the process SIGKILL itself the
N-th time it reaches STAGE (N defaults to 1). Without the variable a crash point costs one dict lookup.
The stages are the places where a crash could lose or repeat a notification, in the order a
notification passes them:

- `poll-committed`: a poll's trigger states and observations are committed (pipeline.record_poll).
- `disclosed`: an accumulation is journaled (pipeline.Discloser).
- `printed`: a session wrote journal rows on its streams, before recording its position (SessionPrinter).
- `recorded`: the session recorded its new position.
- `peer-handed-over`: a peer message from the NATS server is in this machine's peers folder, before its
  ack (peers/natslink.py): the server delivers it again, and the file already there drops the repeat.

The crash is the kernel's SIGKILL, as a killed or out-of-memory process gets: no cleanup runs. Only the
fault tests set the variable (tests/runtime/test_daemon_sigkill.py); docs/internals.md lists it.

`env_seconds` reads the other hidden knobs for tests, durations a real daemon would otherwise wait out in
full (`ATTEND_HEADLESS_IDLE`, `ATTEND_MCP_UNUSED_GRACE`).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

__all__ = ["NOTIFICATION_STAGES", "PEER_STAGES", "STAGES", "crash_point", "env_seconds"]

#: The stages every notification passes, whatever the peers transport (the SIGKILL tests plan over these).
NOTIFICATION_STAGES = ("poll-committed", "disclosed", "printed", "recorded")
#: The stages only a peer message from the NATS transport passes (tests/runtime/test_nats_peers.py).
PEER_STAGES = ("peer-handed-over",)
#: Every stage a crash point names (a plan naming another stage is refused at the first point reached).
STAGES = NOTIFICATION_STAGES + PEER_STAGES

_plan: tuple[str, int] | None = None
_read = False
_reached: dict[str, int] = {}


def _load() -> tuple[str, int] | None:
    text = os.environ.get("ATTEND_CRASH_AT", "")
    if not text:
        return None
    stage, _, count = text.partition(":")
    if stage not in STAGES or (count and not count.isdigit()):
        raise ValueError(f"ATTEND_CRASH_AT must be STAGE[:N] with STAGE one of {', '.join(STAGES)}, not {text!r}")
    return stage, int(count or 1)


def crash_point(stage: str) -> None:
    """Kill this process here when the crash plan names `stage` and this is its N-th arrival."""
    global _plan, _read
    if not _read:
        _plan, _read = _load(), True
    if _plan is None or _plan[0] != stage:
        return
    _reached[stage] = _reached.get(stage, 0) + 1
    if _reached[stage] >= _plan[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def env_seconds(variable: str, default: float, env: Mapping[str, str] | None = None) -> float:
    """`variable` in `env` (default: os.environ) as seconds when it is a positive number, else `default`."""
    value = (os.environ if env is None else env).get(variable, "")
    try:
        seconds = float(value)
    except ValueError:
        return default
    return seconds if seconds > 0 and seconds == seconds else default
