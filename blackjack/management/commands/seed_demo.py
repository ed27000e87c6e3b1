"""`python manage.py seed_demo`: the rule presets, one demo table per preset, a Durak table of each variant
and two demo players.

Idempotent: presets, tables and players that exist already (matched by name) are left as they are, so staff
edits survive a re-run and `make run` can call it every time. A Durak table closes once its last player
leaves: a closed demo table is opened again.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from blackjack import services
from blackjack.engine.rules import PRESETS
from blackjack.models import RulePreset, Table
from durak import services as durak_services
from durak.engine.rules import ALL_SIDES, NEIGHBOURS, PASSPORT, PEREVODNOY, PODKIDNOY, SIX
from durak.models import DurakTable, Status

# (preset, table name, min bet, max bet)
DEMO_TABLES = [
    ("Vegas Strip", "Vegas Strip", 10, 500),
    ("Downtown", "Downtown", 5, 200),
    ("Atlantic City", "Atlantic City", 25, 1000),
    ("European", "European", 10, 300),
    ("Single deck 6:5", "Single deck 6:5", 5, 100),
]
# (name, variant, attack type, seats): casual (no stake), rated, 30 s a turn
DEMO_DURAK_TABLES = [
    ("Podkidnoy", PODKIDNOY, ALL_SIDES, 4),
    ("Perevodnoy", PEREVODNOY, NEIGHBOURS, 3),
    ("Passport", PASSPORT, ALL_SIDES, 2),
]
DEMO_PLAYERS = [("alice", "Alice"), ("bob", "Bob")]
DEMO_PASSWORD = "blackjack-demo"


class Command(BaseCommand):
    help = (
        "Create the rule presets, one demo table per preset, a Durak table of each variant and two demo "
        "players (idempotent)."
    )

    def handle(self, *args, **options):
        with transaction.atomic():
            presets = {name: self._preset(name, rules) for name, rules in PRESETS.items()}
            for preset, name, min_bet, max_bet in DEMO_TABLES:
                if Table.objects.filter(name=name).exists():
                    self.stdout.write(f"table {name!r}: exists")
                    continue
                services.create_table(name=name, preset=presets[preset], min_bet=min_bet, max_bet=max_bet)
                self.stdout.write(f"table {name!r}: created ({min_bet}-{max_bet} chips, {preset})")
            for name, variant, attack, seats in DEMO_DURAK_TABLES:
                self._durak_table(name, variant, attack, seats)
            for username, display_name in DEMO_PLAYERS:
                self._player(username, display_name)
        names = " and ".join(username for username, _ in DEMO_PLAYERS)
        self.stdout.write(
            self.style.WARNING(
                f"Demo players {names} log in with the password {DEMO_PASSWORD!r} (unless it was changed): "
                "for trying the site on your own machine only; never seed a public server."
            )
        )
        self.stdout.write(self.style.SUCCESS("demo data ready"))

    def _preset(self, name, rules) -> RulePreset:
        row, created = RulePreset.objects.get_or_create(
            name=name, defaults={"rules": rules.to_dict(), "description": rules.summary()}
        )
        self.stdout.write(f"preset {name!r}: {'created' if created else 'exists'}")
        return row

    def _durak_table(self, name: str, variant: str, attack: str, seats: int) -> None:
        if DurakTable.objects.filter(name=name).exclude(status=Status.CLOSED).exists():
            self.stdout.write(f"Durak table {name!r}: exists")
            return
        durak_services.open_table(
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
        self.stdout.write(f"Durak table {name!r}: created ({variant}, {seats} seats)")

    def _player(self, username: str, display_name: str) -> None:
        users = get_user_model().objects
        if users.filter(username=username).exists():
            self.stdout.write(f"player {username!r}: exists (password unchanged)")
            return
        users.create_user(username=username, password=DEMO_PASSWORD, display_name=display_name)
        self.stdout.write(f"player {username!r}: created")
