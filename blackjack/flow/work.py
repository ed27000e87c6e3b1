"""One command being decided: the working copy of the table's state and what the command adds to the outcome.

`Work` plays the part a database transaction played before: the flow's steps change `work.table` (a copy) and
append chips, log rows and events to `work.out`; a step that refuses raises `Refused`, and `decide` then drops
the copy. `finish` bumps the version and closes the decision window the way every accepted change does.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from blackjack.engine.round import RoundState
from blackjack.flow.state import Event, LogRow, Move, Outcome, Player, RoundInfo, Seeds, ShoeInfo, TableState

#: The card order a round starting at card `start` of `shoe` is dealt from (the store passes the seeded
#: order; tests may script it).
# The table's phases, as PROTOCOL names them (a table is never stored in the dealer's phase: the engine plays
# the dealer inside the action that ends the players' turns).
WAITING, BETTING, INSURANCE, PLAYING, SETTLED = "waiting", "betting", "insurance", "playing", "settled"

Cards = Callable[[ShoeInfo, int], tuple[str, ...]]


class Broken(Exception):
    """The round cannot go on (its shoe ran out, a replay failed): void it and refund its stakes."""

    def __init__(self, rnd: RoundInfo, reason: str) -> None:
        super().__init__(f"round {rnd.number}: {reason}")
        self.round = rnd
        self.reason = reason


class Work:
    """The table being changed by one command, at `now`."""

    def __init__(self, state: TableState, now: datetime, seeds: Seeds, cards: Cards) -> None:
        self.table = state.copy()
        self.now = now
        self.seeds = seeds
        self.cards = cards
        self.out = Outcome(state=self.table)
        self.actor: int | None = None  # the player whose action this is (None: clock, presence, staff)
        self._start_phase = state.phase
        self._first_round = self.table.round
        # The round as loaded is written back only if it was under way and its engine state loaded (a finished
        # round stays as it was; a command that did not load the engine does not touch the round).
        first = state.round
        self._keep_first = first is not None and (first.is_over or first.engine is None)

    # --- the table's parts -------------------------------------------------------------------------------

    @property
    def round(self) -> RoundInfo:
        """The table's round, read by the steps that run only while the table has one (`table.round` may be
        None)."""
        rnd = self.table.round
        assert rnd is not None, "the table has no round"
        return rnd

    @property
    def engine(self) -> RoundState:
        """The engine's state of the round under way (`in_round`), read by the steps that play it."""
        engine = self.round.engine
        assert engine is not None, "the round's engine state is not loaded"
        return engine

    @engine.setter
    def engine(self, value: RoundState) -> None:
        self.round.engine = value

    @property
    def seats(self):
        return self.table.seats

    @property
    def in_round(self) -> bool:
        """A round is under way (betting to playing)."""
        rnd = self.table.round
        return rnd is not None and rnd.engine is not None and not rnd.is_over

    def owner(self, number: int) -> Player | None:
        seat = self.table.seats.get(number)
        return seat.player if seat is not None else None

    def occupied(self) -> list[int]:
        return sorted(number for number, seat in self.table.seats.items() if seat.player)

    def has_stake(self, number: int) -> bool:
        """The seat has chips in the round under way (it must stay until the round ends)."""
        if not self.in_round:
            return False
        seat_state = self.engine.seats.get(number)
        return seat_state is not None and seat_state.stake > 0

    # --- what the command adds ---------------------------------------------------------------------------

    def event(self, kind: str, text: str, rnd: RoundInfo | None = None) -> None:
        self.out.events.append(Event(kind, text[:200], rnd or self.table.round))

    def log(self, action: dict[str, Any], *, player: Player | None = None, seat: int | None = None) -> None:
        rnd = self.round
        rnd.logged += 1
        row = LogRow(rnd, rnd.logged, player.id if player else None, seat, action, self.table.version + 1)
        self.out.logs.append(row)

    def move(self, number: int, amount: int, memo: str) -> None:
        player = self.owner(number)
        assert player is not None  # chips move for a seat in the round, held until the round is settled
        self.out.moves.append(Move(player.id, amount, memo, self.round))

    def touch_shoe(self, shoe: ShoeInfo) -> None:
        if all(shoe is not other for other in self.out.shoes):
            self.out.shoes.append(shoe)

    def set_deadline(self, seconds: int | None) -> None:
        self.table.deadline = None if seconds is None else self.now + timedelta(seconds=seconds)

    def close_round(self) -> None:
        """Write the current round as it stands (before another round replaces it, and at the end)."""
        rnd = self.table.round
        if rnd is None or (rnd is self._first_round and self._keep_first):
            return
        if not rnd.is_over:
            rnd.phase = self.table.phase
            rnd.deadline = self.table.deadline
        if all(rnd is not other for other in self.out.rounds):
            self.out.rounds.append(rnd)

    def finish(self) -> Outcome:
        """The command is accepted: the version moves on, the window resets on a new phase or round."""
        table = self.table
        self.close_round()
        table.version += 1
        if table.phase != self._start_phase or table.round is not self._first_round:
            table.window_version, table.window_actors = table.version, {}
        if self.actor is not None:
            table.window_actors[str(self.actor)] = table.version
        self.out.changed = True
        if table.phase != self._start_phase:
            self.out.lobby = True
        return self.out
