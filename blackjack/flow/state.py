"""The values the table flow works on: a table's state in memory, the commands it takes, the outcome it
returns.

Plain dataclasses, no Django: the store (`blackjack.services.store`) builds a `TableState` from the table's
rows and writes an `Outcome` back; tests build them by hand. `decide` never changes the state it is given: it
works on a copy (`TableState.copy`), so a refusal leaves the caller's state exactly as it was."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from blackjack.engine.round import RoundState
from blackjack.engine.rules import RuleSet


@dataclass(frozen=True, slots=True)
class Player:
    """Who sits in a seat or acts: enough to name them in the log and results, and to refuse the barred."""

    id: int
    username: str
    public_name: str = ""
    barred: bool = False  # suspended or deactivated: may leave, may not play

    @property
    def name(self) -> str:
        return self.public_name or self.username


@dataclass(slots=True)
class SeatState:
    """One seat and the decision-window bookkeeping of the player in it."""

    number: int
    player: Player | None = None
    sat_down_at: datetime | None = None
    missed_rounds: int = 0
    sitting_out: bool = False
    ready: bool = False
    leaving_after_round: bool = False
    client_seed: str = ""
    disconnected_at: datetime | None = None

    def copy(self) -> "SeatState":
        return SeatState(
            self.number,
            self.player,
            self.sat_down_at,
            self.missed_rounds,
            self.sitting_out,
            self.ready,
            self.leaving_after_round,
            self.client_seed,
            self.disconnected_at,
        )


@dataclass(slots=True)
class ShoeInfo:
    """A shoe as the flow needs it: its seeds (the card order follows from them), size and position. `id` is
    None until the store has written a new one."""

    id: int | None
    table_id: int
    server_seed: str
    seed_hash: str
    client_seed: str
    seat_seeds: list[str]
    decks: int
    cut_index: int | None
    position: int = 0
    nonce: int = 0
    created_at: datetime | None = None
    retired_at: datetime | None = None

    def copy(self) -> "ShoeInfo":
        return ShoeInfo(
            self.id,
            self.table_id,
            self.server_seed,
            self.seed_hash,
            self.client_seed,
            list(self.seat_seeds),
            self.decks,
            self.cut_index,
            self.position,
            self.nonce,
            self.created_at,
            self.retired_at,
        )


@dataclass(slots=True)
class RoundInfo:
    """A round's row and the engine's state of it (`engine`: kept from the command that ended the round, not
    loaded for a round already over or when the store did not load it). `id` is None until the store has
    written a new one."""

    id: int | None
    number: int
    shoe: ShoeInfo
    start_position: int
    seats: list[int]
    rules: dict[str, Any]
    min_bet: int
    max_bet: int
    phase: str
    started_at: datetime | None = None
    deadline: datetime | None = None
    settled_at: datetime | None = None
    voided: bool = False
    results: dict[str, Any] | None = None
    logged: int = 0
    engine: RoundState | None = None

    @property
    def is_over(self) -> bool:
        return self.voided or self.settled_at is not None

    def copy(self, shoe: ShoeInfo) -> "RoundInfo":
        """A copy dealing from `shoe` (the copy of this round's shoe)."""
        return RoundInfo(
            self.id,
            self.number,
            shoe,
            self.start_position,
            list(self.seats),
            self.rules,
            self.min_bet,
            self.max_bet,
            self.phase,
            self.started_at,
            self.deadline,
            self.settled_at,
            self.voided,
            self.results,
            self.logged,
            self.engine,
        )


@dataclass(slots=True)
class Settings:
    """What staff set on a table (the round under way keeps the rules and limits it opened with). Replaced
    whole when it changes, never changed in place (table states share it)."""

    rules: RuleSet
    min_bet: int
    max_bet: int
    seats: int
    seats_per_player: int
    betting_seconds: int
    insurance_seconds: int
    turn_seconds: int
    ready_seconds: int
    is_open: bool = True


@dataclass(slots=True)
class TableState:
    """One live table: settings, version, phase and deadline, seats, its current round, its shoe in use."""

    id: int
    settings: Settings
    version: int
    phase: str
    deadline: datetime | None
    window_version: int
    window_actors: dict[str, int]
    next_server_seed: str
    seats: dict[int, SeatState]
    round: RoundInfo | None = None
    shoe: ShoeInfo | None = None  # the table's shoe not retired yet, dealt from by the next round
    last_round_number: int = 0

    def copy(self) -> "TableState":
        """A copy `decide` may change: the seats, round and shoes are copied; the settings (replaced whole,
        never changed in place) and the engine state (a value the engine replaces) are shared. Written out
        field by field: every command copies the table's state, and this is several times faster than
        `dataclasses.replace`."""
        shoe = self.shoe.copy() if self.shoe is not None else None
        rnd = self.round
        if rnd is not None:
            rnd = rnd.copy(shoe if shoe is not None and rnd.shoe is self.shoe else rnd.shoe.copy())
        return TableState(
            self.id,
            self.settings,
            self.version,
            self.phase,
            self.deadline,
            self.window_version,
            dict(self.window_actors),
            self.next_server_seed,
            {number: seat.copy() for number, seat in self.seats.items()},
            rnd,
            shoe,
            self.last_round_number,
        )


# --- commands -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Act:
    """A player's protocol action (`sit`, `bet`, `hit`, ...) sent against `expected_version`."""

    player: Player
    action: dict[str, Any]
    expected_version: Any


@dataclass(frozen=True, slots=True)
class Expire:
    """The clock: apply the deadline set for `version`, if it is still that version's and due."""

    version: int


@dataclass(frozen=True, slots=True)
class StandUpAbsent:
    """The clock: stand up players whose connection is gone longer than the grace period."""


@dataclass(frozen=True, slots=True)
class Present:
    """Who has a socket open at the table, as its owner counts them (`live.presence`): the seats of the other
    players are marked disconnected from now (their grace period runs; a mark already set keeps its time),
    those of these players are cleared."""

    players: frozenset[int]


@dataclass(frozen=True, slots=True)
class Release:
    """Stand players up (a suspension, the table closing): at once without chips in play, else after the
    round. `player_id` None: everyone; `close`: the table closes too, telling the table `notice` if given."""

    player_id: int | None = None
    close: bool = False
    notice: str = ""


@dataclass(frozen=True, slots=True)
class Reopen:
    """Staff open a closed table again."""


@dataclass(frozen=True, slots=True)
class ChangeSettings:
    """Staff change the table's settings (the caller has checked them)."""

    settings: Settings


@dataclass(frozen=True, slots=True)
class Void:
    """Void `round` (it cannot go on): `refunds` (player id -> chips) give back every net stake, from the
    ledger. The round is the table's current one, or an older one left unfinished."""

    round: RoundInfo
    reason: str
    refunds: dict[int, int]


Command = Act | Expire | StandUpAbsent | Present | Release | Reopen | ChangeSettings | Void


@dataclass(frozen=True, slots=True)
class Seeds:
    """Fresh randomness for one command, drawn by the caller: the table's next server seed (used when a shoe
    opens) and a client seed for a player who sits down without one."""

    server: str
    client: str


# --- the outcome ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Move:
    """Chips between a player's wallet and the house: `amount` > 0 is a stake taken from the player."""

    player_id: int
    amount: int
    memo: str
    round: RoundInfo


@dataclass(frozen=True, slots=True)
class Payments:
    """Payments from the house, made together (a settlement, a void's refunds): (player id, chips, kind,
    memo) with kind `payout` or `refund`."""

    round: RoundInfo
    payments: list[tuple[int, int, str, str]]


@dataclass(frozen=True, slots=True)
class LogRow:
    """One row of the round's action log (the engine action, replayable)."""

    round: RoundInfo
    seq: int
    player_id: int | None
    seat: int | None
    action: dict[str, Any]
    version_after: int


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the table's event log."""

    kind: str
    text: str
    round: RoundInfo | None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a command was refused (`code`: a PROTOCOL error code); nothing changed."""

    code: str
    message: str


@dataclass(slots=True)
class Outcome:
    """What a command did. `changed` False: nothing to write (an expiry no longer due, a refusal).

    `rounds` and `shoes` are the rows to write (new ones have no id), in the order they were touched;
    `moves` and `payments` the chips, `logs` and `events` the rows to append, `settled` the round that was
    settled (its history is recorded after commit), `broken` a round found unable to go on (the caller voids
    it). The table's new deadline is `state.deadline`."""

    state: TableState
    changed: bool = False
    refusal: Refusal | None = None
    broken: tuple[RoundInfo, str] | None = None
    rounds: list[RoundInfo] = field(default_factory=list)
    shoes: list[ShoeInfo] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    payments: list[Payments] = field(default_factory=list)
    logs: list[LogRow] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    settled: RoundInfo | None = None
    lobby: bool = False
    seats_removed: list[int] = field(default_factory=list)
