"""Loading a table's state for a command: its row locked, its seats and current round read, and the rows
turned into the flow's `TableState` (kept beside it as models, so the store writes back the seats that
changed). A table actor loads once, when it takes the table; services load for each command. Also the
errors the services raise."""

import logging
from datetime import datetime
from operator import attrgetter
from typing import Any

from django.db.models import Max, Q
from django.utils import timezone

from blackjack.engine.round import RoundState
from blackjack.flow import Player, RoundInfo, SeatState, Settings, ShoeInfo, TableState
from blackjack.models import Phase, Round, Seat, Shoe, Table
from cards.errors import Refused

logger = logging.getLogger(__name__)


class RoundBroken(Exception):
    """The stored round cannot be loaded or continued: it must be voided and its stakes refunded."""

    def __init__(self, round_id: int, reason: str) -> None:
        super().__init__(f"round {round_id}: {reason}")
        self.round_id = round_id
        self.reason = reason


def _user_model():
    from django.contrib.auth import get_user_model

    return get_user_model()


def barred(user_id: int) -> bool:
    """Whether the user may not play: suspended, or no longer active."""
    return _user_model().objects.filter(Q(suspended=True) | Q(is_active=False), pk=user_id).exists()


#: The columns of a seat the flow changes: the store writes a seat whose values of them changed.
SEAT_COLUMNS = (
    *("user_id", "sat_down_at", "missed_rounds", "sitting_out", "ready"),
    *("leaving_after_round", "client_seed", "disconnected_at"),
)


#: A seat's values of `SEAT_COLUMNS`, as a tuple.
seat_values = attrgetter(*SEAT_COLUMNS)


class Loaded:
    """A table's rows as read under its lock (the models the store writes back) and its state."""

    def __init__(self, table: Table, seats: dict[int, Seat], rnd: Round | None, now: datetime) -> None:
        self.table = table
        self.seats = seats
        self.round = rnd
        self.now = now
        self.users = {seat.user_id: seat.user for seat in seats.values() if seat.user_id}
        #: The rounds and shoes at hand for the store, by id: the current ones, and those a write made.
        self.rounds: dict[int, Round] = {}
        self.shoes: dict[int, Shoe] = {}
        self.keep_seats()
        if rnd is not None:
            self.rounds[rnd.pk] = rnd
            self.shoes[rnd.shoe_id] = rnd.shoe
        self.state: TableState | None = None
        #: The new balance of each player whose chips the command moved (from the wallet's statements).
        self.balances: dict[int, int] = {}

    def keep_seats(self) -> None:
        """The seats as they are now are the ones the next write compares with (`seat_values`)."""
        self.seats_before = {number: seat_values(seat) for number, seat in self.seats.items()}

    def user(self, user_id: int):
        """The user model of a player (a bare instance with its id will do for the wallet)."""
        return self.users.get(user_id) or _user_model()(pk=user_id)


def begin(table_id: int, *, now: datetime | None = None, engine: bool = True) -> Loaded:
    """Lock the table's row and load its state. With `engine` the round's engine state is loaded too (a
    stored state that cannot be loaded raises `RoundBroken`); without, the round under way counts as not
    loaded (what voiding needs)."""
    # The table's row first: the seats and the round are read after its lock is held, each statement with
    # a fresh snapshot (under READ COMMITTED a join in the locking statement would give a waiter the round as
    # it was before the lock holder committed: PostgreSQL rechecks only the locked row).
    table = Table.objects.select_for_update(of=("self",)).select_related("preset").filter(pk=table_id).first()
    if table is None:
        raise Refused("bad_message", "No such table.")
    seats = {seat.number: seat for seat in Seat.objects.filter(table_id=table_id).select_related("user")}
    rnd = None
    if table.current_round_id:
        rnd = Round.objects.select_related("shoe").filter(pk=table.current_round_id).first()
    loaded = Loaded(table, seats, rnd, now or timezone.now())
    loaded.state = _state_of(loaded, engine=engine)
    return loaded


def _state_of(loaded: Loaded, *, engine: bool) -> TableState:
    table, rnd = loaded.table, loaded.round
    round_info = shoe_info = None
    if rnd is not None:
        round_info = round_info_of(rnd)
        if engine and not rnd.is_over:
            round_info.engine = load_engine(rnd)
        if rnd.shoe.retired_at is None:
            shoe_info = round_info.shoe
        last = rnd.number
    else:
        last = Round.objects.filter(table=table).aggregate(last=Max("number"))["last"] or 0
        shoe = Shoe.objects.filter(table=table, retired_at__isnull=True).order_by("-id").first()
        if shoe is not None:
            loaded.shoes[shoe.pk] = shoe
            shoe_info = shoe_info_of(shoe)
    return TableState(
        id=table.pk,
        settings=settings_of(table),
        version=table.version,
        phase=table.phase,
        deadline=table.deadline,
        window_version=table.window_version,
        window_actors=table.window_actors,
        next_server_seed=table.next_server_seed,
        seats={number: _seat_state(seat) for number, seat in loaded.seats.items()},
        round=round_info,
        shoe=shoe_info,
        last_round_number=last,
    )


def settings_of(table: Table) -> Settings:
    fields = ("min_bet", "max_bet", "seats", "seats_per_player", "is_open")
    windows = ("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds")
    return Settings(rules=table.ruleset(), **{name: getattr(table, name) for name in (*fields, *windows)})


def player_of(user) -> Player:
    public = getattr(user, "public_name", None) or ""
    return Player(user.pk, user.username, public, bool(user.suspended or not user.is_active))


def _seat_state(seat: Seat) -> SeatState:
    return SeatState(
        number=seat.number,
        player=player_of(seat.user) if seat.user_id else None,
        sat_down_at=seat.sat_down_at,
        missed_rounds=seat.missed_rounds,
        sitting_out=seat.sitting_out,
        ready=seat.ready,
        leaving_after_round=seat.leaving_after_round,
        client_seed=seat.client_seed,
        disconnected_at=seat.disconnected_at,
    )


def shoe_info_of(shoe: Shoe) -> ShoeInfo:
    fields = ("server_seed", "seed_hash", "client_seed", "decks", "cut_index", "position", "nonce")
    values = {name: getattr(shoe, name) for name in (*fields, "created_at", "retired_at")}
    return ShoeInfo(id=shoe.pk, table_id=shoe.table_id, seat_seeds=list(shoe.seat_seeds), **values)


def round_info_of(rnd: Round) -> RoundInfo:
    fields = ("number", "start_position", "rules", "min_bet", "max_bet", "phase", "started_at", "deadline")
    values = {name: getattr(rnd, name) for name in (*fields, "settled_at", "voided", "results", "logged")}
    return RoundInfo(id=rnd.pk, shoe=shoe_info_of(rnd.shoe), seats=list(rnd.seats), **values)


def dump_engine(state: RoundState) -> dict[str, Any]:
    data = state.to_dict()
    del data["shoe"]  # the card order stays out of the database; it follows from the shoe's seeds
    return data


def load_engine(rnd: Round) -> RoundState:
    """The engine state of a round under way, its card order recomputed from its shoe's seeds."""
    from blackjack import services

    try:
        if not isinstance(rnd.state, dict):
            raise TypeError("the stored state is not an object")
        data = dict(rnd.state, shoe="".join(services.round_order(rnd.shoe, rnd.start_position)))
        state = RoundState.from_dict(data)
        if state.phase not in (Phase.BETTING, Phase.INSURANCE, Phase.PLAYING, Phase.SETTLED):
            raise ValueError(f"unknown phase {state.phase!r}")
        if state.phase == Phase.PLAYING and state.turn is None:
            raise ValueError("a playing round without a turn")
    except (Refused, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise RoundBroken(rnd.pk, f"stored state cannot be loaded: {exc}") from None
    return state
