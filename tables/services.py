"""Every write of the live tables: seats, bets, play, deadlines, presence, chat, opening tables, recovery.

Each public function is keyword-only and runs in one `transaction.atomic`: lock the table row, check the
client's version, apply the engine, persist the round, move chips through `accounts.services` in the same
transaction, append the action log and the table's event log, bump `Table.version`, and register the
broadcast with `transaction.on_commit`. A refusal raises `ActionRefused(code, message)` and leaves nothing
behind (the transaction rolls back, so a refused action changes no row and no balance).

The flow of a table: waiting (nobody seated) -> betting (the countdown starts when the first player sits;
closes early once every seated player who is not sitting out has bet) -> the deal -> insurance (one window for
all when the dealer shows an ace, or early surrender) -> playing (hand by hand, a countdown per decision) ->
settled (the dealer played inside the same engine call; results shown; ready check with a countdown, closing
early when every seated player is ready) -> the next betting round. The engine plays the dealer within the
action that ends the players' turns, so a table is never stored in the `dealer` phase.

Deadlines are enforced by `expire_due`, keyed on the table version they were set for: the expiry re-checks the
version under the row lock, so two clocks (or a retry) apply it once. The shoe's card order is never stored:
it is recomputed from the shoe's seeds whenever a round is loaded, and stripped from the saved engine state.
"""

import logging
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, Subquery, Sum
from django.utils import timezone

from accounts import services as wallet
from accounts.models import LedgerEntry
from blackjack_site.prepared import (
    Batch,
    Prepared,
    cache_relation,
    field_names,
    insert,
    related_models,
    rows_together,
    save_changed,
    save_changed_together,
    snapshot,
)
from tables import broadcast, viewmodel
from tables.engine import round as engine
from tables.engine.cards import hand_value
from tables.engine.errors import EngineError
from tables.engine.round import RoundState
from tables.engine.rules import RuleSet
from tables.engine.shoe import (
    MAX_PLAYER_SEED,
    client_seed_of,
    cut_card_index,
    dealing_order,
    is_player_seed,
    new_server_seed,
    seed_digests,
    seed_hash,
    shuffled_shoe,
)
from tables.history import recording as history
from tables.models import (
    CHAT_MAX_LENGTH,
    MAX_SEATS,
    MAX_WINDOW_SECONDS,
    ActionLog,
    ChatMessage,
    OpenTableBounds,
    Phase,
    Presence,
    Round,
    RulePreset,
    Seat,
    Shoe,
    Table,
    TableEvent,
)

logger = logging.getLogger(__name__)

DISCONNECT_GRACE = timedelta(seconds=30)
MAX_MISSED_ROUNDS = 3
# Limits a player may choose when opening a table from the lobby (staff set any limits in the admin).
OPEN_TABLE_MIN_BET = getattr(settings, "TABLES_OPEN_MIN_BET", 1)
OPEN_TABLE_MAX_BET = getattr(settings, "TABLES_OPEN_MAX_BET", 10_000)

ROUND_ACTIONS = ("bet", "insurance", "even_money", "hit", "stand", "double", "split", "surrender")
PLAY_ACTIONS = ("hit", "stand", "double", "split", "surrender")
WINDOW_ACTIONS = ("sit", "leave", "bet", "ready", "insurance", "even_money")
_ANSWERS = ("insurance", "even_money")


class ActionRefused(Exception):
    """A refused action; `code` is a PROTOCOL error code, `message` readable English."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RoundBroken(Exception):
    """The stored round cannot be loaded or continued: it must be voided and its stakes refunded."""

    def __init__(self, round_id: int, reason: str) -> None:
        super().__init__(f"round {round_id}: {reason}")
        self.round_id = round_id
        self.reason = reason


# --- the reads every action makes, compiled once (blackjack_site.prepared) ------------------------------

_BARRED = Prepared(
    lambda user_id: (
        _user_model().objects.filter(Q(suspended=True) | Q(is_active=False), pk=user_id).values_list("pk")[:1]
    ),
    arity=1,
)
# The table's rule preset comes along (rounds open with its rules, and a settled table's view shows them);
# only the table's row is locked: tables sharing a preset must not wait for each other.
_LOCK_TABLE = Prepared(
    lambda table_id: (
        Table.objects.select_for_update(of=("self",))
        .filter(pk=table_id)
        .values_list(*field_names(Table), *field_names(RulePreset, "preset__"))
    ),
    arity=1,
)
_SEATS = Prepared(
    lambda table_id: Seat.objects.filter(table_id=table_id).values_list(
        *field_names(Seat), *field_names(_user_model(), "user__")
    ),
    arity=1,
)
# The table's current round, read in a statement of its own after the table's lock is held: under READ
# COMMITTED a join in the locking statement would give a waiter the round as it was before the lock holder
# committed (PostgreSQL rechecks only the locked row), and two actions would then number their logs alike. A
# later statement, even one sent in the same round trip (`rows_together`), takes a fresh snapshot.
_CURRENT_ROUND = Prepared(
    lambda table_id: Round.objects.filter(
        pk=Subquery(Table.objects.filter(pk=table_id).values("current_round_id")[:1])
    ).values_list(*field_names(Round), *field_names(Shoe, "shoe__")),
    arity=1,
)


# --- the entry points ---------------------------------------------------------------------------------------


def perform(*, table_id: int, user, action: dict[str, Any], expected_version: int | None) -> int:
    """Apply one protocol action (`sit`, `leave`, `bet`, `ready`, `insurance`, `even_money`, `hit`, `stand`,
    `double`, `split`, `surrender`) for `user`; return the table's new version."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to play.")
    name = action.get("action") if isinstance(action, dict) else None
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        raise ActionRefused("bad_message", f"Unknown action {name!r}.")
    try:
        with transaction.atomic():
            change = _Change.begin(table_id)
            if name != "leave" and _barred(change, user):
                raise ActionRefused("suspended", "Your account is suspended or closed: you cannot play.")
            if not version_accepted(change.table, user, name, expected_version):
                raise ActionRefused(
                    "stale_version", f"The table has changed (version {change.table.version}); try again."
                )
            handler(change, user, action)
            change.actor = user.pk
            return change.finish()
    except RoundBroken as broken:
        void_round(round_id=broken.round_id, reason=broken.reason)
        raise ActionRefused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None


def version_accepted(table: Table, user, name: str, expected_version) -> bool:
    """Is an action sent against `expected_version` still safe to apply?

    Turn actions (hit, stand, ...) need the current version: they depend on everything on the table.
    The decisions players make side by side in one window (sit, leave, bet, ready, insurance, even money,
    early surrender) may carry a version that only other players' actions in the same window made stale,
    so simultaneous bets are not refused; a repeat of the player's own action (a double click, a retry)
    still is, because the player has acted since that version."""
    if type(expected_version) is not int:
        return False
    if expected_version == table.version:
        return True
    early_surrender = name == "surrender" and table.phase == Phase.INSURANCE
    in_window = table.window_version <= expected_version < table.version
    if not (name in WINDOW_ACTIONS or early_surrender) or not in_window:
        return False
    acted_at = table.window_actors.get(str(user.pk))
    return acted_at is None or acted_at <= expected_version


def expire_due(*, now: datetime | None = None) -> int:
    """Apply every deadline due at `now` exactly once and stand up players gone longer than the grace period.
    Returns how many tables were changed."""
    now = now or timezone.now()
    changed = 0
    for table_id, version in Table.objects.filter(deadline__lte=now).values_list("id", "version"):
        changed += _guarded(table_id, lambda change, v=version: _expire_deadline(change, v, now), now)
    absent = (
        Seat.objects.filter(user__isnull=False, disconnected_at__lte=now - DISCONNECT_GRACE)
        .filter(table__phase__in=[Phase.WAITING, Phase.BETTING, Phase.SETTLED])
        .order_by()
        .values_list("table_id", flat=True)
        .distinct()
    )
    for table_id in list(absent):
        changed += _guarded(table_id, lambda change: _stand_up_absent(change, now), now)
    return changed


def note_presence(*, table_id: int, user, connected: bool, channel_name: str) -> None:
    """Record a websocket of `user` opening or closing on the table. When a seated player's last connection
    closes, the seat is marked disconnected (kept for `DISCONNECT_GRACE`); reconnecting clears the mark."""
    if user is None or not user.is_authenticated:
        return
    with transaction.atomic():
        change = _Change.begin(table_id, load_round=False)
        seats = [seat for seat in change.seats.values() if seat.user_id == user.pk]
        if connected:
            # A player who sat down before their first connection here (from the lobby) shows online now.
            arrived = bool(seats) and not Presence.objects.filter(table=change.table, user=user).exists()
            Presence.objects.get_or_create(
                channel_name=channel_name, defaults={"table": change.table, "user": user}
            )
            marked = [seat for seat in seats if seat.disconnected_at is not None]
            for seat in marked:
                seat.disconnected_at = None
        else:
            Presence.objects.filter(channel_name=channel_name).delete()
            marked, arrived = _mark_if_gone(change, user.pk), False
        if marked or arrived:
            change.finish()


def _mark_if_gone(change: "_Change", user_id: int) -> list[Seat]:
    """The user's seats at the table, marked disconnected now, if no connection of theirs is left there."""
    if Presence.objects.filter(table=change.table, user_id=user_id).exists():
        return []
    marked = [
        seat for seat in change.seats.values() if seat.user_id == user_id and seat.disconnected_at is None
    ]
    for seat in marked:
        seat.disconnected_at = change.now
    return marked


def refresh_presence(
    held: dict[str, tuple[int, Any]], *, still_open=lambda channel_name: True, now: datetime | None = None
) -> int:
    """Vouch for the table websockets one process holds open (`tables.liveness`: channel name -> (table id,
    user)): their rows are seen now. A row found missing (dropped by `sweep_presence` while this process could
    not reach the database) is written again, which clears its seat's disconnected mark, unless `still_open`
    says that websocket has closed meanwhile (its own disconnect removed the row). Returns how many rows were
    written again."""
    if not held:
        return 0
    now = now or timezone.now()
    names = list(held)
    if Presence.objects.filter(channel_name__in=names).update(seen_at=now) == len(names):
        return 0
    present = set(Presence.objects.filter(channel_name__in=names).values_list("channel_name", flat=True))
    missing = [name for name in names if name not in present]
    restored = 0
    for name in missing:
        if not still_open(name):
            continue
        table_id, user = held[name]
        try:
            note_presence(table_id=table_id, user=user, connected=True, channel_name=name)
        except ActionRefused:  # the table was deleted
            continue
        restored += 1
    return restored


def sweep_presence(*, now: datetime | None = None) -> int:
    """Drop the presence rows no process has vouched for within `PRESENCE_TIMEOUT_SECONDS`: their process died
    without closing its websockets. A player left with no connection at the table is marked disconnected, as
    after a normal disconnect, so the grace period and standing up follow. Returns the rows dropped."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    stale = Presence.objects.filter(seen_at__lt=cutoff).values_list("channel_name", "table_id", "user_id")
    dropped = 0
    for channel_name, table_id, user_id in list(stale):
        with transaction.atomic():
            try:
                change = _Change.begin(table_id, load_round=False)
            except ActionRefused:  # the table was deleted, and its presence rows with it
                continue
            # Re-checked under the table's lock: the row may have been vouched for or closed meanwhile.
            if not Presence.objects.filter(channel_name=channel_name, seen_at__lt=cutoff).delete()[0]:
                continue
            dropped += 1
            if _mark_if_gone(change, user_id):
                change.finish()
    return dropped


def post_chat(*, table_id: int, user, text: str) -> ChatMessage:
    """Store a chat line (stripped, 1 to 300 characters) and tell the table's viewers."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to chat.")
    if not isinstance(text, str) or not text.strip():
        raise ActionRefused("bad_message", "Write something to send.")
    text = text.strip()
    if len(text) > CHAT_MAX_LENGTH:
        raise ActionRefused("bad_message", f"A chat message is at most {CHAT_MAX_LENGTH} characters.")
    with transaction.atomic():
        table = Table.objects.filter(pk=table_id).first()
        if table is None:
            raise ActionRefused("bad_message", "No such table.")
        message = ChatMessage.objects.create(table=table, user=user, text=text)
        # This process forgets its kept parts at once (the others when the broadcast reaches their viewers):
        # one derived from a part without this line is not kept after it.
        transaction.on_commit(lambda: viewmodel.forget_table_views(table.pk, chat_id=message.pk))
        broadcast.chat_on_commit(table.pk, message.pk)
    return message


def create_table(
    *, name: str, preset: RulePreset, min_bet: int, max_bet: int, created_by=None, **options
) -> Table:
    """Create a table with all its seats (staff, seed data, `open_table`); `options` are Table fields."""
    with transaction.atomic():
        table = Table.objects.create(
            name=name, preset=preset, min_bet=min_bet, max_bet=max_bet, created_by=created_by, **options
        )
        Seat.objects.bulk_create(Seat(table=table, number=n) for n in range(1, table.seats + 1))
        if not table.is_private:
            broadcast.lobby_changed_on_commit()
    return table


def open_table_bounds() -> tuple[int, int]:
    """(lowest minimum, highest maximum) bet for tables players open: the `OpenTableBounds` row staff edit
    in the admin, else `OPEN_TABLE_MIN_BET` / `OPEN_TABLE_MAX_BET` (settings)."""
    row = OpenTableBounds.objects.values_list("min_bet", "max_bet").first()
    return row if row is not None else (OPEN_TABLE_MIN_BET, OPEN_TABLE_MAX_BET)


def open_table(*, user, name: str, preset, min_bet: int, max_bet: int, private: bool) -> Table:
    """A player opens a table from the lobby: a preset (instance, id or name), limits within
    `open_table_bounds()`, public or private (joined by its token link)."""
    if user is None or not user.is_authenticated:
        raise ActionRefused("not_authenticated", "Log in to open a table.")
    name = name.strip() if isinstance(name, str) else ""
    if not 1 <= len(name) <= Table._meta.get_field("name").max_length:
        raise ActionRefused("bad_message", "Give the table a name of 1 to 60 characters.")
    preset_row = _find_preset(preset)
    if preset_row is None:
        raise ActionRefused("bad_message", f"Unknown rule preset {preset!r}.")
    for value in (min_bet, max_bet):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ActionRefused("bad_amount", "Bet limits are whole numbers of chips.")
    lowest, highest = open_table_bounds()
    if not lowest <= min_bet <= max_bet <= highest:
        raise ActionRefused(
            "bad_amount", f"Limits must satisfy {lowest} <= minimum <= maximum <= {highest:,}."
        )
    return create_table(
        name=name,
        preset=preset_row,
        min_bet=min_bet,
        max_bet=max_bet,
        created_by=user,
        is_private=bool(private),
    )


def void_round(*, round_id: int, reason: str) -> bool:
    """Void a round that cannot go on: refund every player's net stake from the ledger, retire its shoe (its
    position is unknown) and open the next round. Returns False if the round was already over."""
    with transaction.atomic():
        table_id = Round.objects.filter(pk=round_id).values_list("table_id", flat=True).first()
        if table_id is None:
            return False
        change = _Change.begin(table_id, load_round=False)
        rnd = Round.objects.select_related("shoe").get(pk=round_id)
        if rnd.is_over:
            return False
        refunds = {}
        nets = (
            LedgerEntry.objects.filter(round_ref=rnd.pk, wallet__user__isnull=False)
            .values_list("wallet__user_id")
            .annotate(net=Sum("amount"))
        )
        users = {seat.user_id: seat.user for seat in change.seats.values() if seat.user_id}
        payments = []
        for user_id, net in nets:
            if net < 0:
                user = users.get(user_id) or _user_model().objects.get(pk=user_id)
                payments.append(wallet.Payment(user, -net, "refund", "void"))
                refunds[str(user_id)] = -net
        wallet.pay_many(payments=payments, round_ref=rnd.pk, table_ref=table_id)
        rnd.voided = True
        rnd.settled_at = change.now
        rnd.phase = Phase.SETTLED
        rnd.deadline = None
        rnd.results = {"voided": True, "reason": reason[:500], "refunds": refunds}
        rnd.save()
        Shoe.objects.filter(pk=rnd.shoe_id, retired_at__isnull=True).update(retired_at=change.now)
        logger.warning("voided round %s of table %s: %s", rnd.pk, table_id, reason)
        change.event(TableEvent.Kind.ROUND, f"Round {rnd.number} was voided; every stake was refunded.", rnd)
        if change.table.current_round_id == rnd.pk:
            change.round = None
            _free_seats_after_round(change, rnd.seats)
            _open_round(change)
        change.finish()
    return True


def recover_tables(*, clear_presence: bool = False) -> int:
    """Run when a clock starts: void every unfinished round whose stored state cannot be loaded (deadlines
    that passed while no server ran are then applied by `expire_due`). With `clear_presence` (one process
    serves every websocket, so none survived the restart) every presence row is dropped and every seated
    player counts as disconnected from now: they keep their seats if they reconnect within the grace period.
    Returns the number of rounds voided."""
    voided = 0
    open_rounds = Round.objects.filter(voided=False, settled_at__isnull=True).select_related("shoe")
    for rnd in open_rounds:
        try:
            _load_state(rnd)
        except RoundBroken as broken:
            voided += void_round(round_id=rnd.pk, reason=broken.reason)
    if clear_presence:
        Presence.objects.all().delete()
        seated = Seat.objects.filter(user__isnull=False, disconnected_at__isnull=True).order_by()
        for table_id in set(seated.values_list("table_id", flat=True)):
            with transaction.atomic():
                change = _Change.begin(table_id, load_round=False)
                for seat in change.seats.values():
                    if seat.user_id and seat.disconnected_at is None:
                        seat.disconnected_at = change.now
                change.finish()
    return voided


# --- staff changes (the admin) ----------------------------------------------------------------------------

#: The decision windows' lengths (1 to MAX_WINDOW_SECONDS), and the table settings staff may change with
#: `update_table`.
WINDOW_SETTINGS = ("betting_seconds", "insurance_seconds", "turn_seconds", "ready_seconds")
TABLE_SETTINGS = (
    "name",
    "preset",
    "min_bet",
    "max_bet",
    "seats",
    "seats_per_player",
    *WINDOW_SETTINGS,
    "is_private",
)


def table_max_bet_cap() -> int:
    """The site-wide ceiling of every table's maximum bet (`TABLE_MAX_BET_CAP`, default 100,000)."""
    return int(getattr(settings, "TABLE_MAX_BET_CAP", 100_000))


def update_table(*, table_id: int, **values) -> int:
    """Change a table's settings (`TABLE_SETTINGS`). The round under way keeps the rules and limits it
    opened with (`Round.rules`, `min_bet`, `max_bet` are snapshots); the next round uses the new ones.
    Seats cannot be removed while a player sits in them. Tells the table and the lobby; returns the
    version."""
    unknown = sorted(set(values) - set(TABLE_SETTINGS))
    if unknown:
        raise ActionRefused("bad_message", f"Not a table setting: {', '.join(unknown)}.")
    with transaction.atomic():
        change = _Change.begin(table_id, load_round=False)
        table = change.table
        for name, value in values.items():
            setattr(table, name, value)
        _check_table_settings(table)
        occupied = [number for number in _occupied(change) if number > table.seats]
        if occupied:
            raise ActionRefused(
                "seat_taken", f"Seat {occupied[0]} is occupied: it cannot be removed until its player leaves."
            )
        for number in [number for number in change.seats if number > table.seats]:
            change.seats.pop(number).delete()
        for number in range(1, table.seats + 1):
            if number not in change.seats:
                change.seats[number] = Seat.objects.create(table=table, number=number)
        change.lobby = True
        change.event(TableEvent.Kind.ROUND, "The table's settings changed; they apply from the next round.")
        return change.finish()


def _check_table_settings(table: Table) -> None:
    cap = table_max_bet_cap()
    if not 1 <= table.min_bet <= table.max_bet <= cap:
        raise ActionRefused("bad_amount", f"Limits must satisfy 1 <= minimum <= maximum <= {cap:,}.")
    if not 1 <= table.seats <= MAX_SEATS:
        raise ActionRefused("bad_message", f"A table has 1 to {MAX_SEATS} seats.")
    if not 1 <= table.seats_per_player <= table.seats:
        raise ActionRefused("bad_message", "Seats per player must be 1 to the number of seats.")
    for name in WINDOW_SETTINGS:
        if not 1 <= getattr(table, name) <= MAX_WINDOW_SECONDS:
            raise ActionRefused("bad_message", f"A decision window lasts 1 to {MAX_WINDOW_SECONDS} seconds.")


def close_table(*, table_id: int) -> int:
    """Close a table: nobody new may sit; players without chips in the round under way stand up now, the
    others when the round is settled (`leaving_after_round`). The lobby drops it. Returns the version."""
    with transaction.atomic():
        change = _Change.begin(table_id)
        change.table.is_open = False
        change.lobby = True
        change.event(TableEvent.Kind.ROUND, "The table is closing: this is its last round.")
        _release(change, [seat for seat in change.seats.values() if seat.user_id])
        return change.finish()


def reopen_table(*, table_id: int) -> int:
    """Open a closed table again (it returns to the lobby if public). Returns the version."""
    with transaction.atomic():
        change = _Change.begin(table_id, load_round=False)
        change.table.is_open = True
        change.lobby = True
        change.event(TableEvent.Kind.ROUND, "The table is open.")
        return change.finish()


def release_user_seats(*, user) -> int:
    """Stand `user` up at every table (a suspension, a deactivation): at once where no chips of theirs are in
    play, after the current round elsewhere. Returns the number of tables changed."""
    table_ids = set(Seat.objects.filter(user=user).values_list("table_id", flat=True))
    for table_id in sorted(table_ids):
        with transaction.atomic():
            change = _Change.begin(table_id)
            _release(change, [seat for seat in change.seats.values() if seat.user_id == user.pk])
            change.finish()
    return len(table_ids)


def _release(change: "_Change", seats: list[Seat]) -> None:
    freed = False
    for seat in seats:
        if _has_stake(change, seat.number):
            seat.leaving_after_round = True
        else:
            _stand_up(change, seat, "leaves")
            freed = True
    if freed:
        _after_seats_freed(change)


# --- one change to one table --------------------------------------------------------------------------------


class _Change:
    """The table row (locked), its seats, its current round and engine state, and what the change adds."""

    def __init__(self, table: Table, seats: dict[int, Seat], now: datetime) -> None:
        self.table = table
        self.seats = seats
        self.now = now
        self.round: Round | None = None
        self.state: RoundState | None = None
        self.lobby = False
        self._events: list[TableEvent] = []
        self._start_phase = table.phase
        self._start_round_id = table.current_round_id
        self._table_before = snapshot(table)
        self._seats_before = {number: snapshot(seat) for number, seat in seats.items()}
        self._loaded_round: tuple[Round, dict[str, Any]] | None = None  # the round as loaded, to compare
        self._finished_round_id: int | None = None  # the round loaded already over: nothing to write back
        self.actor: int | None = None  # the user whose action this change applies (None: clock, presence)
        # Writes sent with the change's last ones (`finish`), in one round trip: its action logs. What reads
        # them back before then sends them first (`send_writes`).
        self.writes = Batch()

    @classmethod
    def begin(cls, table_id: int, *, load_round: bool = True, now: datetime | None = None) -> "_Change":
        # The lock, the seats and the round in one round trip (on PostgreSQL), each statement in turn.
        reads = [(_LOCK_TABLE, (table_id,)), (_SEATS, (table_id,))]
        if load_round:
            reads.append((_CURRENT_ROUND, (table_id,)))
        rows, seat_rows, *round_rows = rows_together(*reads)
        if not rows:
            raise ActionRefused("bad_message", "No such table.")
        table, preset = related_models(rows[0], (Table, RulePreset))
        cache_relation(table, "preset", preset)
        seats = {}
        for row in seat_rows:
            seat, seat_user = related_models(row, (Seat, _user_model()))
            cache_relation(seat, "user", seat_user)
            seats[seat.number] = seat
        change = cls(table, seats, now or timezone.now())
        if load_round and table.current_round_id:
            rnd, shoe = related_models(round_rows[0][0], (Round, Shoe))
            cache_relation(rnd, "shoe", shoe)
            change.round = rnd
            change._loaded_round = (rnd, snapshot(rnd))
            if rnd.is_over:
                change._finished_round_id = rnd.pk
            else:
                change.state = _load_state(rnd)
        return change

    @property
    def in_round(self) -> bool:
        """A round is under way (betting to playing)."""
        return self.state is not None and not self.round.is_over

    def event(self, kind: str, text: str, rnd: Round | None = None) -> None:
        self._events.append(
            TableEvent(
                table=self.table, round=rnd or self.round, kind=kind, text=text[:200], created_at=self.now
            )
        )

    def log(self, action: dict[str, Any], *, user=None, seat: int | None = None) -> None:
        self.round.logged += 1  # written back with the round
        entry = ActionLog(
            round=self.round,
            table=self.table,
            seq=self.round.logged,
            user=user,
            seat=seat,
            action=action,
            version_after=self.table.version + 1,
            created_at=self.now,
        )
        insert(ActionLog, [entry], batch=self.writes)

    def send_writes(self) -> None:
        """Send the writes gathered so far (before reading the round's action logs back)."""
        self.writes.flush()

    def owner(self, number: int):
        seat = self.seats.get(number)
        return seat.user if seat is not None else None

    def set_deadline(self, seconds: int | None) -> None:
        self.table.deadline = None if seconds is None else self.now + timedelta(seconds=seconds)

    def save_round(self, batch: Batch | None = None) -> None:
        """Write the round and its engine state (before another round replaces it, and at the end, in
        `batch` with the change's other writes)."""
        rnd = self.round
        if rnd is None or rnd.pk == self._finished_round_id:
            return
        if self.state is not None:
            rnd.state = _dump_state(self.state)
        if not rnd.is_over:
            rnd.phase = self.table.phase
            rnd.deadline = self.table.deadline
        rnd.version = self.table.version + 1
        if self._loaded_round is not None and self._loaded_round[0] is rnd:
            save_changed(rnd, self._loaded_round[1], batch=batch)
        else:
            rnd.save()

    def finish(self) -> int:
        table = self.table
        writes = self.writes  # sent together: one round trip to PostgreSQL
        self.save_round(writes)
        table.version += 1
        if table.phase != self._start_phase or table.current_round_id != self._start_round_id:
            table.window_version, table.window_actors = table.version, {}
        if self.actor is not None:
            table.window_actors[str(self.actor)] = table.version
        save_changed(table, self._table_before, batch=writes)
        changed = []
        for number, seat in self.seats.items():
            before = self._seats_before.get(number)
            if before is None:
                seat.save()
            else:
                changed.append((seat, before))
        save_changed_together(changed, batch=writes)
        insert(TableEvent, self._events, batch=writes)
        # Sends the writes; registered before the broadcast: the new version's shared part is kept before it
        # is announced.
        viewmodel.keep_change_on_commit(table, self.round, self._events, writes=writes)
        broadcast.table_changed_on_commit(
            table.pk, table.version, lobby=self.lobby or table.phase != self._start_phase
        )
        return table.version


def _guarded(table_id: int, body, now: datetime) -> int:
    """Run `body(change)` in its own transaction; 1 if it changed the table, 0 if not. A broken round is
    voided instead."""
    try:
        with transaction.atomic():
            change = _Change.begin(table_id, now=now)
            if not body(change):
                return 0
            change.finish()
            return 1
    except RoundBroken as broken:
        return int(void_round(round_id=broken.round_id, reason=broken.reason))
    except ActionRefused as refused:
        logger.error("table %s: expiry refused: %s", table_id, refused)
        return 0
    except Exception:  # one table's failure must not stop the clock for every other table
        logger.exception("table %s: expiry failed", table_id)
        return 0


# --- seats --------------------------------------------------------------------------------------------------


def _sit(change: _Change, user, action: dict[str, Any]) -> None:
    table = change.table
    if not table.is_open:
        raise ActionRefused("table_closed", "This table is closed to new players.")
    number = action.get("seat")
    if type(number) is not int or not 1 <= number <= min(table.seats, MAX_SEATS):
        raise ActionRefused("bad_message", f"Choose a seat from 1 to {table.seats}.")
    seed = action.get("seed")
    if seed is not None and not is_player_seed(seed):
        raise ActionRefused(
            "bad_message", f"A seed is 1 to {MAX_PLAYER_SEED} letters, digits, '-', '_' or '.'."
        )
    seat = change.seats.get(number)
    if seat is None:
        seat = change.seats[number] = Seat.objects.create(table=table, number=number)
    if seat.user_id is not None:
        raise ActionRefused("seat_taken", f"Seat {number} is taken.")
    held = sum(1 for other in change.seats.values() if other.user_id == user.pk)
    if held >= table.seats_per_player:
        raise ActionRefused("illegal_action", f"You may hold at most {table.seats_per_player} seat(s) here.")
    seat.user = user
    seat.sat_down_at = change.now
    seat.missed_rounds = 0
    seat.sitting_out = False
    seat.ready = True
    seat.leaving_after_round = False
    seat.client_seed = seed if seed is not None else _new_client_seed()
    seat.disconnected_at = None
    change.lobby = True
    change.event(TableEvent.Kind.SEAT, f"{_name(user)} sits down at seat {number}.")
    if table.phase == Phase.WAITING:
        _open_round(change)
    elif table.phase == Phase.BETTING and change.in_round:
        _reseat_betting_round(change)


def _leave(change: _Change, user, action: dict[str, Any]) -> None:
    mine = [seat for seat in change.seats.values() if seat.user_id == user.pk]
    number = action.get("seat")
    if number is not None:
        mine = [seat for seat in mine if seat.number == number]
    if not mine:
        raise ActionRefused("illegal_action", "You are not seated here.")
    freed = False
    for seat in mine:
        if _has_stake(change, seat.number):
            if not seat.leaving_after_round:
                seat.leaving_after_round = True
                change.event(
                    TableEvent.Kind.SEAT, f"{_name(user)} will leave seat {seat.number} after this round."
                )
        else:
            _stand_up(change, seat, "leaves")
            freed = True
    if freed:
        _after_seats_freed(change)


def _ready(change: _Change, user, action: dict[str, Any]) -> None:
    mine = [seat for seat in change.seats.values() if seat.user_id == user.pk]
    if not mine:
        raise ActionRefused("illegal_action", "You are not seated here.")
    if change.table.phase not in (Phase.SETTLED, Phase.BETTING):
        raise ActionRefused("illegal_action", "There is nothing to get ready for now.")
    for seat in mine:
        seat.ready = True
        seat.sitting_out = False
    change.event(TableEvent.Kind.SEAT, f"{_name(user)} is ready.")
    if change.table.phase == Phase.SETTLED and _all_ready(change):
        _open_round(change)


def _stand_up(change: _Change, seat: Seat, verb: str) -> None:
    change.event(TableEvent.Kind.SEAT, f"{_name(seat.user)} {verb} seat {seat.number}.")
    seat.user = None
    seat.sat_down_at = None
    seat.missed_rounds = 0
    seat.sitting_out = False
    seat.ready = False
    seat.leaving_after_round = False
    seat.client_seed = ""
    seat.disconnected_at = None
    change.lobby = True


def _after_seats_freed(change: _Change) -> None:
    """Seats were freed outside play: reshape a betting round, or close the table's round loop if empty."""
    phase = change.table.phase
    if phase == Phase.BETTING and change.in_round:
        _reseat_betting_round(change)
        if change.in_round and _betting_complete(change):
            _close_betting(change, timed_out=False)
    elif phase == Phase.SETTLED:
        if not _occupied(change):
            _go_waiting(change)
        elif _all_ready(change):
            _open_round(change)


def _all_ready(change: _Change) -> bool:
    """The ready check can close: every seated player the table waits for (not sitting out) is ready, and
    there is at least one."""
    waited_for = [seat for seat in change.seats.values() if seat.user_id and not seat.sitting_out]
    return bool(waited_for) and all(seat.ready for seat in waited_for)


def _stand_up_absent(change: _Change, now: datetime) -> bool:
    if change.table.phase not in (Phase.WAITING, Phase.BETTING, Phase.SETTLED):
        return False
    gone = [
        seat
        for seat in change.seats.values()
        if seat.user_id and seat.disconnected_at and seat.disconnected_at <= now - DISCONNECT_GRACE
    ]
    gone = [seat for seat in gone if not _has_stake(change, seat.number)]
    for seat in gone:
        _stand_up(change, seat, "lost the connection and left")
    if gone:
        _after_seats_freed(change)
    return bool(gone)


def _occupied(change: _Change) -> list[int]:
    return sorted(number for number, seat in change.seats.items() if seat.user_id)


def _has_stake(change: _Change, number: int) -> bool:
    """The seat has chips in the round under way (it must stay until the round ends)."""
    if not change.in_round:
        return False
    seat_state = change.state.seats.get(number)
    return seat_state is not None and seat_state.stake > 0


# --- rounds -------------------------------------------------------------------------------------------------


def _open_round(change: _Change) -> None:
    """Start the next betting round for the seated players, or wait when nobody is seated."""
    table = change.table
    numbers = _occupied(change)
    if not numbers:
        _go_waiting(change)
        return
    rules = table.ruleset()
    shoe = Shoe.objects.filter(table=table, retired_at__isnull=True).order_by("-id").first()
    if shoe is not None and shoe.decks != rules.decks:
        _retire_shoe(change, shoe)
        shoe = None
    if shoe is None:
        shoe = _new_shoe(change, rules)
    last = Round.objects.filter(table=table).aggregate(last=Max("number"))["last"] or 0
    state = engine.new_round(
        rules=rules,
        shoe=round_order(shoe, shoe.position),
        position=shoe.position,
        seats=numbers,
        min_bet=table.min_bet,
        max_bet=table.max_bet,
    )
    change.save_round()
    rnd = Round.objects.create(
        table=table,
        number=last + 1,
        shoe=shoe,
        start_position=shoe.position,
        seats=numbers,
        state=_dump_state(state),
        rules=rules.to_dict(),
        min_bet=table.min_bet,
        max_bet=table.max_bet,
        phase=Phase.BETTING,
        started_at=change.now,
    )
    change.round = rnd
    change.state = state
    table.current_round = rnd
    table.phase = Phase.BETTING
    change.set_deadline(table.betting_seconds)
    for seat in change.seats.values():
        seat.ready = False
    change.event(
        TableEvent.Kind.ROUND, f"Round {rnd.number}: place your bets ({table.min_bet}-{table.max_bet})."
    )


def _go_waiting(change: _Change) -> None:
    change.table.phase = Phase.WAITING
    change.set_deadline(None)
    if change.in_round:
        _end_empty_round(change)


def _reseat_betting_round(change: _Change) -> None:
    """Rebuild the betting round for the seats occupied now (someone sat down or left before the deal),
    replaying the bets already placed."""
    numbers = _occupied(change)
    if not numbers:
        _go_waiting(change)
        return
    rnd = change.round
    change.send_writes()
    actions = list(ActionLog.objects.filter(round=rnd).order_by("seq").values_list("action", flat=True))
    try:
        change.state = engine.replay(
            RuleSet.from_dict(rnd.rules),
            change.state.shoe,
            rnd.start_position,
            numbers,
            rnd.min_bet,
            rnd.max_bet,
            actions,
        )
    except EngineError as exc:
        raise RoundBroken(rnd.pk, f"replay of the betting round failed: {exc}") from None
    rnd.seats = numbers


def _end_empty_round(change: _Change) -> None:
    """A round closes without a single bet: nothing was dealt and no chips moved."""
    rnd = change.round
    rnd.settled_at = change.now
    rnd.phase = Phase.SETTLED
    rnd.deadline = None
    rnd.results = {"seats": [], "empty": True}


def _new_shoe(change: _Change, rules: RuleSet) -> Shoe:
    """Shuffle the shoe whose server seed the table drew ahead (its hash shown since), with the client seed of
    the players seated now, and draw the next shoe's seed."""
    table = change.table
    seeds = [seat.client_seed for seat in change.seats.values() if seat.user_id and seat.client_seed]
    digests = seed_digests(seeds)
    shoe = Shoe.objects.create(
        table=table,
        server_seed=table.next_server_seed,
        seed_hash=seed_hash(table.next_server_seed),
        client_seed=client_seed_of(digests),
        seat_seeds=digests,
        decks=rules.decks,
        cut_index=cut_card_index(rules.decks, rules.penetration),
        created_at=change.now,
    )
    table.next_server_seed = new_server_seed()
    change.event(
        TableEvent.Kind.SHOE,
        f"New shoe of {_count(rules.decks, 'deck')}; seed hash {shoe.seed_hash[:16]}..., client seed "
        f"{shoe.client_seed[:16]}... from {_count(len(digests), 'player seed')}.",
    )
    return shoe


def _retire_shoe(change: _Change, shoe: Shoe) -> None:
    shoe.retired_at = change.now
    shoe.save(update_fields=["retired_at", "position"])
    change.event(
        TableEvent.Kind.SHOE, f"Shoe retired; its server seed is now revealed ({shoe.server_seed[:16]}...)."
    )


def _new_client_seed() -> str:
    """A seat's contribution to the next shoe's client seed (combined over the seated players), for a player
    who sat down without a seed of their own."""
    return secrets.token_hex(16)


def _shoe_order(shoe: Shoe) -> list[str]:
    """The shoe's card order, recomputed from its seeds. Server-side only: never send it, never store it.
    (Tests replace this function to script the cards; nothing a client sends can reach it.)"""
    return list(_order_of(shoe.server_seed, shoe.client_seed, shoe.decks, shoe.nonce))


@lru_cache(maxsize=512)
def _order_of(server_seed: str, client_seed: str, decks: int, nonce: int) -> tuple[str, ...]:
    """Every action loads its round, so the shuffle of a shoe in play is kept per process (keyed on all its
    seeds) instead of being recomputed each time."""
    return tuple(shuffled_shoe(server_seed=server_seed, client_seed=client_seed, decks=decks, nonce=nonce))


def round_order(shoe: Shoe, start: int) -> tuple[str, ...]:
    """The cards a round beginning at card `start` of `shoe` is dealt from: the shoe's order, then the
    discards reshuffled should the round run out (`tables.engine.shoe`, step 7). Server-side only, like the
    order."""
    return _round_order_of(tuple(_shoe_order(shoe)), start, shoe.server_seed, shoe.client_seed, shoe.nonce)


@lru_cache(maxsize=512)
def _round_order_of(
    order: tuple[str, ...], start: int, server_seed: str, client_seed: str, nonce: int
) -> tuple[str, ...]:
    return dealing_order(order, start, server_seed=server_seed, client_seed=client_seed, nonce=nonce)


def _dump_state(state: RoundState) -> dict[str, Any]:
    data = state.to_dict()
    del data["shoe"]  # the card order stays out of the database; it follows from the shoe's seeds
    return data


def _load_state(rnd: Round) -> RoundState:
    try:
        if not isinstance(rnd.state, dict):
            raise TypeError("the stored state is not an object")
        data = dict(rnd.state, shoe="".join(round_order(rnd.shoe, rnd.start_position)))
        state = RoundState.from_dict(data)
        if state.phase not in (Phase.BETTING, Phase.INSURANCE, Phase.PLAYING, Phase.SETTLED):
            raise ValueError(f"unknown phase {state.phase!r}")
        if state.phase == Phase.PLAYING and state.turn is None:
            raise ValueError("a playing round without a turn")
    except (EngineError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise RoundBroken(rnd.pk, f"stored state cannot be loaded: {exc}") from None
    return state


def _apply(change: _Change, action: dict[str, Any], *, user=None, seat: int | None = None) -> None:
    """Apply one engine action, move the chips its stakes changed, and log it."""
    before = {number: seat_state.stake for number, seat_state in change.state.seats.items()}
    try:
        new = engine.apply(change.state, action)
    except EngineError as exc:
        if exc.code == "shoe_exhausted":
            raise RoundBroken(change.round.pk, exc.message) from None
        raise ActionRefused(exc.code, exc.message) from None
    for number, seat_state in new.seats.items():
        delta = seat_state.stake - before.get(number, 0)
        if delta:
            _move_chips(change, number, delta)
    change.state = new
    change.log(action, user=user, seat=seat)


def _move_chips(change: _Change, number: int, delta: int) -> None:
    user = change.owner(number)
    refs = {"round_ref": change.round.pk, "table_ref": change.table.pk}
    if delta > 0:
        try:
            wallet.stake(user=user, amount=delta, memo=f"seat {number}", batch=change.writes, **refs)
        except wallet.InsufficientChips as exc:
            raise ActionRefused("insufficient_chips", exc.message) from None
    else:
        wallet.pay(
            user=user,
            amount=-delta,
            kind="refund",
            memo=f"seat {number}: bet lowered",
            batch=change.writes,
            **refs,
        )


def _after_engine(change: _Change) -> None:
    """Follow the engine's phase: set the window's deadline, or settle."""
    table = change.table
    phase = change.state.phase
    if phase == Phase.INSURANCE:
        if table.phase != Phase.INSURANCE:
            table.phase = Phase.INSURANCE
            change.set_deadline(table.insurance_seconds)
            change.event(TableEvent.Kind.DEALER, _window_text(change.state))
    elif phase == Phase.PLAYING:
        table.phase = Phase.PLAYING
        change.set_deadline(table.turn_seconds)
    elif phase == Phase.SETTLED:
        _settle(change)


def _window_text(state: RoundState) -> str:
    """What the decisions before the dealer's check are: insurance and even money against an ace, early
    surrender (where the rules have it) against an ace or a ten."""
    early = state.rules.surrender == "early"
    if state.dealer_cards[0][0] != "A":
        return "Dealer shows a ten: early surrender is offered."
    if early:
        return "Dealer shows an ace: insurance, even money and early surrender are offered."
    return "Dealer shows an ace: insurance and even money are offered."


# --- betting ------------------------------------------------------------------------------------------------


def _bet(change: _Change, user, action: dict[str, Any]) -> None:
    if change.table.phase != Phase.BETTING or not change.in_round:
        raise ActionRefused("illegal_action", "Bets are not open now.")
    number = _own_round_seat(change, user, action.get("seat"), prefer=lambda s: s.bet == 0)
    amount = action.get("amount")
    _apply(change, {"action": "bet", "seat": number, "amount": amount}, user=user, seat=number)
    seat = change.seats[number]
    seat.sitting_out = False
    change.event(TableEvent.Kind.BET, f"{_name(user)} bets {amount:,} on seat {number}.")
    if _betting_complete(change):
        _close_betting(change, timed_out=False)


def _betting_complete(change: _Change) -> bool:
    """Someone has bet and every seated player the table waits for (not sitting out) has bet."""
    bets = change.state.seats
    if not any(seat_state.bet for seat_state in bets.values()):
        return False
    return all(bets[n].bet or change.seats[n].sitting_out for n in _occupied(change) if n in bets)


def _close_betting(change: _Change, *, timed_out: bool) -> None:
    """Deal (seats without a bet sit out), or end the round empty when nobody bet.

    A seat that missed the window counts a missed round and, if others did bet, sits out: later betting
    windows and ready checks do not wait for it until its player bets or says ready. When nobody bet, the
    table waited for everyone alike, so nobody is marked sitting out (the next window waits for all again)."""
    bettors = {n for n, seat_state in change.state.seats.items() if seat_state.bet}
    for number in _occupied(change):
        seat = change.seats[number]
        if number in bettors:
            seat.missed_rounds = 0
            continue
        if number not in change.state.seats:
            continue
        seat.missed_rounds += 1
        seat.sitting_out = seat.sitting_out or bool(bettors)
        if seat.missed_rounds >= MAX_MISSED_ROUNDS:
            _stand_up(change, seat, f"missed {MAX_MISSED_ROUNDS} rounds and leaves")
        elif timed_out and bettors:
            change.event(TableEvent.Kind.TIMEOUT, f"{_name(seat.user)} sits out this round (seat {number}).")
    if not bettors:
        _end_empty_round(change)
        change.event(TableEvent.Kind.ROUND, f"Round {change.round.number}: no bets.")
        _open_round(change)
        return
    _apply(change, {"action": "timeout" if timed_out else "deal"})
    up = change.state.dealer_cards[0]
    change.event(TableEvent.Kind.DEAL, f"Cards are dealt. Dealer shows {_rank(up)}.")
    for number, seat_state in change.state.seats.items():
        if seat_state.hands and seat_state.hands[0].status == "blackjack":
            change.event(
                TableEvent.Kind.DEAL, f"{_name(change.owner(number))} has blackjack (seat {number})."
            )
    _after_engine(change)


# --- insurance and play -------------------------------------------------------------------------------------


def _answer(change: _Change, user, action: dict[str, Any]) -> None:
    """insurance / even_money (and early surrender in the insurance window) for one or all of your seats."""
    name = action["action"]
    if change.table.phase != Phase.INSURANCE or not change.in_round:
        raise ActionRefused("illegal_action", f"No {name.replace('_', ' ')} decision is open.")
    explicit = action.get("seat")
    if explicit is not None:
        _check_owner(change, user, explicit)
        numbers = [explicit]
    else:
        numbers = [
            n
            for n, seat_state in change.state.seats.items()
            if change.seats.get(n) and change.seats[n].user_id == user.pk and name in seat_state.offers
        ]
        if not numbers:
            raise ActionRefused("illegal_action", f"You have no open {name.replace('_', ' ')} decision.")
    for number in numbers:
        engine_action = {"action": name, "seat": number}
        if "accept" in action and action["accept"] is not None:
            engine_action["accept"] = action["accept"]
        _apply(change, engine_action, user=user, seat=number)
        accepted = engine_action.get("accept", name == "surrender")
        verb = {"insurance": "insurance", "even_money": "even money", "surrender": "early surrender"}[name]
        taken = "takes" if accepted else "declines"
        change.event(TableEvent.Kind.ACTION, f"{_name(user)} {taken} {verb} (seat {number}).")
    _after_engine(change)


def _play(change: _Change, user, action: dict[str, Any]) -> None:
    name = action["action"]
    if name == "surrender" and change.table.phase == Phase.INSURANCE:
        _answer(change, user, action)
        return
    if change.table.phase != Phase.PLAYING or not change.in_round:
        raise ActionRefused("illegal_action", f"You cannot {name} now.")
    if action.get("accept") is False:
        raise ActionRefused("illegal_action", "There is no early surrender offer to decline now.")
    number = action.get("seat")
    turn = change.state.turn
    if number is None:
        mine = {seat.number for seat in change.seats.values() if seat.user_id == user.pk}
        if turn is None or turn[0] not in mine:
            raise ActionRefused("not_your_turn", "It is not your turn.")
        number = turn[0]
    else:
        _check_owner(change, user, number)
    engine_action = {"action": name, "seat": number}
    if action.get("hand") is not None:
        engine_action["hand"] = action["hand"]
    hand_index = engine_action.get("hand", turn[1] if turn and turn[0] == number else 0)
    before = _hand_cards(change.state, number, hand_index)
    _apply(change, engine_action, user=user, seat=number)
    change.event(TableEvent.Kind.ACTION, _play_text(change, user, name, number, hand_index, before))
    _after_engine(change)


def _expire_deadline(change: _Change, version: int, now: datetime) -> bool:
    table = change.table
    if table.version != version or table.deadline is None or table.deadline > now:
        return False  # applied already, or the deadline moved: this expiry is not due any more
    phase = table.phase
    if phase == Phase.BETTING and change.in_round:
        change.event(TableEvent.Kind.TIMEOUT, "Betting time is over.")
        _close_betting(change, timed_out=True)
    elif phase in (Phase.INSURANCE, Phase.PLAYING) and change.in_round:
        turn = change.state.turn
        if phase == Phase.INSURANCE:
            change.event(TableEvent.Kind.TIMEOUT, "Insurance time is over: open offers are declined.")
        elif turn is not None:
            who = _name(change.owner(turn[0]))
            change.event(TableEvent.Kind.TIMEOUT, f"{who} ran out of time and stands (seat {turn[0]}).")
        _apply(change, {"action": "timeout"})
        _after_engine(change)
    elif phase == Phase.SETTLED:
        for seat in change.seats.values():
            if seat.user_id and not seat.ready:
                seat.sitting_out = True
        _open_round(change)
    else:
        change.set_deadline(None)  # a deadline without a window to close: drop it
    return True


# --- settlement ---------------------------------------------------------------------------------------------


def _settle(change: _Change) -> None:
    """Pay the settled round, record its results, retire the shoe at the cut card, free leaving seats and open
    the ready window (or wait, if nobody is left)."""
    table, rnd, state = change.table, change.round, change.state
    refs = {"round_ref": rnd.pk, "table_ref": table.pk}
    dealer_total, _ = hand_value(state.dealer_cards)
    dealer_text = "blackjack" if _is_blackjack(state.dealer_cards) else str(dealer_total)
    if dealer_total > 21:
        change.event(TableEvent.Kind.DEALER, f"Dealer busts with {dealer_total}.")
    else:
        change.event(TableEvent.Kind.DEALER, f"Dealer has {dealer_text}.")
    results, payments = [], []
    for number, seat_state in state.seats.items():
        if not seat_state.stake:
            continue
        user = change.owner(number)
        if seat_state.returned:
            pushes = all(hand.result == "push" for hand in seat_state.hands) and not seat_state.insurance
            kind = "refund" if pushes else "payout"
            payments.append(wallet.Payment(user, seat_state.returned, kind, f"seat {number}"))
        net = seat_state.returned - seat_state.stake
        results.append(
            {
                "seat": number,
                "user_id": user.pk,
                "username": user.username,
                "stake": seat_state.stake,
                "returned": seat_state.returned,
                "net": net,
                "insurance": seat_state.insurance,
                "hands": [
                    {"cards": hand.cards, "bet": hand.bet, "result": hand.result, "payout": hand.payout}
                    for hand in seat_state.hands
                ],
            }
        )
        change.event(TableEvent.Kind.RESULT, _result_text(user, number, seat_state, net))
    wallet.pay_many(payments=payments, batch=change.writes, **refs)
    rnd.results = {"seats": results, "dealer": {"cards": state.dealer_cards, "total": dealer_total}}
    rnd.settled_at = change.now
    rnd.phase = Phase.SETTLED
    rnd.deadline = None
    # Its writes go with the change's last ones; it sends the round's last action log first, to replay it.
    history.record_round(round=rnd, state=state, batch=change.writes)
    shoe = rnd.shoe
    shoe.position = state.position
    shoe_cards = len(state.shoe) - state.start_position  # the rest of `state.shoe` is the reshuffled discards
    if shoe.cut_index is None or shoe.position >= min(shoe.cut_index, shoe_cards):
        _retire_shoe(change, shoe)
    else:
        shoe.save(update_fields=["position"])
    _free_seats_after_round(change, state.seats)
    if _occupied(change):
        table.phase = Phase.SETTLED
        change.set_deadline(table.ready_seconds)
    else:
        _go_waiting(change)


def _free_seats_after_round(change: _Change, played: Iterable[int]) -> None:
    """A round is over (settled or voided): free the seats of players leaving after it (who asked to, were
    suspended, or whose table closed) and of those whose connection is gone; ask its other players again
    whether they are ready (newcomers since the deal stay ready)."""
    played = set(played)
    for seat in change.seats.values():
        if not seat.user_id:
            continue
        gone = seat.disconnected_at is not None and seat.disconnected_at <= change.now - DISCONNECT_GRACE
        if seat.leaving_after_round:
            _stand_up(change, seat, "leaves")
        elif gone:
            _stand_up(change, seat, "lost the connection and left")
        elif seat.number in played:
            seat.ready = False


# --- helpers ------------------------------------------------------------------------------------------------


def _barred(change: _Change, user) -> bool:
    """Is the account suspended or deactivated (an open websocket outlives both)? A seated player's row came
    with the seats, read under the table's lock; anyone else's is read."""
    for seat in change.seats.values():
        if seat.user_id == user.pk:
            return seat.user.suspended or not seat.user.is_active
    return bool(_BARRED.rows(user.pk))


def _own_round_seat(change: _Change, user, explicit: int | None, prefer) -> int:
    """The seat the user acts for: `explicit` if it is theirs, else their first seat in the round matching
    `prefer`, else their first seat in the round."""
    if explicit is not None:
        _check_owner(change, user, explicit)
        return explicit
    mine = [
        n for n in sorted(change.state.seats) if change.seats.get(n) and change.seats[n].user_id == user.pk
    ]
    if not mine:
        if any(seat.user_id == user.pk for seat in change.seats.values()):
            raise ActionRefused("illegal_action", "You join the next round.")
        raise ActionRefused("not_your_turn", "Take a seat to play.")
    preferred = [n for n in mine if prefer(change.state.seats[n])]
    return (preferred or mine)[0]


def _check_owner(change: _Change, user, number) -> None:
    """`number` is the user's seat and plays in the round under way."""
    seat = change.seats.get(number) if type(number) is int else None
    if seat is None or seat.user_id != user.pk:
        raise ActionRefused("not_your_turn", f"Seat {number} is not yours.")
    if change.in_round and number not in change.state.seats:
        raise ActionRefused("not_your_turn", f"Seat {number} joins the next round.")


def _hand_cards(state: RoundState, number: int, index) -> list[str]:
    seat_state = state.seats.get(number)
    if seat_state is None or type(index) is not int or not 0 <= index < len(seat_state.hands):
        return []
    return list(seat_state.hands[index].cards)


def _play_text(change: _Change, user, name: str, number: int, index: int, before: list[str]) -> str:
    who = _name(user)
    hands = change.state.seats[number].hands
    hand = hands[index] if 0 <= index < len(hands) else None
    total = hand.total if hand is not None else 0
    new_cards = hand.cards[len(before) :] if hand is not None else []
    drawn = f" {' '.join(new_cards)}" if new_cards else ""
    if name == "hit":
        text = f"{who} hits:{drawn}, {total}"
    elif name == "double":
        text = f"{who} doubles on {hand_value(before)[0]}:{drawn}, {total}"
    elif name == "split":
        # "splits a pair of kings", not "splits Ks": that would read as the king of spades. A king and a queen
        # are no pair of anything: two tens.
        if len(before) == 2 and before[0][0] == before[1][0]:
            text = f"{who} splits a pair of {_RANK_NAMES[before[0][0]]}"
        else:
            text = f"{who} splits two tens" if before else f"{who} splits"
    elif name == "surrender":
        return f"{who} surrenders (seat {number})."
    else:
        text = f"{who} stands on {hand_value(before)[0]}"
    if hand is not None and hand.status == "bust":
        text += " - bust"
    return f"{text} (seat {number})."


def _result_text(user, number: int, seat_state, net: int) -> str:
    """ "Ann wins 150 (blackjack, seat 1)."; insurance, a side bet, is named with what it did."""
    results = [hand.result or "" for hand in seat_state.hands]
    if seat_state.insurance:
        paid = f"pays {seat_state.insurance_payout:,}" if seat_state.insurance_payout else "lost"
        results.append(f"insurance {paid}")
    details = f"({', '.join(results)}, seat {number})"
    if net > 0:
        return f"{_name(user)} wins {net:,} {details}."
    if net < 0:
        return f"{_name(user)} loses {-net:,} {details}."
    return f"{_name(user)} breaks even {details}."


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _is_blackjack(cards: list[str]) -> bool:
    return len(cards) == 2 and hand_value(cards)[0] == 21


_RANK_NAMES = {
    "A": "aces", "2": "twos", "3": "threes", "4": "fours", "5": "fives", "6": "sixes", "7": "sevens",
    "8": "eights", "9": "nines", "T": "tens", "J": "jacks", "Q": "queens", "K": "kings",
}  # fmt: skip


def _rank(card: str) -> str:
    return {"A": "A", "T": "10", "J": "J", "Q": "Q", "K": "K"}.get(card[0], card[0])


def _name(user) -> str:
    if user is None:
        return "A player"
    return getattr(user, "public_name", None) or user.username


def _find_preset(preset) -> RulePreset | None:
    if isinstance(preset, RulePreset):
        return preset
    if isinstance(preset, int) and not isinstance(preset, bool):
        return RulePreset.objects.filter(pk=preset).first()
    if isinstance(preset, str):
        return RulePreset.objects.filter(name=preset).first()
    return None


def _user_model():
    from django.contrib.auth import get_user_model

    return get_user_model()


_HANDLERS = {
    "sit": _sit,
    "leave": _leave,
    "ready": _ready,
    "bet": _bet,
    "insurance": _answer,
    "even_money": _answer,
    "hit": _play,
    "stand": _play,
    "double": _play,
    "split": _play,
    "surrender": _play,
}
