"""One view model per viewer: what this user may see of a table and do at it, built from the database.

`build_table_view(table_id=..., user=...)` returns the PROTOCOL `state` message (plus the extra fields the
table page needs); the JSON consumer sends it as it is and the HTML consumer renders it. Hidden information
is removed here and only here: the view is assembled field by field from the round's engine state, so the
shoe order, the server seed of a shoe in play and the dealer's unrevealed hole card are never copied into it.
`build_lobby_view()` is the lobby's message.

Reads: every connected viewer rebuilds its view after every change, so the part all viewers share (table,
round, seats, presence, events, chat: five queries whatever their number of rows) is built once per table
version and chat line and kept per process; each viewer's own read is one query (the table's version and
last chat line, which key the shared part, with the viewer's balance). A row changed without bumping the
version (a presence row that marks no seat, a staff edit in the admin) shows from the next version on.
"""

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.db.models import BigIntegerField, Count, OuterRef, Q, Subquery, Value
from django.templatetags.static import static

from accounts.avatars import avatar_static_path
from accounts.models import Wallet
from tables.engine.cards import hand_value
from tables.engine.errors import EngineError
from tables.engine.round import RoundState, allowed_actions
from tables.engine.rules import RuleSet
from tables.engine.strategy import recommend
from tables.models import ChatMessage, Phase, Presence, Round, Seat, Shoe, Table, TableEvent

EVENTS_SHOWN = 30
CHAT_SHOWN = 30

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
    if table.is_private and not seated:
        creator = user.is_authenticated and table.created_by_id == user.pk
        if not creator and private_token != table.private_token:
            raise TableUnavailable(f"table {table_id} is private")
    return table


@dataclass(frozen=True)
class _Shared:
    """What every viewer of a table sees alike at one version: the view's `table` part and what `you` needs.
    Shared between viewers once built: never mutate it."""

    table: Table
    seat_rows: dict[int, Seat]
    state: RoundState | None
    turn: tuple[int, int] | None
    view_table: dict[str, Any]
    last_chat: int | None


# Per process: (table id, created_at, version, last chat id) -> _Shared. After a change every connected viewer
# rebuilds its view; the first one reads the table and the others only add their own `you` part. The key
# changes with every committed change that bumps the version and with every chat line.
_shared_views: OrderedDict[tuple, _Shared] = OrderedDict()
_shared_lock = threading.Lock()
SHARED_VIEWS_KEPT = 128


def build_table_view(*, table_id: int, user) -> dict[str, Any]:
    """The `state` message for `user` (anonymous: the spectator's view). Raises Table.DoesNotExist."""
    last_chat = ChatMessage.objects.filter(table_id=OuterRef("pk")).order_by("-id").values("id")[:1]
    rows = Table.objects.filter(pk=table_id).annotate(last_chat=Subquery(last_chat))
    if user.is_authenticated:
        # The viewer's balance rides along with the version key: one query per viewer when the shared part
        # of this version is built already.
        rows = rows.annotate(balance=Subquery(Wallet.objects.filter(user_id=user.pk).values("balance")[:1]))
    else:
        rows = rows.annotate(balance=Value(None, output_field=BigIntegerField()))
    row = rows.values_list("version", "created_at", "last_chat", "balance").first()
    if row is None:
        raise Table.DoesNotExist(f"no table {table_id}")
    *key_fields, balance = row
    key = (table_id, *key_fields)
    with _shared_lock:
        shared = _shared_views.get(key)
    if shared is None:
        shared = _build_shared(table_id)
        if [shared.table.version, shared.table.created_at, shared.last_chat] == key_fields:
            with _shared_lock:
                _shared_views[key] = shared
                while len(_shared_views) > SHARED_VIEWS_KEPT:
                    _shared_views.popitem(last=False)
    you = _you(shared, user, balance)
    return {"type": "state", "v": shared.table.version, "table": shared.view_table, "you": you}


def encode_view(view: dict[str, Any]) -> str:
    """The `state` message as JSON text (what `?format=json` clients receive)."""
    return json.dumps(view)


def forget_shared_views() -> None:
    """Drop the per-process views (for code that changes tables without bumping their version: tests)."""
    with _shared_lock:
        _shared_views.clear()


def _build_shared(table_id: int) -> _Shared:
    table = Table.objects.select_related("preset", "current_round", "current_round__shoe").get(pk=table_id)
    round_ = table.current_round
    state = _engine_state(round_)
    seat_rows = {seat.number: seat for seat in Seat.objects.filter(table=table).select_related("user")}
    connected = set(Presence.objects.filter(table=table).values_list("user_id", flat=True))
    # A round under way plays by the rules and limits it opened with (staff edits apply from the next round).
    live_round = round_ if round_ is not None and not round_.is_over else None
    rules = RuleSet.from_dict(live_round.rules) if live_round is not None else table.ruleset()
    limits = live_round if live_round is not None else table
    min_bet, max_bet = limits.min_bet, limits.max_bet
    turn = state.turn if state is not None and table.phase == Phase.PLAYING else None
    chat = recent_chat(table_id=table.pk)
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
            _seat_view(number, seat_rows.get(number), state, turn, connected)
            for number in range(1, table.seats + 1)
        ],
        "seats_total": table.seats,
        "shoe": _shoe(table, round_),
        "round_id": None if round_ is None else round_.pk,
        "round_number": None if round_ is None else round_.number,
        "rules": rules.to_dict(),
        "rules_summary": rules.summary(),
        "is_private": table.is_private,
        "is_open": table.is_open,
        "events": _events(table),
        "chat": chat,
    }
    return _Shared(table, seat_rows, state, turn, view_table, chat[-1]["id"] if chat else None)


def chat_entry(message: ChatMessage) -> dict[str, Any]:
    """One chat line as the view's `chat` list and the `chat` message carry it (the user must be loaded)."""
    return {
        "id": message.pk,
        "from": message.user.username,
        "display_name": message.user.public_name,
        "text": message.text,
        "at": _iso(message.created_at),
    }


def build_lobby_view() -> dict[str, Any]:
    """The lobby message: public open tables with their seat counts, phase and rules."""
    tables = (
        Table.objects.filter(is_open=True, is_private=False)
        .select_related("preset")
        .annotate(taken=Count("seat_set", filter=Q(seat_set__user__isnull=False)))
        .order_by("id")
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
    return {"type": "lobby", "tables": rows}


# --- pieces ---------------------------------------------------------------------------------------------


def _engine_state(round_: Round | None) -> RoundState | None:
    """The round's engine state, without its shoe (the view never needs it; leaving it out means no code path
    below can leak it)."""
    if round_ is None or round_.voided:
        return None
    data = {**round_.state, "shoe": ""}
    try:
        return RoundState.from_dict(data)
    except EngineError:
        return None


def _dealer(state) -> dict[str, Any]:
    if state is None or not state.dealer_cards:
        return {"cards": [], "total": None, "soft": False, "hole_hidden": False}
    cards = list(state.dealer_cards)
    hidden = not state.hole_revealed and len(cards) > 1
    shown = [cards[0], *([None] * (len(cards) - 1))] if hidden else cards
    total, soft = hand_value(card for card in shown if card is not None)
    return {"cards": shown, "total": total, "soft": soft, "hole_hidden": hidden}


def _seat_view(number: int, row: Seat | None, state, turn, connected: set[int]) -> dict[str, Any]:
    user = row.user if row is not None else None
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
        "player": user.username if user is not None else None,
        "display_name": user.public_name if user is not None else None,
        "avatar": user.avatar if user is not None else None,
        "avatar_url": static(avatar_static_path(user.avatar)) if user is not None else None,
        "bet": engine_seat.bet if engine_seat is not None else 0,
        "insurance": engine_seat.insurance if engine_seat is not None else 0,
        "in_round": engine_seat is not None and bool(engine_seat.hands),
        "hands": hands,
        "ready": bool(row and user and row.ready),
        "sitting_out": bool(
            row and user and (row.sitting_out or (engine_seat is not None and engine_seat.sitting_out))
        ),
        "leaving": bool(row and user and row.leaving_after_round),
        "connected": user is not None and user.pk in connected,
        "is_turn": turn is not None and turn[0] == number,
    }


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
    by_seat = {str(number): _seat_actions(table, seat_rows[number], state) for number in mine}
    allowed = {"chat"}
    if can_sit:
        allowed.add("sit")
    if mine:
        allowed.add("leave")
    for actions in by_seat.values():
        allowed.update(actions)
    hint = None
    if turn is not None and turn[0] in mine and state is not None:
        action = recommend(state, turn[0], turn[1])
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


def _seat_actions(table: Table, row: Seat, state) -> list[str]:
    """Actions the server would accept for this seat now (`leave` and `chat` are table-level)."""
    phase = table.phase
    actions: list[str] = []
    if phase == Phase.SETTLED and not row.ready:
        actions.append("ready")
    elif phase == Phase.BETTING and row.sitting_out:
        actions.append("ready")  # back in from sitting out (a bet does the same)
    if state is not None and row.number in state.seats and phase != Phase.SETTLED:
        # The engine's betting actions are `bet` (placing or changing it) and `sit_out`, which is no protocol
        # action; insurance-window offers and the turn's plays are protocol actions as they are.
        actions.extend(name for name in allowed_actions(state, row.number) if name in _SEAT_ACTIONS)
    return sorted(actions, key=_SEAT_ACTION_ORDER.index)


def _shoe(table: Table, round_: Round | None) -> dict[str, Any] | None:
    shoe = (
        round_.shoe
        if round_ is not None
        else Shoe.objects.filter(table=table, retired_at__isnull=True).first()
    )
    if shoe is None:
        return None
    # The round's engine position runs ahead of the stored shoe position while the round deals.
    position = max(shoe.position, round_.state.get("position", 0)) if round_ is not None else shoe.position
    return {
        "id": shoe.pk,
        "hash": shoe.seed_hash,
        "cards_left": max(0, shoe.total_cards - position),
        "decks": shoe.decks,
    }


def _events(table: Table) -> list[dict[str, Any]]:
    rows = TableEvent.objects.filter(table=table).order_by("-id")[:EVENTS_SHOWN]
    return [
        {"at": _iso(event.created_at), "text": event.text, "kind": event.kind} for event in reversed(rows)
    ]


def recent_chat(*, table_id: int) -> list[dict[str, Any]]:
    """The table's last chat lines, oldest first (the view's `chat` list)."""
    rows = ChatMessage.objects.filter(table_id=table_id).select_related("user").order_by("-id")[:CHAT_SHOWN]
    return [chat_entry(message) for message in reversed(rows)]


def _iso(moment) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
