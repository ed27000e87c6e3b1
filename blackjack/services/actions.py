"""What players and the websockets do to a table through the services: actions, and voiding the rounds
that cannot go on (at once, or when a clock starts). Deadlines and presence are the owners'
(`blackjack.actors`)."""

import logging
from typing import Any

from django.db import transaction
from django.db.models import Sum

from accounts.models import LedgerEntry
from blackjack import flow
from blackjack.models import GAME, Round
from blackjack.services import load, store
from blackjack.services.load import RoundBroken
from cards.errors import Refused
from live import quarantine

logger = logging.getLogger(__name__)


def perform(*, table_id: int, user, action: dict[str, Any], expected_version: int | None) -> int:
    """Apply one protocol action (`sit`, `leave`, `bet`, `ready`, `insurance`, `even_money`, `hit`, `stand`,
    `double`, `split`, `surrender`) for `user`; return the table's new version."""
    if user is None or not user.is_authenticated:
        raise Refused("not_authenticated", "Log in to play.")

    def command() -> int:
        with transaction.atomic():
            loaded = load.begin(table_id)
            player = acting_player(loaded, user)
            loaded.users.setdefault(user.pk, user)
            command = flow.Act(player=player, action=action, expected_version=expected_version)
            return store.apply(loaded, store.decide(loaded, command))

    try:
        return quarantine.watch(GAME, table_id, command)
    except RoundBroken as broken:
        void_round(round_id=broken.round_id, reason=broken.reason)
        raise Refused(
            "illegal_action", "The round could not be continued and was voided; every stake was refunded."
        ) from None


def acting_player(loaded: load.Loaded, user) -> flow.Player:
    """The acting player; whether they are barred (suspended or deactivated: an open websocket outlives both)
    comes from their seat's row, read under the table's lock, or else is read."""
    for seat in loaded.seats.values():
        if seat.user_id == user.pk:
            return load.player_of(seat.user)
    public = getattr(user, "public_name", None) or ""
    return flow.Player(user.pk, user.username, public, load.barred(user.pk))


def void_round(*, round_id: int, reason: str) -> bool:
    """Void a round that cannot go on: refund every player's net stake from the ledger, retire its shoe (its
    position is unknown) and open the next round. Returns False if the round was already over."""
    with transaction.atomic():
        table_id = Round.objects.filter(pk=round_id).values_list("table_id", flat=True).first()
        if table_id is None:
            return False
        loaded = load.begin(table_id, engine=False)
        if round_id not in loaded.rounds:
            rnd = Round.objects.select_related("shoe").get(pk=round_id)
            loaded.rounds[rnd.pk] = rnd
            loaded.shoes.setdefault(rnd.shoe_id, rnd.shoe)
        rnd = loaded.rounds[round_id]
        if rnd.is_over:
            return False
        nets = (
            LedgerEntry.objects.filter(round_ref=rnd.pk, wallet__user__isnull=False)
            .values_list("wallet__user_id")
            .annotate(net=Sum("amount"))
        )
        refunds = {user_id: -net for user_id, net in nets if net < 0}
        command = flow.Void(round=load.round_info_of(rnd), reason=reason, refunds=refunds)
        store.apply(loaded, store.decide(loaded, command))
    logger.warning("voided round %s of table %s: %s", round_id, table_id, reason)
    return True


def recover_tables() -> int:
    """Run when a clock starts: void every unfinished round whose stored state cannot be loaded (deadlines
    that passed while no server ran are then applied by the clock's sweep, and the seated players nobody is
    connected to are marked gone by it). Returns the number of rounds voided."""
    voided = 0
    for rnd in Round.objects.filter(voided=False, settled_at__isnull=True).select_related("shoe"):
        try:
            load.load_engine(rnd)
        except RoundBroken as broken:
            voided += void_round(round_id=broken.round_id, reason=broken.reason)
    return voided
