"""Checks that the books balance: every wallet's balance equals the sum of its entries, each entry's
balance_after continues its wallet's chain, each transfer is two rows summing to zero, all balances sum to
zero, no player is below zero, and every user has a wallet. Used by `manage.py audit_ledger` and by load and
fault tests."""

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, F, Q, Sum, Window

from accounts.models import LedgerEntry, Wallet


@dataclass
class AuditReport:
    wallets: int = 0
    entries: int = 0
    chips_in_play: int = 0  # sum of player balances
    issued: int = 0  # chips granted or adjusted in, net (minus the issuer's balance)
    house_result: int = 0  # the house's balance and its tables' floats: what players lost to it, net
    floats: int = 0  # the tables' floats (part of the house result)
    total: int = 0  # sum of every balance; must be 0
    #: Per game (the `game` of the rows played at its tables): `players`, the players' net result there
    #: (negative: the house won it), and `floats`, what its tables' floats hold now.
    games: dict[str, dict[str, int]] = field(default_factory=dict)
    discrepancies: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.discrepancies


def audit_ledger() -> AuditReport:
    """Audit the whole ledger from one consistent snapshot and return what was found."""
    snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic():
        if snapshot:
            # Every query below sees the same moment, even while tables keep playing.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _audit()


def _audit() -> AuditReport:
    report = AuditReport()
    problems = report.discrepancies

    wallets = Wallet.objects.annotate(
        ledger_sum=Sum("entries__amount"), entry_count=Count("entries")
    ).order_by("pk")
    for wallet in wallets.values(
        "pk", "kind", "user_id", "game", "table_ref", "balance", "ledger_sum", "entry_count"
    ):
        report.wallets += 1
        report.entries += wallet["entry_count"]
        balance, ledger_sum = wallet["balance"], wallet["ledger_sum"] or 0
        name = _wallet_name(wallet)
        report.total += balance
        if wallet["kind"] == Wallet.Kind.PLAYER:
            report.chips_in_play += balance
            if balance < 0:
                problems.append(f"{name}: negative balance {balance}")
        elif wallet["kind"] == Wallet.Kind.ISSUER:
            report.issued -= balance
        else:
            report.house_result += balance
            if wallet["kind"] == Wallet.Kind.FLOAT:
                report.floats += balance
        if balance != ledger_sum:
            problems.append(f"{name}: balance {balance} but its entries sum to {ledger_sum}")

    if report.total != 0:
        problems.append(f"balances sum to {report.total}, not 0: chips were created or destroyed")
    _per_game(report)

    running = Window(Sum("amount"), partition_by=F("wallet_id"), order_by=F("id").asc())
    broken_chain = (
        LedgerEntry.objects.annotate(running=running)
        .filter(~Q(running=F("balance_after")))
        .order_by("wallet_id", "id")
        .values_list("id", "wallet_id", "balance_after", "running")
    )
    for entry_id, wallet_id, balance_after, expected in broken_chain:
        problems.append(
            f"entry {entry_id} (wallet {wallet_id}): balance_after {balance_after}, chain gives {expected}"
        )

    unbalanced = (
        LedgerEntry.objects.values("transfer")
        .annotate(rows=Count("id"), net=Sum("amount"))
        .filter(~Q(rows=2) | ~Q(net=0))
        .order_by("transfer")
    )
    for transfer in unbalanced:
        problems.append(
            f"transfer {transfer['transfer']}: {transfer['rows']} entries summing to {transfer['net']} "
            "(expected 2 summing to 0)"
        )

    without_wallet = get_user_model().objects.filter(wallet__isnull=True).order_by("pk")
    for user_id, username in without_wallet.values_list("pk", "username"):
        problems.append(f"user {username} (#{user_id}) has no wallet")
    return report


def _per_game(report: AuditReport) -> None:
    played = (
        LedgerEntry.objects.filter(wallet__kind=Wallet.Kind.PLAYER)
        .exclude(game="")
        .values("game")
        .annotate(net=Sum("amount"))
        .order_by("game")
    )
    for row in played:
        report.games.setdefault(row["game"], {"players": 0, "floats": 0})["players"] = row["net"]
    floats = Wallet.objects.filter(kind=Wallet.Kind.FLOAT).values("game").annotate(held=Sum("balance"))
    for row in floats.order_by("game"):
        report.games.setdefault(row["game"], {"players": 0, "floats": 0})["floats"] = row["held"]


def _wallet_name(wallet: dict) -> str:
    if wallet["kind"] == Wallet.Kind.PLAYER:
        return f"wallet {wallet['pk']} (user #{wallet['user_id']})"
    if wallet["kind"] == Wallet.Kind.FLOAT:
        return f"float wallet {wallet['pk']} ({wallet['game']} table #{wallet['table_ref']})"
    return f"{wallet['kind']} wallet {wallet['pk']}"
