"""The only code that writes money.

Every function is keyword-only and runs in `transaction.atomic`, so it can be called on its own or inside a
caller's transaction (a bet debit together with the round's state change); a refused call raises and leaves
nothing behind.

Every movement is double entry: two ledger rows with the same transfer id, one on the player's wallet and
one on a system wallet (the house for play, the issuer for granted chips), so the sum of all balances stays
exactly zero.

Locking: each movement updates the system wallet row first and the player's row second. Updating a row locks
it until the transaction ends (PostgreSQL), so the order is the same everywhere and a transaction that moves
chips for several players cannot deadlock with another one. Debits are conditional updates (`balance >=
amount`), correct on SQLite and PostgreSQL alike; the balances written into `balance_after` are the ones the
updates return (`UPDATE ... RETURNING`), while the rows are still locked. On SQLite, IMMEDIATE transactions
(settings) serialise writers instead.
"""

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import selectors, sockets
from accounts.models import LedgerEntry, Wallet
from blackjack_site.prepared import Batch, execute_returning, insert, returning_together

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


# The statements of every movement, built once (blackjack_site.prepared): a table action moves chips often.
# Each returns the id and new balance of every row it changed, so no movement reads the balances again.
def _add_to_system_wallet(kind: str, delta: int) -> list[tuple[int, int]]:
    return execute_returning(*_system_addition(kind, delta))


def _system_addition(kind: str, delta: int) -> tuple:
    return _balance_addition(f"{_system_kind(kind)} system", lambda q: _is_system_wallet(q, kind), [delta])


def _system_kind(kind: str) -> str:
    """A system wallet's kind, checked: it is written into the statements below."""
    kind = Wallet.Kind(kind).value
    if kind == Wallet.Kind.PLAYER:
        raise ValueError("a player wallet is no system wallet")
    return kind


def _is_system_wallet(q, kind: str) -> str:
    """The condition selecting the `kind` system wallet, its kind written out: PostgreSQL finds that row
    through the partial unique index of the system wallets only when it sees that the kind is not "player",
    which it cannot see of a parameter in a prepared statement's generic plan (it scanned every wallet)."""
    return f"{q('kind')} = '{_system_kind(kind)}'"


def _add_to_player_wallet(user_id: int, delta: int) -> list[tuple[int, int]]:
    return execute_returning(*_player_addition(user_id, delta))


def _player_addition(user_id: int, delta: int, *, system_kind: str | None = None) -> tuple:
    """Credit, or debit only while the balance covers it (one row changed, or none); with `system_kind`, only
    if that system wallet exists (sent after its update, in one round trip: see `_move`)."""
    if system_kind is None:
        return _balance_addition(
            "player",
            lambda q: f"{q('user_id')} = %s AND {q('kind')} = %s AND {q('balance')} >= %s",
            [delta, user_id, Wallet.Kind.PLAYER.value, max(0, -delta)],
        )
    return _balance_addition(
        f"player after the {_system_kind(system_kind)} system wallet",
        lambda q: (
            f"{q('user_id')} = %s AND {q('kind')} = %s AND {q('balance')} >= %s AND EXISTS (SELECT 1 FROM "
            f"{q(Wallet._meta.db_table)} WHERE {_is_system_wallet(q, system_kind)})"
        ),
        [delta, user_id, Wallet.Kind.PLAYER.value, max(0, -delta)],
    )


def _balance_addition(which: str, where, params: list) -> tuple:
    """The statement adding `params[0]` to the balance of the wallet rows `where(quote_name)` selects and
    returning (id, new balance) of each, for `execute_returning`: its key, builder and parameters."""
    return (
        f"wallet: add to a {which} wallet",
        lambda q: (
            f"UPDATE {q(Wallet._meta.db_table)} SET {q('balance')} = {q('balance')} + %s WHERE {where(q)} "
            f"RETURNING {q('id')}, {q('balance')}"
        ),
        params,
    )


def _lock_system_wallet(kind: str) -> None:
    """Lock the row until the transaction ends (PostgreSQL; SQLite's IMMEDIATE transactions already
    serialise writers)."""
    locked = Wallet.objects.select_for_update().filter(kind=kind).values_list("pk", flat=True)
    if not list(locked):
        _create_system_wallet(kind)
        list(locked.all())


def _move(
    *,
    user,
    system_kind: str,
    player_delta: int,
    kind: str,
    round_ref: int | None = None,
    table_ref: int | None = None,
    memo: str = "",
    created_by=None,
    batch: Batch | None = None,
) -> LedgerEntry:
    """Move `player_delta` chips into (positive) or out of (negative) the player's wallet, against a system
    wallet.

    Must run inside an atomic block; returns the player's ledger entry. With `batch` (of the same
    transaction), the ledger rows wait there to be written with the caller's other writes, and the entry
    returned has no id.
    """
    # The system wallet's row first, then the player's (the lock order of every movement), in one round trip.
    system_rows, player_rows = returning_together(
        _system_addition(system_kind, -player_delta),
        _player_addition(user.pk, player_delta, system_kind=system_kind),
    )
    if not system_rows:
        # No system wallet (a test database flushed): the player's row was left alone; create it, then go on
        # in the same order, one statement at a time.
        system_rows = [_update_system_wallet(system_kind, -player_delta)]
        player_rows = _add_to_player_wallet(user.pk, player_delta)
    system_pk, system_balance = system_rows[0]
    if not player_rows:
        # Undo the system wallet's side: this transaction holds its row, so this restores it exactly, and a
        # refusal leaves nothing behind without a savepoint.
        _update_system_wallet(system_kind, player_delta)
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
        "table_ref": table_ref,
        "memo": memo,
        "created_by": created_by,
        "created_at": now,
    }
    player_entry = LedgerEntry(
        wallet_id=player_pk, amount=player_delta, balance_after=player_balance, **common
    )
    system_entry = LedgerEntry(
        wallet_id=system_pk, amount=-player_delta, balance_after=system_balance, **common
    )
    insert(LedgerEntry, [player_entry, system_entry], ids=batch is None, batch=batch)
    return player_entry


def open_wallet(*, user) -> Wallet:
    """Give `user` a wallet holding STARTING_CHIPS, granted from the issuer. Idempotent: an existing wallet is
    returned unchanged, without a second grant."""
    with transaction.atomic():
        wallet, created = Wallet.objects.get_or_create(user=user, defaults={"kind": Wallet.Kind.PLAYER})
        if created:
            _move(
                user=user,
                system_kind=Wallet.Kind.ISSUER,
                player_delta=check_amount(settings.STARTING_CHIPS),
                kind=LedgerEntry.Kind.GRANT,
                memo="Welcome grant",
            )
            wallet.refresh_from_db(fields=["balance"])
        return wallet


def stake(
    *, user, amount, round_ref=None, table_ref=None, memo="", batch: Batch | None = None
) -> LedgerEntry:
    """Take `amount` chips from the player for a bet (player -> house). Raises InsufficientChips when the
    balance is too low, InvalidAmount for anything but a positive int. Returns the player's ledger entry
    (`batch`: see `_move`)."""
    check_amount(amount)
    return _house_movement(
        user=user,
        player_delta=-amount,
        kind=LedgerEntry.Kind.BET,
        round_ref=round_ref,
        table_ref=table_ref,
        memo=memo,
        batch=batch,
    )


def pay(
    *, user, amount, kind="payout", round_ref=None, table_ref=None, memo="", batch: Batch | None = None
) -> LedgerEntry:
    """Give the player `amount` chips from the house: `kind` is "payout" (winnings with the returned stake) or
    "refund" (a bet given back, e.g. a push or a cancelled round). Returns the player's ledger entry
    (`batch`: see `_move`)."""
    check_amount(amount)
    if kind not in (LedgerEntry.Kind.PAYOUT, LedgerEntry.Kind.REFUND):
        raise WalletError(f"A payment is a payout or a refund, not {kind!r}.", code="bad_kind")
    return _house_movement(
        user=user,
        player_delta=amount,
        kind=kind,
        round_ref=round_ref,
        table_ref=table_ref,
        memo=memo,
        batch=batch,
    )


class Payment(NamedTuple):
    """One payment of `pay_many`: what `pay` takes, for one player."""

    user: object
    amount: int
    kind: str = "payout"
    memo: str = ""


def pay_many(
    *, payments: Sequence[Payment], round_ref=None, table_ref=None, batch: Batch | None = None
) -> list[LedgerEntry]:
    """Make several payments from the house at once (a round's settlement): the same ledger rows, in the
    same order, as calling `pay` for each, in three statements however many there are (the house row and
    every player row in one update, sent together, then the entries; the updates return the new balances).
    Everything is checked before anything is written; a user without a wallet is refused (`NoWallet`) and
    nothing is left behind. Returns the players' entries, in the order of `payments` (`batch`: see
    `_move`)."""
    _check_ref("round_ref", round_ref)
    _check_ref("table_ref", table_ref)
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
    # No savepoint, as in `_house_movement`: a refusal undoes its own writes and is raised outside the block.
    with transaction.atomic(savepoint=False):
        # The house first, then the players, as every movement locks them (no deadlock).
        house_rows, players = returning_together(
            _system_addition(Wallet.Kind.HOUSE, -total),
            _players_credit(deltas, system_kind=Wallet.Kind.HOUSE),
        )
        if house_rows:
            house = house_rows[0]
        else:  # no house wallet (a test database flushed): the players were left alone; as in `_move`
            house = _update_system_wallet(Wallet.Kind.HOUSE, -total)
            players = _credit_players(deltas)
        if len(players) != len(deltas):
            # Undo both sides (this transaction holds the rows, so exactly), then name who has no wallet.
            _credit_players({user_id: -delta for user_id, delta in deltas.items()})
            _update_system_wallet(Wallet.Kind.HOUSE, total)
            held = set(Wallet.objects.filter(user_id__in=deltas).values_list("user_id", flat=True))
            missing = min(set(deltas) - held)
        else:
            return _write_payments(
                payments, house, players, deltas, total, round_ref=round_ref, table_ref=table_ref, batch=batch
            )
    raise NoWallet(f"User {missing} has no wallet.")


def _write_payments(
    payments,
    house: tuple[int, int],
    players: list[tuple[int, int, int]],
    deltas: dict[int, int],
    total: int,
    *,
    round_ref,
    table_ref,
    batch: Batch | None,
) -> list[LedgerEntry]:
    """The ledger rows of `pay_many`, once the balances have moved (`house` is the house wallet's id and
    balance, `players` each credited wallet's id, user id and balance)."""
    # The balances before these payments, walked forward entry by entry below.
    house_pk = house[0]
    balances = {house_pk: house[1] + total}
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
            "table_ref": table_ref,
            "memo": payment.memo,
            "created_at": now,
        }
        player_pk = wallets[payment.user.pk]
        balances[player_pk] += payment.amount
        balances[house_pk] -= payment.amount
        entries.append(
            LedgerEntry(
                wallet_id=player_pk, amount=payment.amount, balance_after=balances[player_pk], **common
            )
        )
        entries.append(
            LedgerEntry(
                wallet_id=house_pk, amount=-payment.amount, balance_after=balances[house_pk], **common
            )
        )
    insert(LedgerEntry, entries, ids=batch is None, batch=batch)
    return entries[::2]


def _credit_players(deltas: dict[int, int]) -> list[tuple[int, int, int]]:
    """Add `deltas[user_id]` to each of those players' balances in one statement: the id, user id and new
    balance of every wallet changed."""
    return execute_returning(*_players_credit(deltas))


def _players_credit(deltas: dict[int, int], *, system_kind: str | None = None) -> tuple:
    """The statement of `_credit_players`, for `execute_returning`; with `system_kind`, it changes nothing
    unless that system wallet exists (sent after its update, in one round trip: see `_move`)."""
    cases = " ".join(["WHEN %s THEN %s"] * len(deltas))
    listed = ", ".join(["%s"] * len(deltas))

    def guard(q) -> str:
        if system_kind is None:
            return ""
        wallets = q(Wallet._meta.db_table)
        return f" AND EXISTS (SELECT 1 FROM {wallets} WHERE {_is_system_wallet(q, system_kind)})"

    after = "" if system_kind is None else f" after the {_system_kind(system_kind)} system wallet"
    return (
        f"wallet: credit {len(deltas)} players{after}",
        lambda q: (
            f"UPDATE {q(Wallet._meta.db_table)} SET {q('balance')} = {q('balance')} + CASE {q('user_id')} "
            f"{cases} END WHERE {q('kind')} = %s AND {q('user_id')} IN ({listed}){guard(q)} "
            f"RETURNING {q('id')}, {q('user_id')}, {q('balance')}"
        ),
        [
            *(value for user_id, delta in deltas.items() for value in (user_id, delta)),
            Wallet.Kind.PLAYER.value,
            *deltas,
        ],
    )


def _house_movement(
    *, user, player_delta: int, kind: str, round_ref, table_ref, memo: str, batch: Batch | None
) -> LedgerEntry:
    """Chips between the player and the house (stake or pay), after the references and memo are checked."""
    _check_ref("round_ref", round_ref)
    _check_ref("table_ref", table_ref)
    _check_memo(memo)
    # No savepoint (two statements fewer per movement): `_move` undoes its own write before refusing, and the
    # refusal is raised outside the block, which would otherwise doom a caller's transaction.
    with transaction.atomic(savepoint=False):
        try:
            return _move(
                user=user,
                system_kind=Wallet.Kind.HOUSE,
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
            system_kind=Wallet.Kind.ISSUER,
            player_delta=amount,
            kind=LedgerEntry.Kind.ADJUSTMENT,
            memo=reason,
            created_by=staff,
        )


def suspend_user(*, user, staff) -> None:
    """Mark `user` suspended: the tables refuse their sits and actions (`tables.services` releases their
    seats after the current round)."""
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
            on_table = f" ({in_play:,} of them in play)" if in_play else ""
            raise DailyGrantRefused(
                f"The daily grant is for players with under {floor:,} chips; you have {held:,}{on_table}.",
                code="balance_too_high",
            )
        if wallet.last_daily_grant_at and now < wallet.last_daily_grant_at + interval:
            next_claim_at = wallet.last_daily_grant_at + interval
            raise DailyGrantRefused(
                f"You already claimed your grant. You can claim again in {_wait_text(next_claim_at - now)}.",
                code="too_soon",
                next_claim_at=next_claim_at,
            )
        Wallet.objects.filter(pk=wallet.pk).update(last_daily_grant_at=now)
        sockets.tell_balance(user_id=user.pk)
        return _move(
            user=user,
            system_kind=Wallet.Kind.ISSUER,
            player_delta=floor - held,
            kind=LedgerEntry.Kind.GRANT,
            memo="Daily grant",
        )


def _wait_text(delta: timedelta) -> str:
    minutes = max(1, -(-int(delta.total_seconds()) // 60))
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min"
