"""generate_history writes real, consistent history: a clean ledger, rounds that replay, shoes that verify,
totals that add up."""

import io

import pytest
from django.core.management import call_command
from django.db.models import Count, Sum

from accounts.audit import audit_ledger
from blackjack import services
from blackjack.engine.shoe import shuffled_shoe
from blackjack.history import generate
from blackjack.history.fairness import check_dealt
from blackjack.history.records import Mistake, PeriodStats, PlayerRound, PlayerStats
from blackjack.history.replay import replay_round
from blackjack.models import ActionLog, Round

pytestmark = pytest.mark.django_db


@pytest.fixture
def generated():
    call_command("generate_history", users=8, rounds=90, tables=2, days=5, seed=7, stdout=io.StringIO())


def test_the_ledger_stays_clean(generated):
    report = audit_ledger()
    assert report.ok, report.discrepancies
    assert report.entries > 90 * 2


def test_each_generated_round_counts_its_logged_actions(generated):
    counted = list(Round.objects.annotate(n=Count("actions")).values_list("logged", "n"))
    assert len(counted) == 90
    assert all(logged == n > 0 for logged, n in counted)


@pytest.mark.postgres
def test_on_postgresql_the_rows_are_copied_in_and_the_ledger_stays_clean(generated):
    """PostgreSQL takes the COPY path (the others bulk_create), which lists every column itself."""
    report = audit_ledger()
    assert report.ok, report.discrepancies
    counted = list(Round.objects.annotate(n=Count("actions")).values_list("logged", "n"))
    assert len(counted) == 90
    assert all(logged == n > 0 for logged, n in counted)


def test_generated_rounds_replay_exactly_and_retired_shoes_verify(generated):
    rounds = list(Round.objects.select_related("shoe").order_by("id"))
    assert len(rounds) == 90
    retired = 0
    for rnd in rounds[::5]:
        replay = replay_round(rnd, list(ActionLog.objects.filter(round=rnd).order_by("seq")))
        assert replay.matches_live is True, rnd.pk
        if rnd.shoe.retired_at is not None:
            retired += 1
            assert check_dealt(shoe=rnd.shoe, start_position=rnd.start_position, dealt=replay.dealt).ok
    assert retired > 0


def test_totals_agree_with_the_rows(generated):
    sums = {
        row["user_id"]: row
        for row in PlayerRound.objects.values("user_id").annotate(
            n=Count("id"), net=Sum("net"), hands=Sum("hands")
        )
    }
    stats = list(PlayerStats.objects.all())
    assert len(stats) == len(sums)
    for s in stats:
        assert (s.rounds, s.net, s.hands) == (
            sums[s.user_id]["n"],
            sums[s.user_id]["net"],
            sums[s.user_id]["hands"],
        )
        monthly = PeriodStats.objects.filter(user_id=s.user_id, period="month").aggregate(net=Sum("net"))[
            "net"
        ]
        assert monthly == s.net
    assert PlayerRound.objects.count() >= 90


def test_text_columns_hold_plain_text(generated):
    """COPY writes JSON only into JSON columns: a mistake's action is `hit`, not `"hit"`."""
    actions = set(Mistake.objects.values_list("action", flat=True)) | set(
        Mistake.objects.values_list("best", flat=True)
    )
    assert actions
    assert actions <= {
        "hit",
        "stand",
        "double",
        "split",
        "surrender",
        "play on",
        "insure",
        "decline",
        "even money",
    }


def test_a_generated_round_that_runs_out_goes_on_with_the_discards_as_at_the_tables(monkeypatch):
    # Shoes of 14 cards, so that rounds run out; the live tables' order is scripted to the same cards.
    def short_shoe(*, server_seed, client_seed, decks, nonce=0):
        return shuffled_shoe(server_seed=server_seed, client_seed=client_seed, decks=decks, nonce=nonce)[:14]

    monkeypatch.setattr(generate, "shuffled_shoe", short_shoe)
    monkeypatch.setattr(
        services,
        "_shoe_order",
        lambda shoe: short_shoe(server_seed=shoe.server_seed, client_seed=shoe.client_seed, decks=shoe.decks),
    )
    call_command("generate_history", users=6, rounds=40, tables=1, days=1, seed=3, stdout=io.StringIO())
    ran_out = 0
    for rnd in Round.objects.select_related("shoe").order_by("id"):
        replay = replay_round(rnd, list(ActionLog.objects.filter(round=rnd).order_by("seq")))
        assert replay.matches_live is True, rnd.pk
        assert rnd.start_position < 14  # a shoe that ran out is retired
        ran_out += replay.discards_dealt > 0
    assert ran_out > 0
    assert audit_ledger().ok
