from django.db import migrations, models
from django.db.models import Max, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_logged_actions(apps, schema_editor):
    """Rounds played before the counter existed: their last logged sequence number."""
    Round = apps.get_model("tables", "Round")
    ActionLog = apps.get_model("tables", "ActionLog")
    last = (
        ActionLog.objects.filter(round=OuterRef("pk"))
        .values("round")
        .annotate(last=Max("seq"))
        .values("last")
    )
    Round.objects.update(logged=Coalesce(Subquery(last), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0006_presence_seen_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="logged",
            field=models.PositiveIntegerField(
                default=0, help_text="Actions logged so far: the next one's sequence number is this plus one."
            ),
        ),
        migrations.RunPython(count_logged_actions, migrations.RunPython.noop),
    ]
