"""Each Durak table commits to its next game's server seed before the players give theirs."""

from django.db import migrations, models

import cards.fairness


def seed_each_table(apps, schema_editor):
    """AddField computes its default once for every existing row: give each table a seed of its own."""
    DurakTable = apps.get_model("durak", "DurakTable")
    for pk in DurakTable.objects.values_list("pk", flat=True):
        DurakTable.objects.filter(pk=pk).update(next_server_seed=cards.fairness.new_server_seed())


class Migration(migrations.Migration):
    dependencies = [
        ("durak", "0004_seat_seed"),
    ]

    operations = [
        migrations.AddField(
            model_name="duraktable",
            name="next_server_seed",
            field=models.CharField(default=cards.fairness.new_server_seed, editable=False, max_length=64),
        ),
        migrations.RunPython(seed_each_table, migrations.RunPython.noop),
    ]
