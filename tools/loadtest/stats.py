"""What a load run measures: latencies, counts and errors, and their summary.

Two latencies per accepted action, both from the moment the acting bot sent it (monotonic clock, one
process, so no clock skew):
- actor: until the acting client receives the state that includes its action;
- others: until each other client seated at that table receives a state at least that new.

The actor's latency is also kept by action ("hit", "bet", ...), with the actions that ended a round (the
dealer's play and the settlement ran in them) apart as "<action> settling": which actions make the tail.
"""

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: The error code of a lost version race (two players acting on the same state): the bot retries on the fresh
#: state the server sends with it. Reported with the other codes, and counted apart in `races`.
STALE = "stale_version"


def percentiles(values: list[float]) -> dict[str, Any]:
    """count, p50, p95, p99 and max of `values` (seconds) in milliseconds, nearest-rank; None when empty."""
    if not values:
        return {"count": 0, "p50": None, "p95": None, "p99": None, "max": None}
    ordered = sorted(values)

    def rank(p: float) -> float:
        return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000, 2)

    return {
        "count": len(ordered),
        "p50": rank(50),
        "p95": rank(95),
        "p99": rank(99),
        "max": round(ordered[-1] * 1000, 2),
    }


@dataclass
class Recorder:
    actor: list[float] = field(default_factory=list)
    actor_by_action: dict[str, list[float]] = field(default_factory=dict)
    others: list[float] = field(default_factory=list)
    actions: int = 0
    rounds: int = 0
    errors: Counter = field(default_factory=Counter)
    races_by_action: Counter = field(default_factory=Counter)
    reconnects: int = 0
    connected: int = 0
    measuring: bool = False
    elapsed: float = 0.0
    # The measured window in Unix time (set by the runner), to match it with other figures (CPU time).
    window: tuple[float, float] | None = None
    shown_upto: int = 0  # how many actor latencies the last progress line had seen

    def action_done(self, latency: float, *, action: str = "action", settling: bool = False) -> None:
        """The acting client saw its `action` answered after `latency` seconds; `settling` when that answer
        is the settled round (the action ended it)."""
        if self.measuring:
            self.actions += 1
            self.actor.append(latency)
            key = f"{action} settling" if settling else action
            self.actor_by_action.setdefault(key, []).append(latency)

    def seen_by_other(self, latency: float) -> None:
        if self.measuring:
            self.others.append(latency)

    def round_settled(self) -> None:
        if self.measuring:
            self.rounds += 1

    def error(self, code: str, *, action: str | None = None) -> None:
        """A refusal; `action` is what the bot had sent (a lost race is counted by it too)."""
        self.errors[code] += 1
        if code == STALE and action is not None:
            self.races_by_action[action] += 1

    @property
    def races(self) -> int:
        return self.errors[STALE]

    @property
    def unexpected_errors(self) -> int:
        return sum(self.errors.values()) - self.races

    def progress_line(self) -> str:
        rate = self.actions / self.elapsed if self.elapsed else 0.0
        # The p99 of the actions answered since the last line: how the latency moves during the run.
        p99 = percentiles(self.actor[self.shown_upto :])["p99"]
        self.shown_upto = len(self.actor)
        shown = "-" if p99 is None else f"{p99}"
        return (
            f"{self.elapsed:6.1f} s  bots {self.connected:4d}  rounds {self.rounds:6d}"
            f"  actions {self.actions:7d} ({rate:7.1f}/s)  recent actor p99 {shown} ms"
            f"  races {self.races}  errors {self.unexpected_errors}  reconnects {self.reconnects}"
        )

    def summary(self) -> dict[str, Any]:
        seconds = self.elapsed or float("nan")
        return {
            "seconds": round(self.elapsed, 2),
            "rounds": self.rounds,
            "rounds_per_s": round(self.rounds / seconds, 2) if self.elapsed else 0.0,
            "actions": self.actions,
            "actions_per_s": round(self.actions / seconds, 2) if self.elapsed else 0.0,
            "latency_ms": {"actor": percentiles(self.actor), "others": percentiles(self.others)},
            "actor_latency_ms_by_action": {
                key: percentiles(values) for key, values in sorted(self.actor_by_action.items())
            },
            "errors": dict(sorted(self.errors.items())),
            "races": self.races,
            "races_by_action": dict(sorted(self.races_by_action.items())),
            "unexpected_errors": self.unexpected_errors,
            "reconnects": self.reconnects,
            "window": None if self.window is None else [round(edge, 3) for edge in self.window],
        }
