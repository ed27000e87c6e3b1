from django.core.management.base import BaseCommand, CommandError

from blackjack.history.generate import generate


class Command(BaseCommand):
    help = (
        "Fill the database with generated players and real engine-played rounds (history, stats, ledger). "
        "Run it on a database no live table is using."
    )

    def add_arguments(self, parser):
        parser.add_argument("--users", type=int, default=1000)
        parser.add_argument("--rounds", type=int, default=100_000)
        parser.add_argument("--tables", type=int, default=None, help="default: users / 200, 3 to 200")
        parser.add_argument("--days", type=int, default=60, help="the rounds are spread over the last N days")
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, **options):
        if options["users"] < 3 or options["rounds"] < 0 or options["days"] < 1:
            raise CommandError(
                "--users must be at least 3 (a round seats up to 3), --rounds 0 or more, --days 1+"
            )
        figures = generate(
            users=options["users"],
            rounds=options["rounds"],
            tables=options["tables"],
            days=options["days"],
            seed=options["seed"],
            progress=lambda text: self.stdout.write(text),
        )
        rows = ", ".join(f"{name} {count:,}" for name, count in sorted(figures["rows"].items()))
        self.stdout.write(self.style.SUCCESS(f"Done in {figures['seconds']:.1f} s: {rows}"))
