"""One view model per viewer: what this user may see of a table and do at it, built from the database.

`build_table_view(table_id=..., user=...)` returns the PROTOCOL `state` message (plus the extra fields the
table page needs); the JSON consumer sends it as it is and the HTML consumer renders it. Hidden information
is removed here and only here: the view is assembled field by field from the round's engine state, so the
shoe order, the server seeds of the shoe in play and of the next one (only their hashes) and the dealer's
unrevealed hole card are never copied into it.
`lobby_section()` is blackjack's part of the lobby's message.

Where a version's views come from: the part all viewers share (table, round, shoe, seats with their players'
presence and balances, events) is built once per version, then each viewer's own part (`you`: their
seats, controls, balance, hint) is a cheap function of it (`view_of`). The table's actor builds the shared
part from what it holds in memory after its commit (`shared_from_memory`, with the `Memory` it keeps); a
change made by any other path, and a viewer's first view, read it from the database (`read_shared`).
A settled round's dealer's turn is shown as `dealer` frames of its version before the version itself
(`frame_at`: the frame is a function of the committed round and the time since it settled).
"""

import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property, lru_cache
from typing import Any, NamedTuple

import orjson
from django.core.signals import setting_changed
from django.db.models import BooleanField, Count, ExpressionWrapper, Q
from django.dispatch import receiver
from django.templatetags.static import static

from accounts.avatars import avatar_static_path
from accounts.models import Wallet
from blackjack.engine.cards import hand_value
from blackjack.engine.round import RoundState, allowed_actions
from blackjack.engine.rules import RuleSet
from blackjack.engine.strategy import recommend
from blackjack.flow.rounds import DEALER_CARD_SECONDS, dealer_turn_cards
from blackjack.models import Phase, Round, Seat, Shoe, Table, TableEvent
from cards.errors import Refused
from cards.fairness import seed_hash
from live import private

logger = logging.getLogger(__name__)

EVENTS_SHOWN = 30
CHAT_SHOWN = 30
#: Tables one lobby message lists (a page): the lobby stays a few KiB however many tables are open.
LOBBY_PAGE_SIZE = 15
# The view's table lists that a JSON client may go without (`?format=json&log=off`): about half of a state's
# bytes, which a bot that only plays never reads.
LOG_LISTS = ("events",)

# Engine actions that are also protocol actions (the engine's `sit_out`, `deal` and `timeout` are not).
_SEAT_ACTIONS = ("bet", "insurance", "even_money", "hit", "stand", "double", "split", "surrender")
_SEAT_ACTION_ORDER = ("ready", *_SEAT_ACTIONS)


class TableUnavailable(Exception):
    """No table with this id, or one this viewer may not watch (private without access, or closed)."""


def visible_table(*, table_id: int, user, private_token: str | None = None) -> Table:
    """The table if `user` may watch it, else raise TableUnavailable.

    A private table is watched with its token (the link), by a player holding a seat or by its creator;
    a closed table only by players still holding a seat there.
    """
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise TableUnavailable(f"no table {table_id}")
    seated = user.is_authenticated and Seat.objects.filter(table=table, user_id=user.pk).exists()
    if not table.is_open and not seated:
        raise TableUnavailable(f"table {table_id} is closed")
    if not private.admits(table, user=user, token=private_token, seated=seated):
        raise TableUnavailable(f"table {table_id} is private")
    return table


@dataclass(frozen=True)
class _Shared:
    """What every viewer of a table sees alike at one version: the view's `table` part, what `you` needs, and
    the seated players' balances. Built once per version (from the table actor's memory, or read from the
    database) and shared between viewers: never mutate it."""

    table: Table
    seat_rows: dict[int, "_SeatRow"]
    state: RoundState | None
    turn: tuple[int, int] | None
    view_table: dict[str, Any]
    balances: dict[int, int]
    _kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: A settled round whose dealer's turn is still being shown: when it settled and how many dealer frames
    #: come before its results (`frame_at`); None otherwise.
    reveal: tuple[datetime, int] | None = None
    #: The chips the round's settlement paid each player (taken out of the balances a dealer frame shows).
    paid: dict[int, int] = field(default_factory=dict)
    #: This is a dealer frame: nobody has anything to decide.
    revealing: bool = False
    #: The version this was built of: `table` is the table's row as its actor keeps it, which the actor's
    #: next commits update in place while this is still on its way to viewers.
    #: (Given only by `replace`, which keeps it: a dealer frame is of the version it was made from.)
    version: int | None = None

    def __post_init__(self) -> None:
        if self.version is None:
            object.__setattr__(self, "version", self.table.version)

    @cached_property
    def table_json(self) -> str:
        """The `table` part as JSON, encoded once for every JSON viewer of this version."""
        return orjson.dumps(self.view_table).decode()

    @cached_property
    def lean_table_json(self) -> str:
        """The `table` part without its log (`LOG_LISTS`), for clients that skip it."""
        lean = {key: value for key, value in self.view_table.items() if key not in LOG_LISTS}
        return orjson.dumps(lean).decode()

    def keep(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """`make()` computed once for this version and kept with it (e.g. HTML every viewer shares); two
        threads asking at once may both compute it, alike."""
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]


@dataclass(frozen=True)
class ViewerView:
    """One viewer's `state` message: the dict, and its JSON (reusing the shared part's encoding)."""

    view: dict[str, Any]
    shared: _Shared
    #: The viewer's balance as known, before a dealer frame takes out what the round paid them.
    balance: int | None = None

    @property
    def version(self) -> int:
        return self.view["v"]

    def json(self, *, lean: bool = False) -> str:
        """The message as JSON; `lean` leaves out the table's log (`?log=off`)."""
        you = orjson.dumps(self.view["you"]).decode()
        table = self.shared.lean_table_json if lean else self.shared.table_json
        return f'{{"type": "state", "v": {self.version}, "table": {table}, "you": {you}}}'


class _SeatRow(NamedTuple):
    """A seat as the view needs it (plain values)."""

    number: int
    user_id: int | None
    ready: bool
    sitting_out: bool
    leaving_after_round: bool
    connected: bool
    user__username: str | None
    user__display_name: str | None
    user__avatar: str | None
    user__wallet__balance: int | None

    @property
    def balance(self) -> int | None:
        return self.user__wallet__balance


# --- the reads of a version from the database (a viewer on another process, or the actor's first view) ---


def _load_table(table_id: int) -> Table:
    """The table with its preset, current round and the round's shoe."""
    return Table.objects.select_related("current_round__shoe", "preset").get(pk=table_id)


def build_table_view(*, table_id: int, user, now: datetime | None = None) -> dict[str, Any]:
    """The `state` message for `user` (anonymous: the spectator's view) of the stored version, or of its frame
    at `now` (`frame_at`: a dealer frame while a settled round's dealer's turn is shown). Raises
    Table.DoesNotExist."""
    return viewer_view(table_id=table_id, user=user, now=now).view


def viewer_view(*, table_id: int, user, now: datetime | None = None) -> ViewerView:
    """`user`'s view of the table as stored, or of its frame at `now` (see `build_table_view`). Raises
    Table.DoesNotExist."""
    shared = read_shared(table_id)
    balance = own_balance(shared, user)
    if now is not None:
        shared = frame_at(shared, now).shared
    return view_of(shared, user, balance=balance)


def view_of(shared: _Shared, user, *, balance: int | None = None) -> ViewerView:
    """`user`'s view of a version's shared part: no query. A seated viewer's balance is in the shared part;
    `balance` is the one a viewer holding no seat was last told (`own_balance`)."""
    balance = shared.balances.get(user.pk, balance) if user.is_authenticated else None
    shown = balance
    if shared.revealing and balance is not None:
        shown = balance - shared.paid.get(user.pk, 0)
    view = {
        "type": "state",
        "v": shared.version,
        "table": shared.view_table,
        "you": _you(shared, user, shown),
    }
    return ViewerView(view, shared, balance)


def own_balance(shared: _Shared, user) -> int | None:
    """The viewer's balance: from the shared part when they hold a seat, else read."""
    if not user.is_authenticated:
        return None
    if user.pk in shared.balances:
        return shared.balances[user.pk]
    return Wallet.objects.filter(user_id=user.pk).values_list("balance", flat=True).first()


def read_shared(table_id: int) -> _Shared:
    """The shared part of the table's stored version, read from the database. Raises Table.DoesNotExist."""
    table = _load_table(table_id)
    round_ = table.current_round
    shoe = round_.shoe if round_ is not None else _unretired_shoe(table)
    return _assemble(table, round_, shoe, _seat_rows(table_id), _events(table_id))


def _unretired_shoe(table: Table) -> Shoe | None:
    return Shoe.objects.filter(table=table, retired_at__isnull=True).order_by("-id").first()


# --- the shared part from a table actor's memory ---------------------------------------------------------


@dataclass
class Memory:
    """What a table's views need beyond the table's state that its actor holds: the last events shown and the
    seated players' balances. Read once when the actor loads the table (`remember`), then kept up to date by
    the actor's own commits."""

    events: list[dict[str, Any]]
    balances: dict[int, int]


def remember(table_id: int) -> Memory:
    """The memory of a table as stored: its events and its seated players' balances."""
    balances = {row.user_id: row.balance for row in _seat_rows(table_id).values() if row.balance is not None}
    return Memory(_events(table_id), balances)


def shared_from_memory(
    table: Table, round_: Round | None, shoe: Shoe | None, seats: dict[int, Seat], memory: Memory
) -> _Shared:
    """The shared part of the version an actor holds, from its models as written (the table with its preset,
    the current round with its shoe, or the table's unretired shoe, and the seats with their users) and its
    `memory`: no query, unless a seated player's balance is not known yet (someone just sat down: read
    once)."""
    unknown = [
        seat.user_id for seat in seats.values() if seat.user_id and seat.user_id not in memory.balances
    ]
    if unknown:
        memory.balances.update(Wallet.objects.filter(user_id__in=unknown).values_list("user_id", "balance"))
    rows = {}
    for number, seat in seats.items():
        user = seat.user if seat.user_id else None
        rows[number] = _SeatRow(
            number,
            seat.user_id,
            seat.ready,
            seat.sitting_out,
            seat.leaving_after_round,
            seat.disconnected_at is None,
            user.username if user else None,
            user.display_name if user else None,
            user.avatar if user else None,
            memory.balances.get(user.pk) if user else None,
        )
    return _assemble(table, round_, shoe, rows, list(memory.events))


def event_entry(at, text: str, kind: str) -> dict[str, Any]:
    """One line of the view's `events` list, from a row read or an event a change has just written."""
    return {"at": _iso(at), "text": text, "kind": str(kind)}


def _seat_rows(table_id: int) -> dict[int, _SeatRow]:
    connected = ExpressionWrapper(Q(disconnected_at__isnull=True), output_field=BooleanField())
    rows = Seat.objects.filter(table_id=table_id).annotate(connected=connected)
    return {row[0]: _SeatRow(*row) for row in rows.values_list(*_SeatRow._fields)}


def _assemble(
    table: Table,
    round_: Round | None,
    shoe: Shoe | None,
    seat_rows: dict[int, _SeatRow],
    events: list[dict[str, Any]],
) -> _Shared:
    state = _engine_state(round_)
    balances = {row.user_id: row.balance for row in seat_rows.values() if row.balance is not None}
    # A round under way plays by the rules and limits it opened with (staff edits apply from the next round).
    live_round = round_ if round_ is not None and not round_.is_over else None
    rules = RuleSet.from_dict(live_round.rules) if live_round is not None else table.ruleset()
    limits = live_round if live_round is not None else table
    min_bet, max_bet = limits.min_bet, limits.max_bet
    turn = state.turn if state is not None and table.phase == Phase.PLAYING else None
    reveal, paid = None, {}
    if state is not None and table.phase == Phase.SETTLED and round_.settled_at is not None:
        steps = dealer_turn_cards(state)
        if steps:
            reveal = (round_.settled_at, steps)
            for result in (round_.results or {}).get("seats", ()):
                paid[result["user_id"]] = paid.get(result["user_id"], 0) + result["returned"]
    view_table = {
        "id": table.pk,
        "name": table.name,
        "min_bet": min_bet,
        "max_bet": max_bet,
        "phase": table.phase,
        "deadline": _iso(table.deadline),
        "deadline_seconds": table.deadline_seconds,
        "turn": None if turn is None else {"seat": turn[0], "hand": turn[1]},
        "dealer": _dealer(state),
        "seats": [
            _seat_view(number, seat_rows.get(number), state, turn) for number in range(1, table.seats + 1)
        ],
        "seats_total": table.seats,
        "shoe": _shoe(shoe, round_),
        "next_shoe_hash": seed_hash(table.next_server_seed),
        "round_id": None if round_ is None else round_.pk,
        "round_number": None if round_ is None else round_.number,
        "rules": rules.to_dict(),
        "rules_summary": rules.summary(),
        "is_private": table.is_private,
        "is_open": table.is_open,
        "events": events,
    }
    return _Shared(table, seat_rows, state, turn, view_table, balances, reveal=reveal, paid=paid)


# --- the dealer's turn, shown frame by frame ------------------------------------------------------------


class Frame(NamedTuple):
    """What a viewer is shown of a version at one moment: the shared part (the version's own, or one of its
    dealer frames), its place in the version's sequence (increasing), and when the next frame is due."""

    shared: _Shared
    index: int
    next_at: datetime | None


def frame_at(shared: _Shared, now: datetime, *, start: datetime | None = None) -> Frame:
    """The frame of `shared` to show at `now`: a pure function of the committed round and the time since it
    settled (or since `start`, when later: a viewer who watched the round and got its version late). While
    the dealer's turn of a settled round is shown (`blackjack.flow.rounds.DEALER_CARD_SECONDS` apart per
    card), the `dealer` phase with the cards turned so far and no results; then the version itself."""
    if shared.reveal is None:
        return Frame(shared, 0, None)
    settled_at, steps = shared.reveal
    start = settled_at if start is None else max(settled_at, start)
    index = max(0, int((now - start).total_seconds() // DEALER_CARD_SECONDS))
    if index >= steps:
        return Frame(shared, steps, None)
    framed = shared.keep(f"dealer_frame_{index}", lambda: _dealer_frame(shared, index))
    return Frame(framed, index, start + timedelta(seconds=(index + 1) * DEALER_CARD_SECONDS))


def _dealer_frame(shared: _Shared, index: int) -> _Shared:
    """Dealer frame `index` of a settled round: the upcard and the next `index + 1` dealer cards, the players'
    hands without results or payouts, the balances before payment (`view_of`) and none of the settlement's
    events. Built from the version's view field by field, so nothing the frame does not show is in it."""
    settled_at = shared.reveal[0]
    cards = list(shared.state.dealer_cards)
    shown = cards[: index + 2]
    total, soft = hand_value(shown)
    table = dict(shared.view_table)
    table.update(
        phase="dealer",
        deadline=None,
        deadline_seconds=None,
        turn=None,
        dealer={"cards": shown, "total": total, "soft": soft, "hole_hidden": False},
        seats=[_unsettled_seat(seat) for seat in shared.view_table["seats"]],
        events=[event for event in shared.view_table["events"] if not _settles(event, settled_at)],
    )
    if table["shoe"] is not None:
        table["shoe"] = {**table["shoe"], "cards_left": table["shoe"]["cards_left"] + len(cards) - len(shown)}
    # The balances stay as committed: each viewer's is shown less what the round paid them (`view_of`).
    return replace(shared, view_table=table, _kept={}, reveal=None, revealing=True)


def _unsettled_seat(seat: dict[str, Any]) -> dict[str, Any]:
    hands = [{**hand, "result": None, "payout": None} for hand in seat["hands"]]
    return {**seat, "hands": hands, "insurance_payout": 0}


#: The events a round's settlement writes that a dealer frame must not show yet.
_SETTLEMENT_EVENTS = ("dealer", "result", "shoe")


def _settles(event: dict[str, Any], settled_at: datetime) -> bool:
    at = datetime.fromisoformat(event["at"])
    return event["kind"] in _SETTLEMENT_EVENTS and at >= settled_at


def lobby_section(page: int) -> dict[str, Any]:
    """Blackjack's part of the lobby message: one page (`LOBBY_PAGE_SIZE`, in id order) of the public open
    tables with their seat counts, phase and rules; `page` beyond the last is the last."""
    public = Table.objects.filter(is_open=True, is_private=False)
    total = public.count()
    pages = max(1, -(-total // LOBBY_PAGE_SIZE))
    page = min(max(1, page), pages)
    first = (page - 1) * LOBBY_PAGE_SIZE
    tables = (
        public.select_related("preset")
        .annotate(taken=Count("seat_set", filter=Q(seat_set__user__isnull=False)))
        .order_by("id")[first : first + LOBBY_PAGE_SIZE]
    )
    rows = []
    for table in tables:
        rules = table.ruleset()
        rows.append(
            {
                "id": table.pk,
                "name": table.name,
                "min_bet": table.min_bet,
                "max_bet": table.max_bet,
                "seats": table.seats,
                "seats_taken": table.taken,
                "phase": table.phase,
                "rules": rules.to_dict(),
                "rules_summary": rules.summary(),
                "preset": table.preset.name,
            }
        )
    return {"tables": rows, "page": page, "pages": pages, "total": total}


# --- pieces ---------------------------------------------------------------------------------------------


def _engine_state(round_: Round | None) -> RoundState | None:
    """The round's engine state, without its shoe (the view never needs it; leaving it out means no code path
    below can leak it)."""
    if round_ is None or round_.voided:
        return None
    data = {**round_.state, "shoe": ""}
    try:
        return RoundState.from_dict(data)
    except Refused:
        return None


def _dealer(state) -> dict[str, Any]:
    if state is None or not state.dealer_cards:
        return {"cards": [], "total": None, "soft": False, "hole_hidden": False}
    cards = list(state.dealer_cards)
    hidden = not state.hole_revealed and len(cards) > 1
    shown = [cards[0], *([None] * (len(cards) - 1))] if hidden else cards
    total, soft = hand_value(card for card in shown if card is not None)
    return {"cards": shown, "total": total, "soft": soft, "hole_hidden": hidden}


def _seat_view(number: int, row: _SeatRow | None, state, turn) -> dict[str, Any]:
    taken = row is not None and row.user_id is not None
    engine_seat = state.seats.get(number) if state is not None else None
    hands = []
    if engine_seat is not None:
        for index, hand in enumerate(engine_seat.hands):
            hands.append(
                {
                    "cards": list(hand.cards),
                    "bet": hand.bet,
                    "total": hand.total,
                    "soft": hand.soft,
                    "status": hand.status,
                    "result": hand.result,
                    "payout": hand.payout,
                    "doubled": hand.doubled,
                    "split": hand.split,
                    "is_turn": turn == (number, index),
                }
            )
    return {
        "seat": number,
        "player": row.user__username if taken else None,
        "display_name": (row.user__display_name or row.user__username) if taken else None,
        "avatar": row.user__avatar if taken else None,
        "avatar_url": _avatar_url(row.user__avatar) if taken else None,
        "bet": engine_seat.bet if engine_seat is not None else 0,
        "insurance": engine_seat.insurance if engine_seat is not None else 0,
        "insurance_payout": engine_seat.insurance_payout if engine_seat is not None else 0,
        "in_round": engine_seat is not None and bool(engine_seat.hands),
        "hands": hands,
        "ready": taken and row.ready,
        "sitting_out": taken and (row.sitting_out or (engine_seat is not None and engine_seat.sitting_out)),
        "leaving": taken and row.leaving_after_round,
        "connected": taken and row.connected,
        "is_turn": turn is not None and turn[0] == number,
    }


@lru_cache(maxsize=64)
def _avatar_url(avatar: str) -> str:
    """An avatar's static URL (with DEBUG off, a file name with its hash from the manifest), worked out once
    per avatar and process: every view of a version has one per seated player."""
    return static(avatar_static_path(avatar))


@receiver(setting_changed)
def _static_urls_changed(*, setting: str, **kwargs) -> None:
    if setting in ("STATIC_URL", "STORAGES"):
        _avatar_url.cache_clear()


def _you(shared: _Shared, user, balance: int | None) -> dict[str, Any]:
    if not user.is_authenticated:
        return {
            "username": None,
            "display_name": None,
            "balance": None,
            "seats": [],
            "allowed": [],
            "allowed_by_seat": {},
            "hint": None,
            "can_sit": False,
            "is_spectator": True,
        }
    table, seat_rows, state, turn = shared.table, shared.seat_rows, shared.state, shared.turn
    mine = sorted(number for number, row in seat_rows.items() if row.user_id == user.pk)
    free = [
        number
        for number in range(1, table.seats + 1)
        if seat_rows.get(number) is None or not seat_rows[number].user_id
    ]
    can_sit = table.is_open and bool(free) and len(mine) < table.seats_per_player
    by_seat = {
        str(number): _seat_actions(table, seat_rows[number], state, balance, shared.revealing)
        for number in mine
    }
    allowed = {"chat"}
    if can_sit:
        allowed.add("sit")
    if mine:
        allowed.add("leave")
    for actions in by_seat.values():
        allowed.update(actions)
    hint = None
    if turn is not None and turn[0] in mine and state is not None:
        action = recommend(state, turn[0], turn[1], allowed=by_seat[str(turn[0])])
        if action is not None:
            hint = {"seat": turn[0], "hand": turn[1], "action": action}
    return {
        "username": user.username,
        "display_name": user.public_name,
        "balance": balance,
        "seats": mine,
        "allowed": sorted(allowed),
        "allowed_by_seat": by_seat,
        "hint": hint,
        "can_sit": can_sit,
        "is_spectator": not mine,
    }


def _seat_actions(
    table: Table, row: _SeatRow, state, balance: int | None, revealing: bool = False
) -> list[str]:
    """Actions the server would accept for this seat now (`leave` and `chat` are table-level): a double or a
    split the player's `balance` cannot cover is left out."""
    phase = table.phase
    actions: list[str] = []
    if revealing:
        return actions
    if phase == Phase.SETTLED and not row.ready:
        actions.append("ready")
    elif phase == Phase.BETTING and row.sitting_out:
        actions.append("ready")  # back in from sitting out (a bet does the same)
    if state is not None and row.number in state.seats and phase != Phase.SETTLED:
        # The engine's betting actions are `bet` (placing or changing it) and `sit_out`, which is no protocol
        # action; insurance-window offers and the turn's plays are protocol actions as they are.
        actions.extend(name for name in allowed_actions(state, row.number) if name in _SEAT_ACTIONS)
        if balance is not None and ("double" in actions or "split" in actions):
            seat_state = state.seats[row.number]
            if balance < seat_state.hands[state.turn_hand].bet:  # a double stakes the hand's bet again
                actions = [name for name in actions if name != "double"]
            if balance < seat_state.bet:  # a split stakes the original bet on the new hand
                actions = [name for name in actions if name != "split"]
    return sorted(actions, key=_SEAT_ACTION_ORDER.index)


def _shoe(shoe: Shoe | None, round_: Round | None) -> dict[str, Any] | None:
    if shoe is None:
        return None
    # The round's engine position runs ahead of the stored shoe position while the round deals.
    position = max(shoe.position, round_.state.get("position", 0)) if round_ is not None else shoe.position
    return {
        "id": shoe.pk,
        "hash": shoe.seed_hash,
        "client_seed": shoe.client_seed,
        "seat_seeds": shoe.seat_seeds,
        "nonce": shoe.nonce,
        "cards_left": max(0, shoe.total_cards - position),
        "decks": shoe.decks,
    }


def _events(table_id: int) -> list[dict[str, Any]]:
    rows = TableEvent.objects.filter(table_id=table_id).order_by("-id")
    rows = list(rows.values_list("created_at", "text", "kind")[:EVENTS_SHOWN])
    return [event_entry(at, text, kind) for at, text, kind in reversed(rows)]


def _iso(moment) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
