import pytest
from django.db import IntegrityError, transaction
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts import services
from accounts.audit import audit_ledger
from accounts.models import LedgerEntry, Wallet
from storage.append_only import AppendOnlyError
from storage.batch import Batch

pytestmark = pytest.mark.django_db


def state():
    """Every balance and every ledger row, to show that a refused call changed nothing."""
    return list(Wallet.objects.order_by("pk").values_list("pk", "balance")), LedgerEntry.objects.count()


def test_stake_at_a_table_moves_chips_to_its_float(player):
    entry = services.stake(user=player, amount=250, round_ref=7, game="blackjack", table_ref=3, memo="hand 1")
    assert (entry.kind, entry.amount, entry.balance_after) == ("bet", -250, 9_750)
    assert (entry.round_ref, entry.table_ref, entry.memo) == (7, 3, "hand 1")
    float_entry = LedgerEntry.objects.exclude(pk=entry.pk).get(transfer=entry.transfer)
    assert (float_entry.wallet.kind, float_entry.wallet.table_ref) == ("float", 3)
    assert (float_entry.amount, float_entry.balance_after) == (250, 250)
    assert Wallet.objects.get(user=player).balance == 9_750
    assert Wallet.objects.get(kind="house").balance == 0  # the house's row was not touched


def test_payout_and_refund_come_from_the_house(player):
    services.stake(user=player, amount=100)
    assert services.pay(user=player, amount=250).balance_after == 10_150
    refund = services.pay(user=player, amount=100, kind="refund")
    assert (refund.kind, refund.balance_after) == ("refund", 10_250)
    assert Wallet.objects.get(kind="house").balance == -250
    assert audit_ledger().ok


def test_stake_of_whole_balance_then_nothing_more(player):
    services.stake(user=player, amount=10_000)
    before = state()
    with pytest.raises(services.InsufficientChips) as refused:
        services.stake(user=player, amount=1)
    assert (refused.value.balance, refused.value.needed, refused.value.code) == (0, 1, "insufficient_chips")
    assert "Not enough chips" in refused.value.message
    assert state() == before


BAD_AMOUNTS = [0, -5, 2.0, 1.5, True, False, "100", None, 10**13]


BAD_CALLS = [
    (operation, amount)
    for operation in ("stake", "pay", "adjust")
    for amount in BAD_AMOUNTS
    if not (operation == "adjust" and amount == -5)  # a negative adjustment is valid: it takes chips back
]


@pytest.mark.parametrize(("operation", "amount"), BAD_CALLS)
def test_bad_amounts_are_refused_and_leave_state_untouched(player, staff, operation, amount):
    before = state()
    call = {
        "stake": lambda: services.stake(user=player, amount=amount),
        "pay": lambda: services.pay(user=player, amount=amount),
        "adjust": lambda: services.adjust(user=player, amount=amount, staff=staff, reason="fix"),
    }[operation]
    with pytest.raises(services.InvalidAmount) as refused:
        call()
    assert refused.value.message
    assert state() == before


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"kind": "bet"}, "bad_kind"),
        ({"kind": "grant"}, "bad_kind"),
        ({"round_ref": "7"}, "bad_reference"),
        ({"table_ref": 1.0}, "bad_reference"),
        ({"memo": "x" * 201}, "bad_memo"),
    ],
)
def test_pay_refuses_bad_arguments(player, extra, code):
    before = state()
    with pytest.raises(services.WalletError) as refused:
        services.pay(user=player, amount=10, **extra)
    assert refused.value.code == code
    assert state() == before


def test_adjust_both_ways_is_recorded_with_staff_and_reason(player, staff):
    credit = services.adjust(user=player, amount=500, staff=staff, reason="Compensation for outage")
    assert (credit.kind, credit.amount, credit.balance_after, credit.created_by) == (
        "adjustment",
        500,
        10_500,
        staff,
    )
    debit = services.adjust(user=player, amount=-10_500, staff=staff, reason="Duplicate account")
    assert debit.balance_after == 0
    # Two welcome grants (player and staff), then +500 and -10,500 against the issuer.
    assert Wallet.objects.get(kind="issuer").balance == -20_000 - 500 + 10_500
    assert audit_ledger().ok


def test_adjust_refuses_below_zero_non_staff_and_missing_reason(player, other_player, staff):
    before = state()
    with pytest.raises(services.InsufficientChips):
        services.adjust(user=player, amount=-10_001, staff=staff, reason="too much")
    with pytest.raises(services.WalletError) as not_staff:
        services.adjust(user=player, amount=5, staff=other_player, reason="friend")
    assert not_staff.value.code == "not_staff"
    with pytest.raises(services.WalletError) as no_reason:
        services.adjust(user=player, amount=5, staff=staff, reason="   ")
    assert no_reason.value.code == "bad_memo"
    assert state() == before


def test_user_without_wallet_is_refused_and_reported(django_user_model):
    (walletless,) = django_user_model.objects.bulk_create([django_user_model(username="ghost")])  # no signal
    before = state()
    for call in (
        lambda: services.stake(user=walletless, amount=1),
        lambda: services.pay(user=walletless, amount=1),
        lambda: services.claim_daily_grant(user=walletless),
    ):
        with pytest.raises(services.NoWallet):
            call()
    assert state() == before
    assert audit_ledger().discrepancies == [f"user ghost (#{walletless.pk}) has no wallet"]


def test_insufficient_chips_inside_an_outer_transaction_leaves_nothing_behind(player):
    services.stake(user=player, amount=9_000)
    with transaction.atomic():
        before = state()
        with pytest.raises(services.InsufficientChips):
            services.stake(user=player, amount=5_000, round_ref=1)
        assert state() == before
        # The outer transaction is still usable: the caller goes on (e.g. records the refusal).
        services.stake(user=player, amount=1_000, round_ref=1)
    assert Wallet.objects.get(user=player).balance == 0
    assert audit_ledger().ok


def test_outer_rollback_undoes_the_movement(player):
    before = state()

    def round_that_fails_after_the_bet():
        with transaction.atomic():
            services.stake(user=player, amount=100)
            raise RuntimeError("the round could not be saved")

    with pytest.raises(RuntimeError):
        round_that_fails_after_the_bet()
    assert state() == before


def test_ledger_rows_cannot_be_changed_or_deleted(player):
    entry = LedgerEntry.objects.get(wallet__user=player)
    entry.amount = 1_000_000
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        LedgerEntry.objects.filter(pk=entry.pk).update(amount=1)
    with pytest.raises(AppendOnlyError):
        LedgerEntry.objects.all().delete()
    with pytest.raises(AppendOnlyError):
        LedgerEntry.objects.update(memo="rewritten")
    assert LedgerEntry.objects.get(pk=entry.pk).amount == 10_000


def test_database_refuses_a_negative_player_balance(player):
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.filter(user=player).update(balance=-1)
    assert Wallet.objects.get(user=player).balance == 10_000


def test_house_and_issuer_may_be_negative_but_are_single(player):
    services.pay(user=player, amount=50)
    assert Wallet.objects.get(kind="house").balance == -50
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.create(kind="house")
    with pytest.raises(IntegrityError), transaction.atomic():
        Wallet.objects.create(kind="player")  # a player wallet needs its player


def test_system_wallets_are_recreated_when_missing(django_user_model):
    """Transactional test databases are flushed between tests, which removes migration data."""
    Wallet.objects.filter(kind__in=["house", "issuer"]).delete()
    user = django_user_model.objects.create_user("late", password="x")
    services.stake(user=user, amount=1)
    assert sorted(Wallet.objects.exclude(kind="player").values_list("kind", "balance")) == [
        ("house", 1),
        ("issuer", -10_000),
    ]
    assert audit_ledger().ok


def test_daily_grant_recreates_a_missing_issuer(django_user_model):
    (user,) = django_user_model.objects.bulk_create([django_user_model(username="broke")])  # no signal
    Wallet.objects.create(user=user, kind="player")
    Wallet.objects.filter(kind__in=["house", "issuer"]).delete()
    assert services.claim_daily_grant(user=user).balance_after == 1_000
    assert Wallet.objects.get(kind="issuer").balance == -1_000
    assert audit_ledger().ok


operations = st.lists(
    st.tuples(
        st.sampled_from(["stake", "payout", "refund", "adjust", "grant"]),
        st.sampled_from([0, 1]),
        st.integers(min_value=-12_000, max_value=12_000),
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=operations)
def test_any_sequence_of_movements_keeps_the_books_balanced(player, other_player, staff, steps):
    with transaction.atomic():
        users = [player, other_player]
        for name, who, amount in steps:
            user = users[who]
            try:
                if name == "stake":
                    services.stake(user=user, amount=amount)
                elif name in ("payout", "refund"):
                    services.pay(user=user, amount=amount, kind=name)
                elif name == "adjust":
                    services.adjust(user=user, amount=amount, staff=staff, reason="property test")
                else:
                    services.claim_daily_grant(user=user)
            except services.WalletError:
                pass
        report = audit_ledger()
        assert report.ok, report.discrepancies
        assert report.total == 0
        assert Wallet.objects.aggregate(total=Sum("balance"))["total"] == 0
        assert not Wallet.objects.filter(kind="player", balance__lt=0).exists()
        transaction.set_rollback(True)


# --- pay_many: a settlement's payments at once ----------------------------------------------------------


def ledger_rows(since: int):
    """The entries after id `since`, in order: wallet kind and user, amount, balance, kind, memo, refs."""
    return list(
        LedgerEntry.objects.filter(pk__gt=since)
        .order_by("pk")
        .values_list(
            "wallet__kind",
            "wallet__user_id",
            "amount",
            "balance_after",
            "kind",
            "memo",
            "round_ref",
            "table_ref",
        )
    )


def last_entry_id() -> int:
    return LedgerEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def test_pay_many_writes_the_rows_one_pay_each_would(player, other_player):
    services.stake(user=player, amount=300, game="blackjack", table_ref=4)
    services.stake(
        user=other_player, amount=100, game="blackjack", table_ref=4
    )  # the float holds 400: it covers them
    payments = [
        services.Payment(player, 250, "payout", "seat 1"),
        services.Payment(other_player, 100, "refund", "seat 2"),
        services.Payment(player, 40, "payout", "seat 3"),  # a second seat of the same player
    ]
    start = last_entry_id()
    with transaction.atomic():
        for payment in payments:
            services.pay(
                user=payment.user,
                amount=payment.amount,
                kind=payment.kind,
                memo=payment.memo,
                round_ref=9,
                game="blackjack",
                table_ref=4,
            )
        one_by_one = ledger_rows(start)
        balances = state()[0]
        transaction.set_rollback(True)

    entries = services.pay_many(payments=payments, round_ref=9, game="blackjack", table_ref=4)

    assert ledger_rows(start) == one_by_one
    assert state()[0] == balances
    assert [(e.wallet.user, e.amount, e.balance_after) for e in entries] == [
        (player, 250, 9_950),
        (other_player, 100, 10_000),
        (player, 40, 9_990),
    ]
    # Each payment is its own transfer: two rows summing to zero.
    transfers = LedgerEntry.objects.filter(pk__gt=start).values_list("transfer", flat=True)
    assert len(set(transfers)) == 3
    assert audit_ledger().ok


def test_with_a_batch_the_ledger_rows_wait_for_the_flush_and_are_those_written_at_once(player, other_player):
    """A table change passes its write batch: the balances move at once, the ledger rows go with its last
    writes, the same rows as without a batch (the float, made here, pays with a top-up: both runs alike)."""
    services.set_float(game="blackjack", table_ref=4, chips=0, memo="opened")
    start = last_entry_id()
    with transaction.atomic():
        services.stake(user=player, amount=300, round_ref=9, game="blackjack", table_ref=4)
        services.pay_many(
            payments=[services.Payment(player, 600, "payout", "seat 1")],
            round_ref=9,
            game="blackjack",
            table_ref=4,
        )
        at_once = ledger_rows(start)
        balances = state()[0]
        transaction.set_rollback(True)

    with transaction.atomic():
        batch = Batch()
        staked = services.stake(
            user=player, amount=300, round_ref=9, game="blackjack", table_ref=4, batch=batch
        )
        services.pay_many(
            payments=[services.Payment(player, 600, "payout", "seat 1")],
            round_ref=9,
            game="blackjack",
            table_ref=4,
            batch=batch,
        )
        assert staked.pk is None
        assert ledger_rows(start) == []
        assert state()[0] == balances
        batch.flush()
    assert ledger_rows(start) == at_once
    assert Wallet.objects.get(user=other_player).balance == 10_000
    assert audit_ledger().ok


def test_pay_many_with_nothing_to_pay_writes_nothing(player):
    before = state()
    assert services.pay_many(payments=[], round_ref=1) == []
    assert state() == before


@pytest.mark.parametrize(
    ("payment", "refs", "error", "code"),
    [
        ((0, "payout", ""), {}, services.InvalidAmount, "bad_amount"),
        ((-5, "refund", ""), {}, services.InvalidAmount, "bad_amount"),
        ((1.5, "payout", ""), {}, services.InvalidAmount, "bad_amount"),
        ((10, "bet", ""), {}, services.WalletError, "bad_kind"),
        ((10, "grant", ""), {}, services.WalletError, "bad_kind"),
        ((10, "payout", "x" * 201), {}, services.WalletError, "bad_memo"),
        ((10, "payout", ""), {"round_ref": "7"}, services.WalletError, "bad_reference"),
        ((10, "payout", ""), {"table_ref": 2.0}, services.WalletError, "bad_reference"),
    ],
)
def test_pay_many_refuses_any_bad_payment_before_writing(player, other_player, payment, refs, error, code):
    amount, kind, memo = payment
    before = state()
    good = services.Payment(other_player, 50, "payout", "seat 1")
    with pytest.raises(error) as refused:
        services.pay_many(payments=[good, services.Payment(player, amount, kind, memo)], **refs)
    assert refused.value.code == code
    assert state() == before


def test_pay_many_to_a_user_without_a_wallet_is_refused_and_leaves_nothing(player, django_user_model):
    (walletless,) = django_user_model.objects.bulk_create([django_user_model(username="ghost")])
    with transaction.atomic():
        before = state()
        with pytest.raises(services.NoWallet) as refused:
            services.pay_many(
                payments=[services.Payment(player, 20), services.Payment(walletless, 30)], round_ref=1
            )
        assert str(walletless.pk) in refused.value.message
        assert state() == before  # the house and the player with a wallet are put back too
        services.pay(user=player, amount=5)  # the outer transaction goes on
    assert Wallet.objects.get(user=player).balance == 10_005


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payments=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=2),
            st.integers(min_value=1, max_value=5_000),
            st.sampled_from(["payout", "refund"]),
        ),
        min_size=1,
        max_size=7,
    )
)
def test_pay_many_matches_one_pay_per_payment(player, other_player, staff, payments):
    users = [player, other_player, staff]
    wanted = [
        services.Payment(users[who], amount, kind, f"seat {n}")
        for n, (who, amount, kind) in enumerate(payments)
    ]
    start = last_entry_id()
    with transaction.atomic():
        for payment in wanted:
            services.pay(user=payment.user, amount=payment.amount, kind=payment.kind, memo=payment.memo)
        expected = ledger_rows(start), state()[0]
        transaction.set_rollback(True)
    with transaction.atomic():
        services.pay_many(payments=wanted)
        assert (ledger_rows(start), state()[0]) == expected
        assert audit_ledger().ok
        transaction.set_rollback(True)
