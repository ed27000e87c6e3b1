"""Every float names its game, and each game's table has a float of its own (the games' migrations have
tagged the floats already there; see 0006)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_game_of_tables'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='wallet',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('game', ''), ('kind', 'player'), ('table_ref__isnull', True), ('user__isnull', False)), models.Q(('game', ''), ('kind__in', ['house', 'issuer']), ('table_ref__isnull', True), ('user__isnull', True)), models.Q(('kind', 'float'), ('table_ref__isnull', False), ('user__isnull', True), models.Q(('game', ''), _negated=True)), _connector='OR'), name='wallet_owner_matches_kind'),
        ),
        migrations.AddConstraint(
            model_name='wallet',
            constraint=models.UniqueConstraint(condition=models.Q(('kind', 'float')), fields=('game', 'table_ref'), name='wallet_one_float_per_table'),
        ),
    ]
