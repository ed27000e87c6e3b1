"""Blackjack's demo tables (`python manage.py seed_demo`): the rule presets and one table per preset.

Idempotent: presets and tables that exist already (matched by name) are left as they are, so staff edits
survive a re-run."""

from collections.abc import Callable

from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Table

# (preset, table name, min bet, max bet)
DEMO_TABLES = [
    ("Vegas Strip", "Vegas Strip", 10, 500),
    ("Downtown", "Downtown", 5, 200),
    ("Atlantic City", "Atlantic City", 25, 1000),
    ("European", "European", 10, 300),
    ("Single deck 6:5", "Single deck 6:5", 5, 100),
]


def seed(say: Callable[[str], None]) -> None:
    presets = {}
    for name, rules in PRESETS.items():
        presets[name], created = RulePreset.objects.get_or_create(
            name=name, defaults={"rules": rules.to_dict(), "description": rules.summary()}
        )
        say(f"preset {name!r}: {'created' if created else 'exists'}")
    for preset, name, min_bet, max_bet in DEMO_TABLES:
        if Table.objects.filter(name=name).exists():
            say(f"table {name!r}: exists")
            continue
        services.create_table(name=name, preset=presets[preset], min_bet=min_bet, max_bet=max_bet)
        say(f"table {name!r}: created ({min_bet}-{max_bet} chips, {preset})")
