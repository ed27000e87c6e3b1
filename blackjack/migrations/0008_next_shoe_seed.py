"""The next shoe's server seed, drawn ahead and shown only by its hash, and the digests of the players' seeds
a shoe's client seed is made of."""

from django.db import migrations, models

import cards.fairness


def draw_next_seeds(apps, schema_editor):
    """AddField gives every existing table the same default: draw one seed per table instead."""
    Table = apps.get_model("tables", "Table")
    for table in Table.objects.only("pk"):
        Table.objects.filter(pk=table.pk).update(next_server_seed=cards.fairness.new_server_seed())


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0007_round_logged"),
    ]

    operations = [
        migrations.AddField(
            model_name="shoe",
            name="seat_seeds",
            field=models.JSONField(default=list, editable=False),
        ),
        migrations.AddField(
            model_name="table",
            name="next_server_seed",
            field=models.CharField(default=cards.fairness.new_server_seed, editable=False, max_length=64),
        ),
        migrations.RunPython(draw_next_seeds, migrations.RunPython.noop),
    ]
