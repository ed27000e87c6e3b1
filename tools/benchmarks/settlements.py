"""Benchmark: chips moving at several tables at once, and how long their transactions wait for each other's
locks on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/blackjack_bench \
        .venv/bin/python -m tools.benchmarks.settlements
    .venv/bin/python -m tools.benchmarks.settlements --tables 8 --rounds 300 --hold-ms 2

Each of `--tables` processes owns one table with five players and repeats a round's money: one transaction
locks the table's row (as every write of a table does), takes the five players' bets
(`accounts.services.stake`), waits `--hold-ms` (the rest of a table write: its round, seats, log and events)
and commits; a second one pays them back (`pay_many`, a push: the books stay where they were). Meanwhile the
parent samples `pg_stat_activity` every millisecond for the workers' backends waiting on a lock. Prints
transactions per second, the share of samples in which some worker waited for a lock, and the mean number
waiting. Run it against two commits side by side in the same minutes: the machine is shared and noisy.
Needs PostgreSQL (the database must exist; it is migrated first).
"""

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PLAYERS = 5
BET = 10


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardroom.settings")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "settlements-benchmark-only")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()


def _worker(table_id: int, user_ids: list[int], rounds: int, hold_ms: float, start, done) -> None:
    _setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from accounts import services as wallet
    from blackjack.models import Table

    users = list(get_user_model().objects.filter(pk__in=user_ids))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        done.put(("pid", cursor.fetchone()[0]))
    start.wait()
    began = time.perf_counter()
    for number in range(rounds):
        with transaction.atomic():
            Table.objects.select_for_update().filter(pk=table_id).values_list("pk").first()
            for user in users:
                wallet.stake(user=user, amount=BET, round_ref=number, game="blackjack", table_ref=table_id)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(%s)", [hold_ms / 1000])
        with transaction.atomic():
            Table.objects.select_for_update().filter(pk=table_id).values_list("pk").first()
            payments = [wallet.Payment(user, BET, "refund") for user in users]
            wallet.pay_many(payments=payments, round_ref=number, game="blackjack", table_ref=table_id)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(%s)", [hold_ms / 1000])
    done.put(("done", time.perf_counter() - began))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--hold-ms", type=float, default=1.0)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("set DATABASE_URL=postgres://...: lock waits are measured on PostgreSQL")
    _setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    import accounts.services
    from blackjack import services
    from blackjack.engine.rules import PRESETS
    from blackjack.models import RulePreset

    call_command("migrate", verbosity=0, interactive=False)
    preset, _ = RulePreset.objects.get_or_create(
        name="Vegas Strip", defaults={"rules": PRESETS["Vegas Strip"].to_dict()}
    )
    stamp = time.strftime("%H%M%S")
    work = []
    for n in range(args.tables):
        table = services.create_table(name=f"settle {stamp} {n}", preset=preset, min_bet=10, max_bet=500)
        users = [
            get_user_model().objects.create_user(f"settle-{stamp}-{n}-{k}", password=None)
            for k in range(PLAYERS)
        ]
        for user in users:
            accounts.services.open_wallet(user=user)
        work.append((table.pk, [user.pk for user in users]))
    connection.close()

    context = multiprocessing.get_context("spawn")
    start, done = context.Event(), context.Queue()
    workers = [
        context.Process(target=_worker, args=(table_id, user_ids, args.rounds, args.hold_ms, start, done))
        for table_id, user_ids in work
    ]
    for worker in workers:
        worker.start()
    pids = [done.get()[1] for _ in workers]
    samples = waiting_samples = waiting_total = 0
    started = time.perf_counter()
    start.set()
    with connection.cursor() as cursor:
        while any(worker.is_alive() for worker in workers):
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s) AND wait_event_type = 'Lock'",
                [pids],
            )
            waiting = cursor.fetchone()[0]
            samples += 1
            waiting_samples += waiting > 0
            waiting_total += waiting
            time.sleep(0.001)
    elapsed = time.perf_counter() - started
    for worker in workers:
        worker.join()
    transactions = 2 * args.rounds * args.tables
    print(f"wallet code: {Path(accounts.services.__file__).resolve()}")
    print(
        f"{args.tables} tables x {args.rounds} rounds ({PLAYERS} bets, then their payments), hold "
        f"{args.hold_ms:g} ms: {transactions / elapsed:,.0f} transactions/s; some worker waiting for a lock "
        f"in {100 * waiting_samples / max(samples, 1):.0f}% of {samples:,} samples, "
        f"{waiting_total / max(samples, 1):.2f} waiting on average"
    )
    call_command("audit_ledger")


if __name__ == "__main__":
    main()
