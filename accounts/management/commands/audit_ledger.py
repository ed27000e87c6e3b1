from django.core.management.base import BaseCommand, CommandError

from accounts.audit import audit_ledger

SHOWN_DISCREPANCIES = 100


class Command(BaseCommand):
    help = (
        "Recompute every wallet balance from the ledger; check each entry's balance_after chain, "
        "double entry and conservation (all balances sum to 0). Prints a summary; exits with status 1 on any "
        "discrepancy."
    )

    def handle(self, *args, **options):
        report = audit_ledger()
        self.stdout.write(
            f"wallets: {report.wallets:,}\n"
            f"entries: {report.entries:,}\n"
            f"chips in play (players): {report.chips_in_play:,}\n"
            f"chips issued (grants and adjustments): {report.issued:,}\n"
            f"house result: {report.house_result:+,} ({report.floats:,} of it in the tables' floats)\n"
            f"sum of all balances: {report.total:,}"
        )
        for game, books in report.games.items():
            self.stdout.write(
                f"  {game}: players' net {books['players']:+,}, its tables' floats {books['floats']:,}"
            )
        if report.ok:
            self.stdout.write(self.style.SUCCESS("ledger OK"))
            return
        for problem in report.discrepancies[:SHOWN_DISCREPANCIES]:
            self.stderr.write(f"DISCREPANCY {problem}")
        hidden = len(report.discrepancies) - SHOWN_DISCREPANCIES
        if hidden > 0:
            self.stderr.write(f"... and {hidden:,} more")
        raise CommandError(f"ledger audit failed: {len(report.discrepancies):,} discrepancies")
