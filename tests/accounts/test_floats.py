"""Table floats: the house's chips at one table. Bets at a table go into its float and payments come out of
it; a float short of a payment is topped up from the house in the same transaction, never refused; floats are
funded and swept with two ledger rows per movement, and the audit counts them."""

import pytest
from django.db import IntegrityError, transaction

from accounts import services
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet
from storage.batch import Batch

pytestmark = pytest.mark.django_db


def balance(**lookup) -> int:
    return Wallet.objects.get(**lookup).balance


def float_of(table_ref: int) -> int:
    return balance(kind="float", table_ref=table_ref)


def test_set_float_funds_from_the_house_and_sweeps_back():
    assert services.set_float(game="blackjack", table_ref=5, chips=2_000, memo="funded") == 2_000
    assert (float_of(5), balance(kind="house")) == (2_000, -2_000)
    assert services.set_float(game="blackjack", table_ref=5, chips=500, memo="rebalanced") == -1_500
    assert (
        services.set_float(game="blackjack", table_ref=5, chips=500, memo="again") == 0
    )  # nothing to move: no rows
    assert services.set_float(game="blackjack", table_ref=5, chips=0, memo="swept") == -500
    assert (float_of(5), balance(kind="house")) == (0, 0)
    rows = LedgerEntry.objects.filter(kind="float").order_by("pk")
    assert [(e.wallet.kind, e.amount, e.balance_after, e.table_ref) for e in rows] == [
        ("float", 2_000, 2_000, 5),
        ("house", -2_000, -2_000, 5),
        ("float", -1_500, 500, 5),
        ("house", 1_500, -500, 5),
        ("float", -500, 0, 5),
        ("house", 500, 0, 5),
    ]
    assert audit_ledger().ok


@pytest.mark.parametrize("chips", [-1, 2.5, True, None, 10**13])
def test_set_float_refuses_a_bad_amount_and_leaves_nothing(chips):
    with pytest.raises(services.InvalidAmount):
        services.set_float(game="blackjack", table_ref=5, chips=chips, memo="x")
    assert not Wallet.objects.filter(kind="float").exists()
    assert not LedgerEntry.objects.exists()


def test_floats_of_two_tables_are_separate_and_the_house_row_is_not_touched_by_play(player, other_player):
    services.set_float(game="blackjack", table_ref=1, chips=1_000, memo="funded")
    services.set_float(game="blackjack", table_ref=2, chips=1_000, memo="funded")
    house_entries = LedgerEntry.objects.filter(wallet__kind="house").count()
    services.stake(user=player, amount=100, game="blackjack", table_ref=1)
    services.stake(user=other_player, amount=70, game="blackjack", table_ref=2)
    services.pay(user=player, amount=200, game="blackjack", table_ref=1)
    services.pay_many(payments=[services.Payment(other_player, 140)], game="blackjack", table_ref=2)
    assert (float_of(1), float_of(2)) == (900, 930)
    assert LedgerEntry.objects.filter(wallet__kind="house").count() == house_entries
    assert balance(kind="house") == -2_000
    assert audit_ledger().ok


def test_a_float_short_of_a_payment_is_topped_up_in_the_same_transaction(player):
    services.stake(
        user=player, amount=100, game="blackjack", table_ref=7
    )  # the float is made by its first bet: 100
    entry = services.pay(
        user=player, amount=250, game="blackjack", table_ref=7, float_target=1_000, round_ref=3
    )
    assert entry.balance_after == 10_150
    # Topped up by 1,150 so that after paying 250 it holds its target.
    assert (float_of(7), balance(kind="house")) == (1_000, -1_150)
    top_up = LedgerEntry.objects.get(kind="float", wallet__kind="float")
    assert (top_up.amount, top_up.balance_after, top_up.memo) == (1_150, 1_250, "Top-up for a payment")
    assert audit_ledger().ok


def test_pay_many_from_a_missing_float_tops_it_up_and_keeps_the_ledger_chains_in_a_batch(
    player, other_player
):
    with transaction.atomic():
        batch = Batch()
        services.stake(user=player, amount=40, game="blackjack", table_ref=9, batch=batch)
        services.pay_many(
            payments=[services.Payment(player, 80), services.Payment(other_player, 20, "refund")],
            game="blackjack",
            table_ref=9,
            float_target=0,
            batch=batch,
        )
        batch.flush()
    assert float_of(9) == 0
    assert (balance(user=player), balance(user=other_player)) == (10_040, 10_020)
    assert audit_ledger().ok  # every balance_after chain in id order, the top-up's rows among the batch's


def test_a_float_can_never_go_below_zero():
    services.set_float(game="blackjack", table_ref=3, chips=10, memo="funded")
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.filter(kind="float").update(balance=-1)
    assert float_of(3) == 10


def test_a_float_belongs_to_one_table_and_no_user(player):
    services.set_float(game="blackjack", table_ref=3, chips=10, memo="funded")
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.create(kind="float", game="blackjack", table_ref=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.create(kind="float")
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.create(kind="house", table_ref=4)


def test_the_audit_finds_a_float_that_does_not_match_its_ledger():
    services.set_float(game="blackjack", table_ref=3, chips=10, memo="funded")
    Wallet.objects.filter(kind="float").update(balance=11)
    report = audit_ledger()
    assert any("float wallet" in problem and "balance 11" in problem for problem in report.discrepancies)
