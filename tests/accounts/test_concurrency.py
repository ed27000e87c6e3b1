"""Real concurrency on PostgreSQL: threads with their own connections racing for the same chips."""

import threading
import time

import pytest
from django.db import connection, transaction

from accounts import services
from accounts.audit import audit_ledger
from accounts.models import Wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROUNDS = 10


def in_thread(target, results, key):
    """Run target() in a thread with its own connection, closed at the end; store its result or exception."""

    def run():
        try:
            results[key] = target()
        except Exception as error:  # recorded for the assertions below
            results[key] = error
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def wait_until_a_session_waits_for_a_lock(timeout=10.0):
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("no session ever waited for a lock")


def balance(user):
    return Wallet.objects.get(user=user).balance


def test_two_threads_spending_the_same_chips_exactly_one_succeeds(player):
    for round_number in range(ROUNDS):
        everything = balance(player)
        barrier = threading.Barrier(2)
        results = {}

        def spend_all(everything=everything, barrier=barrier, round_number=round_number):
            barrier.wait()
            return services.stake(user=player, amount=everything, round_ref=round_number)

        threads = [in_thread(spend_all, results, name) for name in ("first", "second")]
        for thread in threads:
            thread.join(timeout=30)
        outcomes = sorted(type(result).__name__ for result in results.values())
        assert outcomes == ["InsufficientChips", "LedgerEntry"], results
        assert balance(player) == 0
        services.pay(user=player, amount=everything, kind="refund", round_ref=round_number)
    report = audit_ledger()
    assert report.ok, report.discrepancies
    assert report.entries == 2 + 4 * ROUNDS


def test_a_waiting_debit_sees_the_committed_balance(player):
    """The second debit blocks on the first one's row lock and then finds the chips gone."""
    first_may_commit = threading.Event()
    first_staked = threading.Event()
    results = {}

    def first():
        with transaction.atomic():
            entry = services.stake(user=player, amount=7_000)
            first_staked.set()
            first_may_commit.wait(timeout=30)
        return entry

    one = in_thread(first, results, "first")
    assert first_staked.wait(timeout=30)
    two = in_thread(lambda: services.stake(user=player, amount=7_000), results, "second")
    wait_until_a_session_waits_for_a_lock()
    first_may_commit.set()
    one.join(timeout=30)
    two.join(timeout=30)
    assert results["first"].balance_after == 3_000
    assert isinstance(results["second"], services.InsufficientChips)
    assert results["second"].balance == 3_000
    assert balance(player) == 3_000
    assert audit_ledger().ok


def test_payouts_to_two_players_in_opposite_orders_do_not_deadlock(player, other_player):
    """Every movement locks the system wallet before the player's: no lock cycle between two tables."""
    first_paid_one = threading.Event()
    first_may_continue = threading.Event()
    results = {}

    def first():
        with transaction.atomic():
            services.pay(user=player, amount=100)
            first_paid_one.set()
            first_may_continue.wait(timeout=30)
            return services.pay(user=other_player, amount=100)

    def second():
        with transaction.atomic():
            services.pay(user=other_player, amount=200)
            return services.pay(user=player, amount=200)

    one = in_thread(first, results, "first")
    assert first_paid_one.wait(timeout=30)
    two = in_thread(second, results, "second")
    wait_until_a_session_waits_for_a_lock()
    first_may_continue.set()
    one.join(timeout=30)
    two.join(timeout=30)
    assert not any(isinstance(result, Exception) for result in results.values()), results
    assert balance(player) == balance(other_player) == 10_300
    assert audit_ledger().ok


def test_two_simultaneous_daily_grant_claims_pay_once(player):
    services.stake(user=player, amount=10_000)
    barrier = threading.Barrier(2)
    results = {}

    def claim():
        barrier.wait()
        return services.claim_daily_grant(user=player)

    threads = [in_thread(claim, results, name) for name in ("first", "second")]
    for thread in threads:
        thread.join(timeout=30)
    outcomes = sorted(type(result).__name__ for result in results.values())
    assert outcomes == ["DailyGrantRefused", "LedgerEntry"], results
    assert balance(player) == 1_000
    assert audit_ledger().ok


def test_audit_runs_on_one_snapshot_while_chips_move(player, other_player):
    stop = threading.Event()
    results = {}

    def keep_playing():
        moves = 0
        while not stop.is_set():
            services.stake(user=player, amount=10)
            services.pay(user=other_player, amount=10)
            moves += 1
        return moves

    worker = in_thread(keep_playing, results, "play")
    reports = [audit_ledger() for _ in range(15)]
    stop.set()
    worker.join(timeout=30)
    assert results["play"] > 0
    assert all(report.ok for report in reports), [r.discrepancies for r in reports if not r.ok]


def test_many_threads_moving_chips_keep_every_balance_after_chain_exact(player, other_player):
    threads_count, moves = 4, 15
    barrier = threading.Barrier(threads_count)
    results = {}

    def play(index):
        barrier.wait()
        players = [player, other_player] if index % 2 else [other_player, player]
        for move in range(moves):
            for user in players:
                services.stake(user=user, amount=3, round_ref=index * 1000 + move)
                services.pay(user=user, amount=2 + index % 2, round_ref=index * 1000 + move)
        return moves

    threads = [in_thread(lambda index=index: play(index), results, index) for index in range(threads_count)]
    for thread in threads:
        thread.join(timeout=120)
    assert all(result == moves for result in results.values()), results
    # Threads 0 and 2 lose 1 chip per stake/pay pair, threads 1 and 3 break even.
    expected = 10_000 - 2 * moves
    assert balance(player) == balance(other_player) == expected
    report = audit_ledger()
    assert report.ok, report.discrepancies
    assert report.house_result == 2 * 2 * moves
