"""The only code that writes money.

Every function is keyword-only and runs in `transaction.atomic`, so it can be called on its own or inside a
caller's transaction (a bet debit together with the round's state change); a refused call raises and leaves
nothing behind.

Every movement is double entry: two ledger rows with the same transfer id, one on the player's wallet and
one on the other side: the table's float for play at a table (`game` and `table_ref`: each game's tables have
floats of their own), the house for play elsewhere, the issuer for granted chips. A float is the house's
money at one table, so that tables never contend on one row: it is funded from the house and swept back to it
(`set_float`), and a payment it cannot cover tops it up from the house in the same transaction first
(`_cover`). The sum of all balances stays exactly zero.

Locking: each movement updates the other side's row first and the player's row second; a float's row is
locked before the house's. Updating a row locks it until the transaction ends (PostgreSQL), so the order is
the same everywhere and a transaction that moves chips for several players cannot deadlock with another one.
Debits are conditional updates (`balance >= amount`, for players and floats), correct on SQLite and PostgreSQL
alike; the balances written into `balance_after` are the ones the updates return (`UPDATE ... RETURNING`),
while the rows are still locked. On SQLite, IMMEDIATE transactions (settings) serialise writers instead.
"""

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext

from accounts import selectors, sockets
from accounts.models import LedgerEntry, Wallet
from storage.batch import Batch, ModelStatement, Statement, returning, returning_together

# No single movement is anywhere near this; it keeps every sum far inside a 64-bit integer.
MAX_AMOUNT = 10**12


class WalletError(Exception):
    """A refused money operation. `code` is machine-readable, `message` is for people."""

    code = "wallet_error"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class InvalidAmount(WalletError):
    code = "bad_amount"


class InsufficientChips(WalletError):
    code = "insufficient_chips"

    def __init__(self, *, balance: int, needed: int):
        super().__init__(f"Not enough chips: this needs {needed:,} and the balance is {balance:,}.")
        self.balance = balance
        self.needed = needed


class NoWallet(WalletError):
    code = "no_wallet"


class DailyGrantRefused(WalletError):
    code = "grant_refused"

    def __init__(self, message: str, *, code: str, next_claim_at: datetime | None = None):
        super().__init__(message, code=code)
        self.next_claim_at = next_claim_at


def check_amount(amount) -> int:
    """Return `amount` if it is a positive whole number of chips, else raise InvalidAmount."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidAmount(f"An amount of chips must be a whole number, not {type(amount).__name__}.")
    if amount <= 0:
        raise InvalidAmount("An amount of chips must be greater than zero.")
    if amount > MAX_AMOUNT:
        raise InvalidAmount(f"An amount of chips cannot exceed {MAX_AMOUNT:,}.")
    return amount


def _check_ref(name: str, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise WalletError(f"{name} must be an integer id or None.", code="bad_reference")


def _check_table(game, table_ref) -> None:
    """A table is named by its game and its id together (each game numbers its tables from 1)."""
    _check_ref("table_ref", table_ref)
    if table_ref is None:
        if game is not None:
            raise WalletError("A game's chips move at one of its tables.", code="bad_reference")
        return
    if not isinstance(game, str) or not game.isidentifier() or len(game) > Wallet.GAME_MAX_LENGTH:
        raise WalletError("A table is named by its game (a short name) and its id.", code="bad_reference")


def _check_memo(memo) -> None:
    if not isinstance(memo, str) or len(memo) > LedgerEntry.MEMO_MAX_LENGTH:
        raise WalletError(
            f"A memo is text of at most {LedgerEntry.MEMO_MAX_LENGTH} characters.", code="bad_memo"
        )


def _create_system_wallet(kind: str) -> None:
    """Create the house or issuer wallet if it is missing.

    A data migration creates both; this puts them back after a test database flush (transactional tests),
    which removes migration data.
    """
    try:
        with transaction.atomic():
            Wallet.objects.create(kind=kind)
    except IntegrityError:
        pass  # created at the same moment by another transaction: the unique constraint kept it single


def _update_system_wallet(kind: str, delta: int) -> tuple[int, int]:
    """Add `delta` to the house's or the issuer's balance (creating the wallet if it is missing); its id and
    new balance."""
    rows = _add_to_system_wallet(kind, delta)
    if not rows:
        _create_system_wallet(kind)
        rows = _add_to_system_wallet(kind, delta)
    return rows[0]


class _Side(NamedTuple):
    """The other side of a player's movement: a system wallet (`kind` house or issuer), or the float of the
    table `table_ref` of `game`, which a payment it cannot cover tops up from the house to `target` chips
    beyond the payment (`_cover`)."""

    kind: str
    game: str = ""
    table_ref: int | None = None
    target: int = 0

    @property
    def is_float(self) -> bool:
        return self.kind == Wallet.Kind.FLOAT


def _play_side(game, table_ref, float_target) -> _Side:
    """Chips played at a table move against its float; chips played nowhere in particular, the house's."""
    _check_table(game, table_ref)
    if table_ref is None:
        return _Side(Wallet.Kind.HOUSE)
    if isinstance(float_target, bool) or not isinstance(float_target, int) or float_target < 0:
        raise WalletError("A float's target is a whole number of chips, zero or more.", code="bad_amount")
    return _Side(Wallet.Kind.FLOAT, game, table_ref, float_target)


# The statements of every movement, plain SQL (a table action moves chips often: compiling a queryset for each
# would cost more CPU than running it). Each returns the id and new balance of every row it changed, so no
# movement reads the balances again. `Statement` is the SQL and its parameters.
_WALLETS = Wallet._meta.db_table


def _add_to_system_wallet(kind: str, delta: int) -> list[tuple[int, int]]:
    return returning(*_system_addition(kind, delta))


def _system_addition(kind: str, delta: int) -> Statement:
    return _balance_addition(_is_system_wallet(kind), [delta])


def _side_addition(side: _Side, delta: int) -> Statement:
    """Add `delta` to the side's wallet; a float only while it covers a debit (one row changed, or none: the
    float is missing or short)."""
    if not side.is_float:
        return _system_addition(side.kind, delta)
    return _balance_addition(_IS_FLOAT, [delta, side.game, side.table_ref, max(0, -delta)])


#: The condition selecting a table's float (parameters: the game and the table's id), then `balance >= %s`;
#: the kind is written out for the partial unique index of the floats (see `_is_system_wallet`).
_IS_FLOAT = "kind = 'float' AND game = %s AND table_ref = %s AND balance >= %s"


def _side_exists(side: _Side) -> str:
    """The condition that the side's wallet exists (a float's: parameters the game and the table's id)."""
    if side.is_float:
        return f"EXISTS (SELECT 1 FROM {_WALLETS} WHERE kind = 'float' AND game = %s AND table_ref = %s)"
    return f"EXISTS (SELECT 1 FROM {_WALLETS} WHERE {_is_system_wallet(side.kind)})"


def _side_params(side: _Side | None) -> list:
    return [side.game, side.table_ref] if side is not None and side.is_float else []


def _system_kind(kind: str) -> str:
    """A system wallet's kind, checked: it is written into the statements below."""
    kind = Wallet.Kind(kind).value
    if kind in (Wallet.Kind.PLAYER, Wallet.Kind.FLOAT):
        raise ValueError(f"a {kind} wallet is no system wallet")
    return kind


def _is_system_wallet(kind: str) -> str:
    """The condition selecting the `kind` system wallet, its kind written out: PostgreSQL finds that row
    through the partial unique index of the system wallets only when it sees the kind, which it cannot see
    of a parameter in a prepared statement's generic plan (it scanned every wallet)."""
    return f"kind = '{_system_kind(kind)}'"


def _add_to_player_wallet(user_id: int, delta: int) -> list[tuple[int, int]]:
    return returning(*_player_addition(user_id, delta))


def _player_addition(user_id: int, delta: int, *, guard: _Side | None = None) -> Statement:
    """Credit, or debit only while the balance covers it (one row changed, or none); with `guard`, only if
    that side's wallet exists (sent after its update, in one round trip: see `_move`)."""
    where = "user_id = %s AND kind = %s AND balance >= %s"
    params = [delta, user_id, Wallet.Kind.PLAYER.value, max(0, -delta)]
    if guard is None:
        return _balance_addition(where, params)
    return _balance_addition(f"{where} AND {_side_exists(guard)}", [*params, *_side_params(guard)])


def _balance_addition(where: str, params: list) -> Statement:
    """The statement adding `params[0]` to the balance of the wallet rows `where` selects and returning
    (id, new balance) of each."""
    return f"UPDATE {_WALLETS} SET balance = balance + %s WHERE {where} RETURNING id, balance", params


def _lock_system_wallet(kind: str) -> None:
    """Lock the row until the transaction ends (PostgreSQL; SQLite's IMMEDIATE transactions already
    serialise writers)."""
    locked = Wallet.objects.select_for_update().filter(kind=kind).values_list("pk", flat=True)
    if not list(locked):
        _create_system_wallet(kind)
        list(locked.all())


def _locked_float(game: str, table_ref: int) -> tuple[int, int]:
    """Lock the table's float (creating it, empty, if it is missing): its id and balance."""
    floats = Wallet.objects.select_for_update().filter(kind=Wallet.Kind.FLOAT, game=game, table_ref=table_ref)
    row = floats.values_list("pk", "balance").first()
    if row is None:
        try:
            with transaction.atomic():
                Wallet.objects.create(kind=Wallet.Kind.FLOAT, game=game, table_ref=table_ref)
        except IntegrityError:
            pass  # created at the same moment by another transaction
        row = floats.values_list("pk", "balance").first()
    return row


def _cover(side: _Side, delta: int, *, batch: Batch | None) -> tuple[int, int]:
    """Add `delta` to the side's wallet after the movement's first statement changed nothing there: the
    wallet is missing (a float not yet used, a test database flushed) and is created, or the float cannot
    cover a payment and is topped up from the house first (to `side.target` chips beyond it, in the same
    transaction, so that a settlement is never refused for the house's chips). Its id and new balance."""
    if not side.is_float:
        return _update_system_wallet(side.kind, delta)
    _pk, balance = _locked_float(side.game, side.table_ref)
    if balance + delta < 0:
        wanted = side.target - (balance + delta)
        _float_transfer(side._replace(target=0), wanted, memo="Top-up for a payment", batch=batch)
    return returning(*_side_addition(side, delta))[0]


def _float_transfer(side: _Side, amount: int, *, memo: str, batch: Batch | None) -> None:
    """Move `amount` chips from the house into the float `side` (negative: back to the house), whose row the
    caller has locked and which covers a negative amount: two ledger rows of kind "float". The float's row is
    locked before the house's, as every movement of a float does."""
    float_pk, float_balance = returning(*_side_addition(side, amount))[0]
    house_pk, house_balance = _update_system_wallet(Wallet.Kind.HOUSE, -amount)
    common = {
        "transfer": uuid.uuid4(),
        "kind": LedgerEntry.Kind.FLOAT,
        "game": side.game,
        "table_ref": side.table_ref,
        "memo": memo,
        "created_at": timezone.now(),
    }
    entries = [
        LedgerEntry(wallet_id=float_pk, amount=amount, balance_after=float_balance, **common),
        LedgerEntry(wallet_id=house_pk, amount=-amount, balance_after=house_balance, **common),
    ]
    _insert_entries(entries, batch)


def set_float(*, game: str, table_ref: int, chips: int, memo: str) -> int:
    """Move chips between the house and the float of `game`'s table `table_ref` so that the float holds
    `chips` (0: sweep it all back to the house), creating the float if it is missing. Returns the chips moved
    into the float (negative: swept out of it). Its own transaction, short: the float's row is locked, then
    the house's."""
    _check_table(game, table_ref)
    if table_ref is None:
        raise WalletError("A float belongs to a table.", code="bad_reference")
    if isinstance(chips, bool) or not isinstance(chips, int) or not 0 <= chips <= MAX_AMOUNT:
        raise InvalidAmount(f"A float holds 0 to {MAX_AMOUNT:,} chips.")
    _check_memo(memo)
    with transaction.atomic():
        _pk, balance = _locked_float(game, table_ref)
        if chips != balance:
            _float_transfer(_Side(Wallet.Kind.FLOAT, game, table_ref), chips - balance, memo=memo, batch=None)
        return chips - balance


def _move(
    *,
    user,
    side: _Side,
    player_delta: int,
    kind: str,
    round_ref: int | None = None,
    table_ref: int | None = None,
    memo: str = "",
    created_by=None,
    batch: Batch | None = None,
) -> LedgerEntry:
    """Move `player_delta` chips into (positive) or out of (negative) the player's wallet, against `side`.

    Must run inside an atomic block; returns the player's ledger entry. With `batch` (of the same
    transaction), the ledger rows wait there to be written with the caller's other writes, and the entry
    returned has no id.
    """
    # The side's row first, then the player's (the lock order of every movement), in one round trip.
    side_rows, player_rows = returning_together(
        _side_addition(side, -player_delta), _player_addition(user.pk, player_delta, guard=side)
    )
    if not side_rows:
        # The side's wallet is missing (the player's row was left alone) or is a float short of a payment
        # (the player was credited: undone here, this transaction holds the row); then the slow way.
        if player_rows:
            _add_to_player_wallet(user.pk, -player_delta)
        side_rows = [_cover(side, -player_delta, batch=batch)]
        player_rows = _add_to_player_wallet(user.pk, player_delta)
    side_pk, side_balance = side_rows[0]
    if not player_rows:
        # Undo the side's change: this transaction holds its row, so this restores it exactly, and a refusal
        # leaves nothing behind without a savepoint.
        returning(*_side_addition(side, player_delta))
        balance = Wallet.objects.filter(user=user).values_list("balance", flat=True).first()
        if balance is None:
            raise NoWallet(f"User {user.pk} has no wallet.")
        raise InsufficientChips(balance=balance, needed=-player_delta)

    ((player_pk, player_balance),) = player_rows
    transfer = uuid.uuid4()
    now = timezone.now()
    common = {
        "transfer": transfer,
        "kind": kind,
        "round_ref": round_ref,
        "game": side.game,
        "table_ref": table_ref,
        "memo": memo,
        "created_by": created_by,
        "created_at": now,
    }
    player_entry = LedgerEntry(
        wallet_id=player_pk, amount=player_delta, balance_after=player_balance, **common
    )
    side_entry = LedgerEntry(wallet_id=side_pk, amount=-player_delta, balance_after=side_balance, **common)
    _insert_entries([player_entry, side_entry], batch)
    return player_entry


_INSERT_ENTRY = ModelStatement(
    LedgerEntry,
    [field.name for field in LedgerEntry._meta.concrete_fields if not field.primary_key],
    "INSERT INTO {table} ({columns}) VALUES {row}",
)


def _insert_entries(entries: list[LedgerEntry], batch: Batch | None) -> None:
    """Write ledger rows in one statement: at once, their ids set (`bulk_create`), or with `batch` as plain
    SQL waiting there (their ids stay unset)."""
    if batch is None:
        LedgerEntry.objects.bulk_create(entries)
        return
    params = [param for entry in entries for param in _INSERT_ENTRY.of(entry)]
    batch.add(_INSERT_ENTRY.rows(len(entries)), params)


def open_wallet(*, user) -> Wallet:
    """Give `user` a wallet holding STARTING_CHIPS, granted from the issuer. Idempotent: an existing wallet is
    returned unchanged, without a second grant."""
    with transaction.atomic():
        wallet, created = Wallet.objects.get_or_create(user=user, defaults={"kind": Wallet.Kind.PLAYER})
        if created:
            _move(
                user=user,
                side=_Side(Wallet.Kind.ISSUER),
                player_delta=check_amount(settings.STARTING_CHIPS),
                kind=LedgerEntry.Kind.GRANT,
                memo="Welcome grant",
            )
            wallet.refresh_from_db(fields=["balance"])
        return wallet


def stake(
    *,
    user,
    amount,
    round_ref=None,
    game=None,
    table_ref=None,
    memo="",
    float_target: int = 0,
    batch: Batch | None = None,
) -> LedgerEntry:
    """Take `amount` chips from the player for a bet: into the float of `game`'s table `table_ref`, or the
    house's without a table. Raises InsufficientChips when the balance is too low, InvalidAmount for anything
    but a positive int. Returns the player's ledger entry (`float_target`: see `pay`; `batch`: see
    `_move`)."""
    check_amount(amount)
    return _play_movement(
        user=user,
        player_delta=-amount,
        kind=LedgerEntry.Kind.BET,
        round_ref=round_ref,
        game=game,
        table_ref=table_ref,
        memo=memo,
        float_target=float_target,
        batch=batch,
    )


def pay(
    *,
    user,
    amount,
    kind="payout",
    round_ref=None,
    game=None,
    table_ref=None,
    memo="",
    float_target: int = 0,
    batch: Batch | None = None,
) -> LedgerEntry:
    """Give the player `amount` chips from the float of `game`'s table `table_ref` (from the house without a
    table): `kind` is "payout" (winnings with the returned stake) or "refund" (a bet given back, e.g. a push
    or a cancelled round). A float that cannot cover it is first topped up from the house, to `float_target`
    chips beyond the payment. Returns the player's ledger entry (`batch`: see `_move`)."""
    check_amount(amount)
    if kind not in (LedgerEntry.Kind.PAYOUT, LedgerEntry.Kind.REFUND):
        raise WalletError(f"A payment is a payout or a refund, not {kind!r}.", code="bad_kind")
    return _play_movement(
        user=user,
        player_delta=amount,
        kind=kind,
        round_ref=round_ref,
        game=game,
        table_ref=table_ref,
        memo=memo,
        float_target=float_target,
        batch=batch,
    )


class Payment(NamedTuple):
    """One payment of `pay_many`: what `pay` takes, for one player."""

    user: object
    amount: int
    kind: str = "payout"
    memo: str = ""


def pay_many(
    *,
    payments: Sequence[Payment],
    round_ref=None,
    game=None,
    table_ref=None,
    float_target: int = 0,
    batch: Batch | None = None,
) -> list[LedgerEntry]:
    """Make several payments from the table's float (or the house) at once (a round's settlement): the same
    ledger rows, in the same order, as calling `pay` for each, in three statements however many there are
    (the float's row and every player row in one update, sent together, then the entries; the updates return
    the new balances). Everything is checked before anything is written; a user without a wallet is refused
    (`NoWallet`) and nothing is left behind but a top-up of the float. Returns the players' entries, in the
    order of `payments` (`float_target`: see `pay`; `batch`: see `_move`)."""
    _check_ref("round_ref", round_ref)
    side = _play_side(game, table_ref, float_target)
    for payment in payments:
        check_amount(payment.amount)
        if payment.kind not in (LedgerEntry.Kind.PAYOUT, LedgerEntry.Kind.REFUND):
            raise WalletError(f"A payment is a payout or a refund, not {payment.kind!r}.", code="bad_kind")
        _check_memo(payment.memo)
    if not payments:
        return []
    deltas: dict[int, int] = {}
    for payment in payments:
        deltas[payment.user.pk] = deltas.get(payment.user.pk, 0) + payment.amount
    total = sum(deltas.values())
    # No savepoint, as in `_play_movement`: a refusal undoes its own writes and is raised outside the block.
    with transaction.atomic(savepoint=False):
        # The side first, then the players, as every movement locks them (no deadlock).
        side_rows, players = returning_together(
            _side_addition(side, -total), _players_credit(deltas, guard=side)
        )
        if side_rows:
            paid_from = side_rows[0]
        else:  # the side is missing or a float short of the payments: as in `_move`
            if players:
                _credit_players({user_id: -delta for user_id, delta in deltas.items()})
            paid_from = _cover(side, -total, batch=batch)
            players = _credit_players(deltas)
        if len(players) != len(deltas):
            # Undo both sides (this transaction holds the rows, so exactly), then name who has no wallet.
            _credit_players({user_id: -delta for user_id, delta in deltas.items()})
            returning(*_side_addition(side, total))
            held = set(Wallet.objects.filter(user_id__in=deltas).values_list("user_id", flat=True))
            missing = min(set(deltas) - held)
        else:
            return _write_payments(
                payments,
                paid_from,
                players,
                deltas,
                total,
                round_ref=round_ref,
                side=side,
                batch=batch,
            )
    raise NoWallet(f"User {missing} has no wallet.")


def _write_payments(
    payments,
    paid_from: tuple[int, int],
    players: list[tuple[int, int, int]],
    deltas: dict[int, int],
    total: int,
    *,
    round_ref,
    side: _Side,
    batch: Batch | None,
) -> list[LedgerEntry]:
    """The ledger rows of `pay_many`, once the balances have moved (`paid_from` is the id and balance of the
    wallet paying, `players` each credited wallet's id, user id and balance)."""
    # The balances before these payments, walked forward entry by entry below.
    payer_pk = paid_from[0]
    balances = {payer_pk: paid_from[1] + total}
    wallets = {}
    for pk, user_id, balance in players:
        wallets[user_id] = pk
        balances[pk] = balance - deltas[user_id]
    now = timezone.now()
    entries = []
    for payment in payments:
        common = {
            "transfer": uuid.uuid4(),
            "kind": payment.kind,
            "round_ref": round_ref,
            "game": side.game,
            "table_ref": side.table_ref,
            "memo": payment.memo,
            "created_at": now,
        }
        player_pk = wallets[payment.user.pk]
        balances[player_pk] += payment.amount
        balances[payer_pk] -= payment.amount
        entries.append(
            LedgerEntry(
                wallet_id=player_pk, amount=payment.amount, balance_after=balances[player_pk], **common
            )
        )
        entries.append(
            LedgerEntry(
                wallet_id=payer_pk, amount=-payment.amount, balance_after=balances[payer_pk], **common
            )
        )
    _insert_entries(entries, batch)
    return entries[::2]


def _credit_players(deltas: dict[int, int]) -> list[tuple[int, int, int]]:
    """Add `deltas[user_id]` to each of those players' balances in one statement: the id, user id and new
    balance of every wallet changed."""
    return returning(*_players_credit(deltas))


def _players_credit(deltas: dict[int, int], *, guard: _Side | None = None) -> Statement:
    """The statement of `_credit_players`; with `guard`, it changes nothing unless that side's wallet exists
    (sent after its update, in one round trip: see `_move`)."""
    cases = " ".join(["WHEN %s THEN %s"] * len(deltas))
    listed = ", ".join(["%s"] * len(deltas))
    condition = "" if guard is None else f" AND {_side_exists(guard)}"
    sql = (
        f"UPDATE {_WALLETS} SET balance = balance + CASE user_id {cases} END "
        f"WHERE kind = %s AND user_id IN ({listed}){condition} RETURNING id, user_id, balance"
    )
    params = [
        *(value for user_id, delta in deltas.items() for value in (user_id, delta)),
        Wallet.Kind.PLAYER.value,
        *deltas,
        *_side_params(guard),
    ]
    return sql, params


def _play_movement(
    *,
    user,
    player_delta: int,
    kind: str,
    round_ref,
    game,
    table_ref,
    memo: str,
    float_target,
    batch: Batch | None,
) -> LedgerEntry:
    """Chips between the player and the table's float or the house (stake or pay), after the references and
    memo are checked."""
    _check_ref("round_ref", round_ref)
    side = _play_side(game, table_ref, float_target)
    _check_memo(memo)
    # No savepoint (two statements fewer per movement): `_move` undoes its own write before refusing, and the
    # refusal is raised outside the block, which would otherwise doom a caller's transaction.
    with transaction.atomic(savepoint=False):
        try:
            return _move(
                user=user,
                side=side,
                player_delta=player_delta,
                kind=kind,
                round_ref=round_ref,
                table_ref=table_ref,
                memo=memo,
                batch=batch,
            )
        except (InsufficientChips, NoWallet) as refused:
            refusal = refused
    raise refusal


def adjust(*, user, amount, staff, reason) -> LedgerEntry:
    """A staff correction: `amount` (signed, non-zero int) chips into or out of the player's wallet, against
    the issuer. Refuses to take a balance below zero (InsufficientChips). Returns the player's ledger
    entry."""
    if not getattr(staff, "is_staff", False) or not staff.is_active:
        raise WalletError("Only active staff can adjust a balance.", code="not_staff")
    check_amount(abs(amount) if type(amount) is int else amount)
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise WalletError("An adjustment needs a reason.", code="bad_memo")
    _check_memo(reason)
    with transaction.atomic():
        sockets.tell_balance(user_id=user.pk)
        return _move(
            user=user,
            side=_Side(Wallet.Kind.ISSUER),
            player_delta=amount,
            kind=LedgerEntry.Kind.ADJUSTMENT,
            memo=reason,
            created_by=staff,
        )


def suspend_user(*, user, staff) -> None:
    """Mark `user` suspended: every game's tables refuse their sits and actions (each game stands them up
    as it says: `live.games.Game.release_user`)."""
    _set_suspended(user=user, staff=staff, suspended=True)


def unsuspend_user(*, user, staff) -> None:
    """Lift a suspension: the user may sit and play again."""
    _set_suspended(user=user, staff=staff, suspended=False)


def _set_suspended(*, user, staff, suspended: bool) -> None:
    if not getattr(staff, "is_staff", False) or not staff.is_active:
        raise WalletError("Only active staff can suspend a user.", code="not_staff")
    if suspended and user.pk == staff.pk:
        raise WalletError("Staff cannot suspend themselves.", code="bad_user")
    type(user).objects.filter(pk=user.pk).update(suspended=suspended)
    user.suspended = suspended
    if suspended:
        sockets.close_sockets(user_id=user.pk)


def claim_daily_grant(*, user, now: datetime | None = None) -> LedgerEntry:
    """Top the player's chips (balance and chips in play) up to exactly DAILY_GRANT_FLOOR, at most once every
    DAILY_GRANT_INTERVAL_HOURS and only while they are below the floor. Raises DailyGrantRefused (with
    `.message`) otherwise."""
    now = now or timezone.now()
    floor = settings.DAILY_GRANT_FLOOR
    interval = timedelta(hours=settings.DAILY_GRANT_INTERVAL_HOURS)
    with transaction.atomic():
        # Lock in the global order (system wallet, then player) before reading the balance the top-up
        # depends on.
        _lock_system_wallet(Wallet.Kind.ISSUER)
        wallet = Wallet.objects.select_for_update().filter(user=user, kind=Wallet.Kind.PLAYER).first()
        if wallet is None:
            raise NoWallet(f"User {user.pk} has no wallet.")
        # Chips staked at a table count too (read under the wallet's lock: a bet or a refund waits for it),
        # or a player could stake their balance, claim, and take the bet back.
        in_play = selectors.chips_in_play(user_id=user.pk)
        held = wallet.balance + in_play
        if held >= floor:
            words = {"floor": _chips(floor), "held": _chips(held), "in_play": _chips(in_play)}
            if in_play:
                text = gettext(
                    "The daily grant is for players with under %(floor)s chips; you have %(held)s "
                    "(%(in_play)s of them in play)."
                )
            else:
                text = gettext(
                    "The daily grant is for players with under %(floor)s chips; you have %(held)s."
                )
            raise DailyGrantRefused(text % words, code="balance_too_high")
        if wallet.last_daily_grant_at and now < wallet.last_daily_grant_at + interval:
            next_claim_at = wallet.last_daily_grant_at + interval
            raise DailyGrantRefused(
                gettext("You already claimed your grant. You can claim again in %(wait)s.")
                % {"wait": _wait_text(next_claim_at - now)},
                code="too_soon",
                next_claim_at=next_claim_at,
            )
        Wallet.objects.filter(pk=wallet.pk).update(last_daily_grant_at=now)
        sockets.tell_balance(user_id=user.pk)
        return _move(
            user=user,
            side=_Side(Wallet.Kind.ISSUER),
            player_delta=floor - held,
            kind=LedgerEntry.Kind.GRANT,
            memo="Daily grant",
        )


def _wait_text(delta: timedelta) -> str:
    minutes = max(1, -(-int(delta.total_seconds()) // 60))
    hours, minutes = divmod(minutes, 60)
    if hours:
        return gettext("%(hours)d h %(minutes)02d min") % {"hours": hours, "minutes": minutes}
    return gettext("%(minutes)d min") % {"minutes": minutes}


def _chips(count: int) -> str:
    """A number of chips as the active language groups its digits: "10,000", "10 000"."""
    return number_format(count, force_grouping=True)
