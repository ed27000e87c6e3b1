"""High card's rows: a table read into its pure state, an outcome written in one fenced transaction, the
lobby's rows."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts import services as wallet
from accounts import sockets
from cards.errors import Refused
from live import fanout
from live.table import Stale
from tests.highcard.flow import Outcome, State
from tests.highcard.models import HighCardRound, HighCardTable

GAME = "highcard"


def load(table_id: int) -> State:
    row = HighCardTable.objects.get(pk=table_id)
    last = HighCardRound.objects.filter(table_id=table_id).first()
    return State(
        id=row.pk,
        version=row.version,
        stake=row.stake,
        seats=tuple(None if seat is None else (seat[0], seat[1]) for seat in row.seats),
        closed=row.closed,
        draws=tuple(tuple(draw) for draw in last.draws) if last else (),
        winner=last.winner_id if last else None,
    )


def commit(before: State, outcome: Outcome, epoch: int | None) -> State:
    """Write `outcome` fenced by the version in memory and the lease's epoch: the seats, and for a round the
    stakes, the pot to its winner and the round's row. A player who cannot cover the stake: `Refused`, rolled
    back."""
    after = outcome.state
    with transaction.atomic():
        fenced = HighCardTable.objects.filter(pk=before.id, version=before.version, epoch=epoch)
        seats = [None if seat is None else list(seat) for seat in after.seats]
        if not fenced.update(version=after.version, seats=seats, closed=after.closed):
            raise Stale
        if outcome.server_seed is not None:
            _play(after, outcome.server_seed)
    return after


def _play(after: State, server_seed: str) -> None:
    users = get_user_model().objects.in_bulk([uid for uid, _, _ in after.draws])
    for uid, name, _ in after.draws:
        try:
            wallet.stake(user=users[uid], amount=after.stake, game=GAME, table_ref=after.id, memo="High card")
        except wallet.WalletError:
            raise Refused("insufficient_chips", f"{name} cannot cover the stake.") from None
        sockets.tell_balance(user_id=uid)
    pot = after.stake * len(after.draws)
    wallet.pay(user=users[after.winner], amount=pot, game=GAME, table_ref=after.id, memo="High card pot")
    HighCardRound.objects.create(
        table_id=after.id,
        version=after.version,
        server_seed=server_seed,
        draws=[list(draw) for draw in after.draws],
        winner_id=after.winner,
        pot=pot,
    )


def close(table_id: int, reason: str) -> bool:
    """Quarantine: close the table, marked for staff, its version moved on."""
    changed = HighCardTable.objects.filter(pk=table_id, quarantined_at=None).update(
        closed=True, quarantined_at=timezone.now(), quarantine_reason=reason, version=F("version") + 1
    )
    if changed:
        version = HighCardTable.objects.values_list("version", flat=True).get(pk=table_id)
        fanout.changed_on_commit(GAME, table_id, version, lobby=True)
    return bool(changed)


def lobby_rows(page: int) -> dict:
    tables = HighCardTable.objects.filter(closed=False, is_private=False).order_by("id")
    rows = [
        {"id": row.id, "name": row.name, "stake": row.stake, "taken": sum(s is not None for s in row.seats)}
        for row in tables[(page - 1) * 20 : page * 20]
    ]
    return {"highcard_tables": rows}


def release_user(user) -> int:
    """Staff stood `user` up everywhere: high card has no rounds in play, the seats are left to them."""
    return 0
