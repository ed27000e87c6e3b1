"""Recording at settlement: one row per player per round, the running totals, and the coach figure."""

import pytest

from blackjack.history.records import Mistake, PeriodStats, PlayerRound, PlayerStats
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def test_a_settled_round_is_recorded_once_per_player(table, alice, bob, scripted_shoe, play_round):
    # alice 10+7 stands; bob 9+2 doubles to 21; the dealer 6+10 draws a 9 and busts.
    scripted_shoe(table, [*deal_cards(["Ts", "7h"], ["9c", "2d"], dealer=["6s", "Td"]), "Kc", "9h"])
    rnd = play_round(
        table,
        [(alice, 1, 100), (bob, 2, 50)],
        [(alice, "stand", {}), (bob, "double", {})],
    )
    rows = {row.user_id: row for row in PlayerRound.objects.filter(round=rnd)}
    assert set(rows) == {alice.pk, bob.pk}
    a, b = rows[alice.pk], rows[bob.pk]
    assert (a.stake, a.returned, a.net, a.result, a.hands, a.wins) == (100, 200, 100, "win", 1, 1)
    assert (b.stake, b.returned, b.net, b.doubles_won, b.summary) == (100, 200, 100, 1, "win")
    # Hard 17 against a 6 stands and 11 against a 6 doubles: both follow basic strategy.
    assert (a.decisions, a.deviations, b.decisions, b.deviations) == (1, 0, 1, 0)
    stats = PlayerStats.objects.get(user=alice)
    assert (stats.rounds, stats.hands, stats.net, stats.biggest_win, stats.longest_streak) == (
        1,
        1,
        100,
        100,
        1,
    )
    assert set(PeriodStats.objects.filter(user=alice).values_list("period", "net")) == {
        ("day", 100),
        ("week", 100),
        ("month", 100),
    }


def test_a_decision_against_basic_strategy_is_priced(table, alice, scripted_shoe, play_round):
    # alice hits a hard 20 against a 6: basic strategy stands; the hit draws a king and busts.
    scripted_shoe(table, [*deal_cards(["Ts", "Qh"], dealer=["6s", "Td"]), "Kc"])
    rnd = play_round(table, [(alice, 1, 100)], [(alice, "hit", {})])
    row = PlayerRound.objects.get(round=rnd, user=alice)
    assert (row.decisions, row.deviations, row.result, row.summary) == (1, 1, "lose", "bust")
    mistake = Mistake.objects.get(user=alice)
    assert (mistake.action, mistake.best, mistake.cards, mistake.dealer_up) == ("hit", "stand", "TsQh", "6s")
    # Standing on 20 against a 6 is worth about +0.70 bets, hitting it about -0.85: some 155 chips on 100.
    assert 130 < mistake.ev_cost < 180
    assert row.ev_cost == pytest.approx(mistake.ev_cost)


def test_recording_twice_changes_nothing(table, alice, scripted_shoe, play_round):
    from blackjack.history.recording import record_round

    scripted_shoe(table, deal_cards(["Ts", "9h"], dealer=["7s", "Td"]))
    rnd = play_round(table, [(alice, 1, 100)], [(alice, "stand", {})])
    assert record_round(round=rnd) == []
    assert PlayerRound.objects.filter(round=rnd).count() == 1
    assert PlayerStats.objects.get(user=alice).rounds == 1


def test_two_seats_of_one_player_make_one_row(table, alice, scripted_shoe, play_round):
    # seat 1: 19 stands and wins; seat 2: 16 stands and loses to the dealer's 17.
    scripted_shoe(table, deal_cards(["Ts", "9h"], ["Tc", "6d"], dealer=["7s", "Td"]))
    rnd = play_round(
        table,
        [(alice, 1, 100), (alice, 2, 50)],
        [(alice, "stand", {"seat": 1}), (alice, "stand", {"seat": 2})],
    )
    row = PlayerRound.objects.get(round=rnd)
    assert (row.seats, row.hands, row.wins, row.losses, row.stake, row.net) == ([1, 2], 2, 1, 1, 150, 50)
    assert row.summary == "win, lose"


def test_a_voided_round_is_not_recorded(table, alice, bob, act):
    from blackjack import services
    from blackjack.models import Table

    act(table, alice, "sit", seat=1)
    act(table, bob, "sit", seat=2)  # bob has not bet: the betting window stays open
    act(table, alice, "bet", amount=10)
    rnd = Table.objects.get(pk=table.pk).current_round
    assert services.void_round(round_id=rnd.pk, reason="test")
    assert not PlayerRound.objects.exists()
    assert not PlayerStats.objects.filter(rounds__gt=0).exists()
