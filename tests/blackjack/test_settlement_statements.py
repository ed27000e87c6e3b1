"""A settlement's round trips do not grow with the number of players paid: the payouts are made at once
(`accounts.services.pay_many`), and the players' totals are locked in one read and their period rows added
to in one statement; each player's own totals row is an UPDATE of its own, which on PostgreSQL goes with the
round's other history rows (one round trip), elsewhere apart. Results and books as before."""

import pytest
from django.db import connection

from accounts.audit import audit_ledger
from blackjack.history.records import PeriodStats, PlayerStats
from blackjack.models import Round
from tests.blackjack.conftest import deal_cards, round_trips

pytestmark = pytest.mark.django_db

TWENTIES = [["Ts", "Th"], ["Tc", "Td"], ["Ks", "Kh"], ["Kc", "Kd"], ["Qs", "Qh"]]


def settle_with(players, table, act, scripted_shoe, balance) -> int:
    """Every player bets 100 on twenty against the dealer's 17 and stands; the round trips of the last stand,
    which settles the round (after one round already played, so every totals row exists)."""
    scripted_shoe(table, deal_cards(*TWENTIES[: len(players)], dealer=["7c", "Jd"]) * 2)
    for seat, player in enumerate(players, start=1):
        act(table, player, "sit", seat=seat)
    trips = 0
    for _ in range(2):
        for player in players:
            act(table, player, "bet", amount=100)
        for player in players[:-1]:
            act(table, player, "stand")
        with round_trips() as sent:
            act(table, players[-1], "stand")
        trips = len(sent)
        for player in players:
            act(table, player, "ready")
    assert [balance(player) for player in players] == [10_200] * len(players)  # two wins each
    results = Round.objects.filter(table=table, number=2).get().results["seats"]
    assert [seat["net"] for seat in results] == [100] * len(players)
    assert list(
        PlayerStats.objects.filter(user__in=players).values_list("rounds", "wins", "net").distinct()
    ) == [(2, 2, 200)]
    assert PeriodStats.objects.filter(user__in=players).count() == 3 * len(players)  # day, week, month
    assert audit_ledger().ok
    return trips


def test_paying_five_players_takes_no_more_round_trips_than_paying_one_on_postgresql(
    make_table, make_user, act, scripted_shoe, balance
):
    alone = settle_with([make_user("solo")], make_table(name="one"), act, scripted_shoe, balance)
    five = settle_with(
        [make_user(f"p{n}") for n in range(5)], make_table(name="five"), act, scripted_shoe, balance
    )
    # Each player's own totals row: in one pipeline on PostgreSQL, one statement each elsewhere; the payouts
    # and the period rows stay at one statement each.
    assert five - alone == (0 if connection.vendor == "postgresql" else 4)
