"""`python manage.py seed_demo`: every registered game's demo tables (`live.games.Game.seed_demo`) and two
demo players.

Idempotent: what exists already is left as it is, so staff edits survive a re-run and `make run` can call it
every time."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from live import games

DEMO_PLAYERS = [("alice", "Alice"), ("bob", "Bob")]
DEMO_PASSWORD = "cardroom-demo"


class Command(BaseCommand):
    help = "Create every game's demo tables and two demo players (idempotent)."

    def handle(self, *args, **options):
        with transaction.atomic():
            for game in games.all_games():
                if game.seed_demo is not None:
                    game.seed_demo(self.stdout.write)
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

    def _player(self, username: str, display_name: str) -> None:
        users = get_user_model().objects
        if users.filter(username=username).exists():
            self.stdout.write(f"player {username!r}: exists (password unchanged)")
            return
        users.create_user(username=username, password=DEMO_PASSWORD, display_name=display_name)
        self.stdout.write(f"player {username!r}: created")
