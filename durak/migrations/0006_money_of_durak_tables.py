"""Durak's chips move at Durak's own tables' floats, not at the float of the blackjack table with the same id
(as they did before the ledger named a table's game): the stakes and payouts already written are tagged as
Durak's, and the pot of a game still in play moves from that shared float to its table's own, in two ledger
rows, so that the payouts at the end come from the float the stakes are in."""

import uuid

from django.db import migrations
from django.db.models import Q
from django.utils import timezone

GAME = "durak"


def move(apps, schema_editor):
    Wallet = apps.get_model("accounts", "Wallet")
    LedgerEntry = apps.get_model("accounts", "LedgerEntry")
    DurakGame = apps.get_model("durak", "DurakGame")
    # Durak's movements: a table's, no round, a stake or a payment of one of its games.
    ours = Q(table_ref__isnull=False, round_ref__isnull=True, memo__startswith="Durak game")
    LedgerEntry.objects.filter(ours).exclude(kind="float").update(game=GAME)
    for game in DurakGame.objects.filter(finished=False, pot__gt=0).order_by("pk"):
        shared = Wallet.objects.filter(kind="float", table_ref=game.table_id).exclude(game=GAME).first()
        if shared is None:
            continue
        amount = min(game.pot, shared.balance)
        own, _ = Wallet.objects.get_or_create(kind="float", game=GAME, table_ref=game.table_id)
        if amount <= 0:
            continue
        shared.balance -= amount
        own.balance += amount
        Wallet.objects.filter(pk=shared.pk).update(balance=shared.balance)
        Wallet.objects.filter(pk=own.pk).update(balance=own.balance)
        common = {
            "transfer": uuid.uuid4(),
            "kind": "float",
            "game": GAME,
            "table_ref": game.table_id,
            "memo": f"Durak game {game.pk}: its pot moved to the Durak table's own float",
            "created_at": timezone.now(),
        }
        LedgerEntry.objects.bulk_create(
            [
                LedgerEntry(wallet_id=own.pk, amount=amount, balance_after=own.balance, **common),
                LedgerEntry(wallet_id=shared.pk, amount=-amount, balance_after=shared.balance, **common),
            ]
        )


class Migration(migrations.Migration):

    dependencies = [
        ("durak", "0005_table_next_server_seed"),
        ("accounts", "0006_game_of_tables"),
    ]
    run_before = [("accounts", "0007_float_names_its_game")]

    operations = [migrations.RunPython(move, migrations.RunPython.noop)]
