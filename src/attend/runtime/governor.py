"""The disclosure governor: a rate limit on disclosures across the whole loop, per lane (DESIGN.md, Runtime).

Decision: the event lane allows one disclosure every 15 s and at most 3 in any rolling 120 s; the
message lane is permissive (3 s, 30 per 60 s). A disclosure the governor holds stays in its sensor's
accumulator and is retried at `next_slot`; nothing is dropped. The window is rebuilt from the journal's
disclosure times after a restart, so restarting attend does not reset the budget.

Decision (DESIGN.md, Delivery, "Budgets are spent only by what wakes the agent"): the budget is the
agent's attention, so only a disclosure that reaches the Monitor stream (high or medium) spends it. A
low disclosure (stderr only) is never held by the governor and never counted (the discloser does not
ask, and the journal rebuild counts only high and medium disclosures). The rate window holds medium
disclosures; a high one waits at most the cooldown (`next_slot(..., urgent=True)`), and only the cooldown
after an earlier high one: sessions joining and leaving (the peers sensor's medium presence lines) never
hold a high line, which reaches the agent within its sensor's poll (issue 22's goal: one poll interval + 1 s).

Decision (same rule: whose agent?): each session's agent is woken by the lines it is shown, so each session
has its own budget. A `scope: session` sensor's line (shown to its session only) waits for the lines that
woke that session (its own and the project-wide ones) and spends that session's budget only: session a's
context line never holds session b's. A project-wide line wakes every session: it waits for every
session's budget and spends them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from attend.spec.config import config_default

__all__ = ["DEFAULT_GOVERNORS", "Governor", "GovernorParams", "governor_params", "next_slot"]


@dataclass(frozen=True, slots=True)
class GovernorParams:
    """One lane's limits: `cooldown` seconds between disclosures, at most `limit` per `window` seconds."""

    cooldown: float
    limit: int
    window: float


#: The defaults of DESIGN.md, per lane (declared in the spec's `CONFIG_SCHEMA`).
DEFAULT_GOVERNORS: dict[str, GovernorParams] = {
    lane: GovernorParams(**fields) for lane, fields in config_default(("governor",)).items()
}


def governor_params(config: Mapping[str, Any] | None) -> dict[str, GovernorParams]:
    """Each lane's limits from the `governor:` mapping of config.yaml, over the defaults.

    Accepts `{event: {cooldown, limit, window}, message: {...}}`; durations as numbers (seconds) or
    strings such as `15s`. Raises ValueError for a bad value.
    """
    from attend.spec.durations import parse_duration

    out = dict(DEFAULT_GOVERNORS)
    for lane, base in DEFAULT_GOVERNORS.items():
        given = (config or {}).get(lane) or {}
        if isinstance(given, Mapping):
            out[lane] = GovernorParams(
                cooldown=parse_duration(given.get("cooldown", base.cooldown)),
                limit=int(given.get("limit", base.limit)),
                window=parse_duration(given.get("window", base.window)),
            )
    return out


def next_slot(times: Iterable[float], now: float, params: GovernorParams, *, urgent: bool = False,
              high: Iterable[float] | None = None) -> float:
    """The earliest moment at or after `now` when one more disclosure is allowed.

    Args:
        times: the lane's earlier disclosure times (those that woke the agent).
        now: the current time.
        params: the lane's limits.
        urgent: a high disclosure: it waits for the cooldown only, never for the rate window
            (`limit: 0` still mutes the lane).
        high: the times of the earlier high disclosures among `times`: an urgent one waits only for the
            cooldown after the last of these (None: after the last of `times`).
    """
    times = sorted(times)
    slot = now
    after = times if not urgent or high is None else sorted(high)
    if after:
        slot = max(slot, after[-1] + params.cooldown)
    if params.limit <= 0:
        return float("inf")
    if not urgent and len(times) >= params.limit:
        # The window holds `limit` disclosures until the oldest of the last `limit` leaves it.
        slot = max(slot, times[-params.limit] + params.window)
    return slot


@dataclass(slots=True)
class Governor:
    """The disclosure times of one lane, and the decision whether one more is allowed now.

    `times` and `high_times` are the project-wide disclosures (they woke every session); `own` holds,
    per session, the disclosures shown to that session only, as `(time, high)`. A disclosure's
    `sessions` is None for a project-wide one, else the sessions it is shown to.
    """

    params: GovernorParams
    times: list[float] = field(default_factory=list)
    #: The times of the high disclosures among `times` (a high one waits only for their cooldown).
    high_times: list[float] = field(default_factory=list)
    #: Per session, the disclosures shown to that session only: `(time, high)`.
    own: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)

    def next_slot(self, now: float, *, urgent: bool = False, sessions: Iterable[str] | None = None) -> float:
        """When the next disclosure may happen (`now` when it may happen now); `urgent` for a high one.

        `sessions`: the sessions a disclosure is shown to (None: every session): it waits for the budget of
        each, which holds the project-wide disclosures and that session's own.
        """
        whose = list(self.own) if sessions is None else list(sessions)
        slot = next_slot(self.times, now, self.params, urgent=urgent, high=self.high_times)
        for session in whose:
            own = self.own.get(session, [])
            slot = max(slot, next_slot([*self.times, *(t for t, _ in own)], now, self.params, urgent=urgent,
                                       high=[*self.high_times, *(t for t, high in own if high)]))
        return slot

    def allows(self, now: float, *, urgent: bool = False, sessions: Iterable[str] | None = None) -> bool:
        """True when a disclosure may happen at `now`."""
        return self.next_slot(now, urgent=urgent, sessions=sessions) <= now

    def record(self, at: float, *, high: bool = False, sessions: Iterable[str] | None = None) -> None:
        """Count a disclosure made at `at` (`high`: a high one; `sessions`: shown to these only, None: to
        every session), and forget the ones that left every window."""
        if sessions is None:
            self.times.append(at)
            if high:
                self.high_times.append(at)
        else:
            for session in sessions:
                self.own.setdefault(session, []).append((at, high))
        horizon = at - max(self.params.window, self.params.cooldown)
        self.times = [t for t in self.times if t > horizon]
        self.high_times = [t for t in self.high_times if t > horizon]
        self.own = {s: kept for s, own in self.own.items() if (kept := [(t, h) for t, h in own if t > horizon])}
