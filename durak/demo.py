"""Durak's demo tables (`python manage.py seed_demo`): a casual, rated table of each variant.

Idempotent: a table that is open already (matched by name) is left alone; a closed one (a Durak table closes
once its last player leaves) is opened again."""

from collections.abc import Callable

from durak import services
from durak.engine.rules import ALL_SIDES, NEIGHBOURS, PASSPORT, PEREVODNOY, PODKIDNOY, SIX
from durak.models import DurakTable, Status

# (name, variant, attack type, seats): casual (no stake), rated, 30 s a turn
DEMO_TABLES = [
    ("Podkidnoy", PODKIDNOY, ALL_SIDES, 4),
    ("Perevodnoy", PEREVODNOY, NEIGHBOURS, 3),
    ("Passport", PASSPORT, ALL_SIDES, 2),
]


def seed(say: Callable[[str], None]) -> None:
    for name, variant, attack, seats in DEMO_TABLES:
        if DurakTable.objects.filter(name=name).exclude(status=Status.CLOSED).exists():
            say(f"Durak table {name!r}: exists")
            continue
        services.open_table(
            user=None,
            name=name,
            variant=variant,
            attack=attack,
            limit=SIX,
            seats=seats,
            stake=0,
            rated=True,
            turn_seconds=30,
        )
        say(f"Durak table {name!r}: created ({variant}, {seats} seats)")
