import live.models
from django.db import migrations, models


def give_tokens(apps, schema_editor):
    """Every table its own invitation token (a column default would give them all the same one)."""
    tables = apps.get_model("durak", "DurakTable")
    for table in tables.objects.only("pk").iterator():
        tables.objects.filter(pk=table.pk).update(private_token=live.models.new_private_token())


class Migration(migrations.Migration):
    dependencies = [
        ("durak", "0007_quarantine_and_voided_games"),
    ]

    operations = [
        migrations.AddField(
            model_name="duraktable",
            name="is_private",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="duraktable",
            name="private_token",
            field=models.CharField(editable=False, max_length=32, null=True),
        ),
        migrations.RunPython(give_tokens, migrations.RunPython.noop),
        migrations.AddField(
            model_name="duraktable",
            name="ready_deadline",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="duraktable",
            name="closing",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.AddField(
            model_name="durakgame",
            name="seed_digests",
            field=models.JSONField(default=list),
        ),
        migrations.AlterField(
            model_name="duraktable",
            name="private_token",
            field=models.CharField(
                default=live.models.new_private_token, editable=False, max_length=32, unique=True
            ),
        ),
    ]
