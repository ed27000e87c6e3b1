"""The floats and the ledger rows already there are blackjack's: every float was made for a blackjack table,
and blackjack's chips always moved with their round (`round_ref`) or as a float's funding. (Durak's stakes
and payouts, made without a round, are tagged by Durak's own migration.)"""

from django.db import migrations
from django.db.models import Q

GAME = "blackjack"


def tag(apps, schema_editor):
    Wallet = apps.get_model("accounts", "Wallet")
    LedgerEntry = apps.get_model("accounts", "LedgerEntry")
    Wallet.objects.filter(kind="float", game="").update(game=GAME)
    ours = Q(round_ref__isnull=False) | Q(kind="float")
    LedgerEntry.objects.filter(ours, table_ref__isnull=False, game="").update(game=GAME)


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0011_presence_in_memory"),
        ("accounts", "0006_game_of_tables"),
    ]
    run_before = [("accounts", "0007_float_names_its_game")]

    operations = [migrations.RunPython(tag, migrations.RunPython.noop)]
