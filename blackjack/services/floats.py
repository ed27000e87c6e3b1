"""The tables' house floats: how many chips each table's float holds, and moving chips between the floats and
the house (`accounts.services.set_float`).

Every bet at a table goes into the table's float and every payment comes out of it, so tables never contend
on the house's row. A float is funded when its table is created, a payment it cannot cover tops it up in the
settlement's own transaction (`accounts.services`), and `rebalance` (the clock, every `REBALANCE_SECONDS`)
brings a float far from its target back to it and sweeps the floats of closed tables back to the house;
closing a table sweeps its float at once when no round is under way.
"""

import logging

from django.db.models import Q

from accounts import services as wallet
from accounts.models import Wallet
from blackjack.models import GAME, Table

logger = logging.getLogger(__name__)

#: What a float is funded to: this many maximum bets for every seat of the table (a seat's biggest round, a
#: split doubled blackjack-paid, is rare; a shortfall is topped up in the settlement anyway).
BETS_PER_SEAT = 4
#: `rebalance` leaves a float alone between these fractions of its target.
LOW, HIGH = 0.25, 2.0
#: How often the clock rebalances the floats, in seconds.
REBALANCE_SECONDS = 60.0


def target(config) -> int:
    """The chips the float of a table with these settings (a `Table` or the flow's `Settings`) holds."""
    return config.max_bet * config.seats * BETS_PER_SEAT


def fund(table: Table) -> int:
    """Fund a new table's float from the house; the chips moved."""
    return wallet.set_float(game=GAME, table_ref=table.pk, chips=target(table), memo="Float funded")


def sweep(*, table_id: int) -> int:
    """Sweep the float of a closed table back to the house if no round is under way there (else `rebalance`
    does it after the round). Returns the chips moved (negative: into the house)."""
    table = _idle_tables().filter(pk=table_id, is_open=False).first()
    if (
        table is None
        or not Wallet.objects.filter(kind=Wallet.Kind.FLOAT, game=GAME, table_ref=table_id).exists()
    ):
        return 0
    return wallet.set_float(game=GAME, table_ref=table_id, chips=0, memo="Float swept: table closed")


def rebalance() -> int:
    """Bring every float far from its target (below `LOW` or above `HIGH` of it) back to it, and sweep the
    floats of closed, idle tables (and of deleted ones) to the house; each float in a short transaction of its
    own. Returns how many floats were changed."""
    floats = dict(
        Wallet.objects.filter(kind=Wallet.Kind.FLOAT, game=GAME).values_list("table_ref", "balance")
    )
    tables = {
        table.pk: table for table in Table.objects.filter(pk__in=floats).only("is_open", "max_bet", "seats")
    }
    idle = set(_idle_tables().filter(pk__in=floats).values_list("pk", flat=True))
    changed = 0
    for table_id, balance in sorted(floats.items()):
        table = tables.get(table_id)
        if table is None or not table.is_open:
            if balance == 0 or (table is not None and table_id not in idle):
                continue
            wanted, memo = 0, "Float swept: table closed"
        else:
            wanted = target(table)
            if LOW * wanted <= balance <= HIGH * wanted:
                continue
            memo = "Float rebalanced"
        try:
            changed += wallet.set_float(game=GAME, table_ref=table_id, chips=wanted, memo=memo) != 0
        except Exception:  # one float's failure must not stop the others
            logger.exception("table %s: rebalancing its float failed", table_id)
    return changed


def _idle_tables():
    """Tables without a round under way."""
    return Table.objects.filter(
        Q(current_round__isnull=True)
        | Q(current_round__settled_at__isnull=False)
        | Q(current_round__voided=True)
    )
