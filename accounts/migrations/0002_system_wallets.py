"""Create the two system wallets: the house (the other side of every bet and payout) and the issuer (the source
of every granted chip, so its balance is minus the chips ever issued)."""

from django.db import migrations

SYSTEM_KINDS = ["house", "issuer"]


def create_system_wallets(apps, schema_editor):
    Wallet = apps.get_model("accounts", "Wallet")
    for kind in SYSTEM_KINDS:
        Wallet.objects.get_or_create(kind=kind, user=None)


def remove_empty_system_wallets(apps, schema_editor):
    Wallet = apps.get_model("accounts", "Wallet")
    Wallet.objects.filter(kind__in=SYSTEM_KINDS, entries__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(create_system_wallets, remove_empty_system_wallets)]
