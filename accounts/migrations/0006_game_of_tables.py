"""A float and a ledger row name their table by game and id. Each game's migrations tag the rows already
there as theirs (they run before 0007, which then requires every float to name its game)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_user_show_mistakes_preferences'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='wallet',
            name='wallet_owner_matches_kind',
        ),
        migrations.RemoveConstraint(
            model_name='wallet',
            name='wallet_one_float_per_table',
        ),
        migrations.AddField(
            model_name='ledgerentry',
            name='game',
            field=models.CharField(blank=True, default='', max_length=16),
        ),
        migrations.AddField(
            model_name='wallet',
            name='game',
            field=models.CharField(blank=True, default='', max_length=16),
        ),
        migrations.AddIndex(
            model_name='ledgerentry',
            index=models.Index(fields=['game', 'table_ref'], name='ledger_table'),
        ),
    ]
