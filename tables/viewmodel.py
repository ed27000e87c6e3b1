"""One view model per viewer: what this user may see of a table and do at it, built from the database.

`build_table_view(table_id=..., user=...)` returns the PROTOCOL `state` message (plus the extra fields the
table page needs); the JSON consumer sends it as it is and the HTML consumer renders it. Hidden information
is removed here and only here: the view is assembled field by field from the round's engine state, so the
shoe order, the server seeds of the shoe in play and of the next one (only their hashes) and the dealer's
unrevealed hole card are never copied into it.
`build_lobby_view()` is the lobby's message.

Reads: every connected viewer rebuilds its view after every change, so the part all viewers share (table,
round, shoe, seats with their players' balances and presence, events, chat: four prepared queries whatever
their number of rows, `blackjack_site.prepared`) is built once per table version and kept per process under
(table id, version). A viewer told the version by a broadcast, holding a seat (so its balance is in the shared
part) or watching anonymously, then gets its view without any query, in the consumer's event loop; anyone
else reads one row first (the table's version and last chat line, which check the kept part, with the
viewer's balance). The process that makes a change keeps the new version's shared part as the change commits,
derived from the previous version's and what the change holds (`keep_change_on_commit`); with several
processes, it sends that part to the others with its announcement, and they keep it instead of reading it
(`export_shared`, `adopt_shared`). A chat line makes a process forget its kept versions of that table. A row
changed without bumping the version (a presence row that marks no seat, a staff edit in the admin) shows from
the next version on, derived ones included (a change reads its seats, players, presence, balances and preset).
"""

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, NamedTuple

import orjson
from django.core.signals import setting_changed
from django.db import transaction
from django.db.models import Count, DateTimeField, Exists, OuterRef, Q, Subquery
from django.dispatch import receiver
from django.templatetags.static import static
from django.utils.dateparse import parse_datetime

from accounts.avatars import avatar_static_path
from accounts.models import Wallet
from blackjack_site.prepared import Batch, Prepared, cache_relation, field_names, related_models
from tables.engine.cards import hand_value
from tables.engine.errors import EngineError
from tables.engine.round import RoundState, allowed_actions
from tables.engine.rules import RuleSet
from tables.engine.shoe import seed_hash
from tables.engine.strategy import recommend
from tables.models import ChatMessage, Phase, Presence, Round, RulePreset, Seat, Shoe, Table, TableEvent

logger = logging.getLogger(__name__)

EVENTS_SHOWN = 30
CHAT_SHOWN = 30
#: Tables one lobby message lists (a page): the lobby stays a few KiB however many tables are open.
LOBBY_PAGE_SIZE = 15
# The view's table lists that a JSON client may go without (`?format=json&log=off`): about half of a state's
# bytes, which a bot that only plays never reads (chat lines also arrive as `chat` messages of their own).
LOG_LISTS = ("events", "chat")

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
    """What every viewer of a table sees alike at one version: the view's `table` part, what `you` needs, and
    the seated players' balances. Shared between viewers once built: never mutate it."""

    table: Table
    seat_rows: dict[int, "_SeatRow"]
    state: RoundState | None
    turn: tuple[int, int] | None
    view_table: dict[str, Any]
    last_chat: int | None
    balances: dict[int, int]
    _kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def table_json(self) -> str:
        """The `table` part as JSON, encoded once for every JSON viewer of this version."""
        return orjson.dumps(self.view_table).decode()

    @cached_property
    def lean_table_json(self) -> str:
        """The `table` part without its log and chat lists (`LOG_LISTS`), for clients that skip them."""
        lean = {key: value for key, value in self.view_table.items() if key not in LOG_LISTS}
        return orjson.dumps(lean).decode()

    def keep(self, key: str, make: Callable[[], Any]) -> Any:
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

    @property
    def version(self) -> int:
        return self.view["v"]

    def json(self, *, lean: bool = False) -> str:
        """The message as JSON; `lean` leaves out the table's log and chat lists (`?log=off`)."""
        you = orjson.dumps(self.view["you"]).decode()
        table = self.shared.lean_table_json if lean else self.shared.table_json
        return f'{{"type": "state", "v": {self.version}, "table": {table}, "you": {you}}}'


# Per process: (table id, version) -> _Shared. After a change every connected viewer rebuilds its view; the
# first one reads the table and the others only add their own `you` part, without a query when they know the
# version (the broadcast says it) and hold a seat (their balance is in the shared part).
_shared_views: OrderedDict[tuple[int, int], _Shared] = OrderedDict()
_shared_lock = threading.Lock()
SHARED_VIEWS_KEPT = 256


class _SeatRow(NamedTuple):
    """A seat as the view needs it (plain values: seven of these are read for every table version)."""

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


# --- the reads, compiled once (blackjack_site.prepared): every table version runs them -----------------

_TABLE_PARTS = (Table, Round, Shoe, RulePreset)
_TABLE_ROW = Prepared(
    lambda table_id: Table.objects.filter(pk=table_id).values_list(
        *field_names(Table),
        *field_names(Round, "current_round__"),
        *field_names(Shoe, "current_round__shoe__"),
        *field_names(RulePreset, "preset__"),
    ),
    arity=1,
)
_SEATS = Prepared(
    lambda table_id: (
        Seat.objects.filter(table_id=table_id)
        .annotate(connected=Exists(Presence.objects.filter(table_id=table_id, user_id=OuterRef("user_id"))))
        .values_list(*_SeatRow._fields)
    ),
    arity=1,
)
_EVENTS = Prepared(
    lambda table_id: (
        TableEvent.objects.filter(table_id=table_id)
        .order_by("-id")
        .values_list("created_at", "text", "kind")[:EVENTS_SHOWN]
    ),
    arity=1,
)
_CHAT = Prepared(
    lambda table_id: (
        ChatMessage.objects.filter(table_id=table_id)
        .order_by("-id")
        .values_list("id", "user__username", "user__display_name", "text", "created_at")[:CHAT_SHOWN]
    ),
    arity=1,
)
_VERSION_KEY = Prepared(
    lambda table_id, user_id: (
        Table.objects.filter(pk=table_id)
        .annotate(
            last_chat=Subquery(
                ChatMessage.objects.filter(table_id=table_id).order_by("-id").values("id")[:1]
            ),
            balance=Subquery(Wallet.objects.filter(user_id=user_id).values("balance")[:1]),
        )
        .values_list("version", "created_at", "last_chat", "balance")
    ),
    arity=2,
)


def _load_table(table_id: int) -> Table:
    """The table with its preset, current round and the round's shoe (as select_related would load them)."""
    rows = _TABLE_ROW.rows(table_id)
    if not rows:
        raise Table.DoesNotExist(f"no table {table_id}")
    table, round_, shoe, preset = related_models(rows[0], _TABLE_PARTS)
    if round_ is not None:
        cache_relation(round_, "shoe", shoe)
    cache_relation(table, "current_round", round_)
    cache_relation(table, "preset", preset)
    return table


def build_table_view(*, table_id: int, user) -> dict[str, Any]:
    """The `state` message for `user` (anonymous: the spectator's view). Raises Table.DoesNotExist."""
    return viewer_view(table_id=table_id, user=user).view


def viewer_view(*, table_id: int, user, version: int | None = None) -> ViewerView:
    """`user`'s view of the table from the database: the shared part of the stored version if this process
    has it (one query: the version key and the viewer's balance), else read afresh. With `version` (what a
    broadcast announced) the kept shared part of that version is used without any query when it can be
    (`cached_viewer_view`). Raises Table.DoesNotExist."""
    if version is not None:
        found = cached_viewer_view(table_id=table_id, user=user, version=version)
        if found is not None:
            return found
    # The balance of an anonymous viewer's user id 0 is nobody's: None.
    rows = _VERSION_KEY.rows(table_id, user.pk if user.is_authenticated else 0)
    if not rows:
        raise Table.DoesNotExist(f"no table {table_id}")
    stored_version, created_at, chat_id, balance = rows[0]
    with _shared_lock:
        shared = _shared_views.get((table_id, stored_version))
    if shared is None or shared.table.created_at != created_at or shared.last_chat != chat_id:
        shared = _build_shared(table_id)
        if (shared.table.version, shared.table.created_at, shared.last_chat) == (
            stored_version,
            created_at,
            chat_id,
        ):
            _keep(shared)
    return ViewerView(_view(shared, user, balance), shared)


def cached_viewer_view(*, table_id: int, user, version: int) -> ViewerView | None:
    """`user`'s view at `version` from the shared part this process keeps, without touching the database;
    None when this process has not built that version, or the viewer holds no seat (so its balance is not in
    the shared part)."""
    with _shared_lock:
        shared = _shared_views.get((table_id, version))
    if shared is None:
        return None
    balance = None
    if user.is_authenticated:
        balance = shared.balances.get(user.pk)
        if balance is None:
            return None
    return ViewerView(_view(shared, user, balance), shared)


def _keep(shared: _Shared, *, unless_chat_missing: bool = False) -> None:
    """Keep a shared part; `unless_chat_missing` (one not read afresh): not if this process keeps that version
    already or has heard of a chat line it lacks."""
    key = (shared.table.pk, shared.table.version)
    with _shared_lock:
        if unless_chat_missing and (
            key in _shared_views or (shared.last_chat or 0) < _chat_seen.get(key[0], 0)
        ):
            return
        _shared_views[key] = shared
        while len(_shared_views) > SHARED_VIEWS_KEPT:
            _shared_views.popitem(last=False)


def _view(shared: _Shared, user, balance: int | None) -> dict[str, Any]:
    return {
        "type": "state",
        "v": shared.table.version,
        "table": shared.view_table,
        "you": _you(shared, user, balance),
    }


def forget_table_views(table_id: int, *, chat_id: int | None = None) -> None:
    """Drop what this process keeps of one table (a chat line arrived: the shared part lists the chat). With
    `chat_id`, that line's id: a shared part another process sends later without it is not adopted."""
    with _shared_lock:
        for key in [key for key in _shared_views if key[0] == table_id]:
            del _shared_views[key]
        if chat_id is not None and chat_id > _chat_seen.get(table_id, 0):
            _chat_seen[table_id] = chat_id
            _chat_seen.move_to_end(table_id)
            while len(_chat_seen) > SHARED_VIEWS_KEPT:
                _chat_seen.popitem(last=False)


# --- the shared part between processes ------------------------------------------------------------------
#
# The process that applies an action builds the new version's shared part anyway (for the acting viewer);
# the other processes serving viewers of that table would each read the same rows again. Instead the
# broadcast to them carries the shared part (`export_shared`: JSON, sent through Redis between servers,
# never to a client), and the first viewer there to hear of it adopts it (`adopt_shared`). It holds what the
# views are built from: the table row (without its private token), the seats, the round's engine state
# without the shoe (it never had one: see `_engine_state`), and the view's table part as its JSON.

# table id -> the newest chat line this process has heard of (see `forget_table_views`)
_chat_seen: OrderedDict[int, int] = OrderedDict()
_SHIPPED_TABLE_FIELDS = tuple(
    field for field in Table._meta.concrete_fields if field.attname != "private_token"
)


def export_shared(table_id: int, version: int) -> dict[str, str] | None:
    """The shared part this process keeps for that version, for the other processes: `{"view": JSON,
    "rest": JSON}`; None if it keeps none."""
    with _shared_lock:
        shared = _shared_views.get((table_id, version))
    if shared is None:
        return None
    return shared.keep("export", lambda: _export(shared))


def _export(shared: _Shared) -> dict[str, str]:
    table = [_plain(field, getattr(shared.table, field.attname)) for field in _SHIPPED_TABLE_FIELDS]
    rest = {
        "table": table,
        "seats": [list(row) for row in shared.seat_rows.values()],
        "state": None if shared.state is None else shared.state.to_dict(),
        "turn": None if shared.turn is None else list(shared.turn),
        "last_chat": shared.last_chat,
        "balances": [[user_id, balance] for user_id, balance in shared.balances.items()],
    }
    return {"view": shared.table_json, "rest": orjson.dumps(rest, option=orjson.OPT_NON_STR_KEYS).decode()}


def _plain(field, value):
    return value.isoformat() if isinstance(field, DateTimeField) and value is not None else value


def _unplain(field, value):
    return parse_datetime(value) if isinstance(field, DateTimeField) and value is not None else value


def adopt_shared(table_id: int, version: int, exported: dict[str, str]) -> bool:
    """Keep the shared part another process exported for that version, unless this process keeps one
    already or has heard of a chat line it lacks; whether it was adopted. One it cannot read (a process of
    another release, during a rolling deploy) is not adopted either: the version is read instead."""
    with _shared_lock:
        if (table_id, version) in _shared_views:
            return False
        chat_seen = _chat_seen.get(table_id, 0)
    try:
        shared = _imported(table_id, version, exported, chat_seen)
    except (EngineError, KeyError, TypeError, ValueError, AttributeError):
        logger.warning(
            "table %s: a shared part from another process could not be read", table_id, exc_info=True
        )
        return False
    if shared is None:
        return False
    _keep(shared)
    return True


def _imported(table_id: int, version: int, exported: dict[str, str], chat_seen: int) -> _Shared | None:
    rest = orjson.loads(exported["rest"])
    if (rest["last_chat"] or 0) < chat_seen:
        return None
    # The private token is left deferred: nothing a view needs reads it.
    table = Table.from_db(
        "default",
        [field.attname for field in _SHIPPED_TABLE_FIELDS],
        [_unplain(field, value) for field, value in zip(_SHIPPED_TABLE_FIELDS, rest["table"], strict=True)],
    )
    if table.pk != table_id or table.version != version:
        return None
    shared = _Shared(
        table,
        {row[0]: _SeatRow(*row) for row in rest["seats"]},
        None if rest["state"] is None else RoundState.from_dict(rest["state"]),
        None if rest["turn"] is None else tuple(rest["turn"]),
        orjson.loads(exported["view"]),
        rest["last_chat"],
        dict(rest["balances"]),
    )
    shared.__dict__["table_json"] = exported["view"]  # the cached encoding, as sent
    return shared


def forget_shared_views() -> None:
    """Drop the per-process views (for code that changes tables without bumping their version: tests)."""
    with _shared_lock:
        _shared_views.clear()


def _build_shared(table_id: int) -> _Shared:
    table = _load_table(table_id)
    seat_rows = _seat_rows(table_id)
    return _assemble(table, table.current_round, seat_rows, _events(table), recent_chat(table_id=table.pk))


def keep_change_on_commit(
    table: Table, round_: Round | None, events: list[TableEvent], *, writes: Batch
) -> None:
    """Send a change's last `writes`, and keep the new version's shared part, derived from the previous
    version's (if this process keeps it) and what the change holds, once the change's transaction commits;
    called inside that transaction. The table with its preset, its round and shoe and the change's events
    come from the change; the seats (with their players, presence and balances, which other tables and the
    wallet change too) are read again, one statement sent after the writes in their round trip; the older
    events and the chat are the previous version's (a chat line makes a process forget its kept parts, see
    `forget_table_views`). Without the previous part, or with a round the change did not load, nothing is
    kept: the first viewer reads the version as before. The acting process then builds its views of the
    version without reading it back after the commit."""
    with _shared_lock:
        previous = _shared_views.get((table.pk, table.version - 1))
    derivable = (
        previous is not None
        and previous.table.created_at == table.created_at
        and table.current_round_id is not None
        and round_ is not None
        and round_.pk == table.current_round_id
        and Round.shoe.is_cached(round_)
    )
    if not derivable:
        writes.flush()
        return
    (rows,) = writes.flush((_SEATS, (table.pk,)))
    seat_rows = {row[0]: _SeatRow(*row) for row in rows}
    cache_relation(table, "current_round", round_)
    added = [_event_entry(event.created_at, event.text, event.kind) for event in events]
    shown = [*previous.view_table["events"], *added][-EVENTS_SHOWN:]
    shared = _assemble(table, round_, seat_rows, shown, previous.view_table["chat"])
    transaction.on_commit(lambda: _keep(shared, unless_chat_missing=True))


def _seat_rows(table_id: int) -> dict[int, _SeatRow]:
    return {row[0]: _SeatRow(*row) for row in _SEATS.rows(table_id)}


def _assemble(
    table: Table,
    round_: Round | None,
    seat_rows: dict[int, _SeatRow],
    events: list[dict[str, Any]],
    chat: list[dict[str, Any]],
) -> _Shared:
    state = _engine_state(round_)
    balances = {row.user_id: row.balance for row in seat_rows.values() if row.balance is not None}
    # A round under way plays by the rules and limits it opened with (staff edits apply from the next round).
    live_round = round_ if round_ is not None and not round_.is_over else None
    rules = RuleSet.from_dict(live_round.rules) if live_round is not None else table.ruleset()
    limits = live_round if live_round is not None else table
    min_bet, max_bet = limits.min_bet, limits.max_bet
    turn = state.turn if state is not None and table.phase == Phase.PLAYING else None
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
        "shoe": _shoe(table, round_),
        "next_shoe_hash": seed_hash(table.next_server_seed),
        "round_id": None if round_ is None else round_.pk,
        "round_number": None if round_ is None else round_.number,
        "rules": rules.to_dict(),
        "rules_summary": rules.summary(),
        "is_private": table.is_private,
        "is_open": table.is_open,
        "events": events,
        "chat": chat,
    }
    last_chat = chat[-1]["id"] if chat else None
    return _Shared(table, seat_rows, state, turn, view_table, last_chat, balances)


def chat_entry(message: ChatMessage) -> dict[str, Any]:
    """One chat line as the view's `chat` list and the `chat` message carry it (the user must be loaded)."""
    return {
        "id": message.pk,
        "from": message.user.username,
        "display_name": message.user.public_name,
        "text": message.text,
        "at": _iso(message.created_at),
    }


def lobby_page(value: str | None) -> int:
    """The lobby page a query asks for (`?page=N`): 1 unless N is a small whole number."""
    if value and value.isascii() and value.isdigit() and len(value) <= 6:
        return int(value)
    return 1


def build_lobby_view(*, page: int = 1) -> dict[str, Any]:
    """The lobby message: one page (`LOBBY_PAGE_SIZE`, in id order) of the public open tables with their seat
    counts, phase and rules; `page` beyond the last is the last."""
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
    return {"type": "lobby", "tables": rows, "page": page, "pages": pages, "total": total}


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
    by_seat = {str(number): _seat_actions(table, seat_rows[number], state, balance) for number in mine}
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


def _seat_actions(table: Table, row: _SeatRow, state, balance: int | None) -> list[str]:
    """Actions the server would accept for this seat now (`leave` and `chat` are table-level): a double or a
    split the player's `balance` cannot cover is left out."""
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
        if balance is not None and ("double" in actions or "split" in actions):
            seat_state = state.seats[row.number]
            if balance < seat_state.hands[state.turn_hand].bet:  # a double stakes the hand's bet again
                actions = [name for name in actions if name != "double"]
            if balance < seat_state.bet:  # a split stakes the original bet on the new hand
                actions = [name for name in actions if name != "split"]
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
        "client_seed": shoe.client_seed,
        "seat_seeds": shoe.seat_seeds,
        "nonce": shoe.nonce,
        "cards_left": max(0, shoe.total_cards - position),
        "decks": shoe.decks,
    }


def _events(table: Table) -> list[dict[str, Any]]:
    rows = _EVENTS.rows(table.pk)
    return [_event_entry(at, text, kind) for at, text, kind in reversed(rows)]


def _event_entry(at, text: str, kind: str) -> dict[str, Any]:
    """One line of the view's `events` list, from a row read or an event a change has just written."""
    return {"at": _iso(at), "text": text, "kind": str(kind)}


def recent_chat(*, table_id: int) -> list[dict[str, Any]]:
    """The table's last chat lines, oldest first (the view's `chat` list)."""
    rows = _CHAT.rows(table_id)
    return [
        {"id": pk, "from": username, "display_name": display_name or username, "text": text, "at": _iso(at)}
        for pk, username, display_name, text, at in reversed(rows)
    ]


def _iso(moment) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
