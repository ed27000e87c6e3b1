"""The coach figure: decisions compared with basic strategy, priced with the strategy's expected values."""

import pytest

from blackjack.engine.rules import PRESETS
from blackjack.engine.strategy import basic_strategy
from blackjack.history.coach import hole_ten_probability
from blackjack.history.records import Mistake, PlayerRound, PlayerStats
from tests.blackjack.conftest import deal_cards

pytestmark = pytest.mark.django_db


def test_the_ten_probability_counts_the_seen_cards():
    assert hole_ten_probability(1, []) == pytest.approx(16 / 52)
    assert hole_ten_probability(6, ["Ts", "6h", "As"]) == pytest.approx(95 / 309)


def test_taking_insurance_is_a_priced_mistake(table, alice, scripted_shoe, play_round):
    # alice 18 against an ace; she insures 50 chips; the dealer has no blackjack (A+7); she stands on 18.
    scripted_shoe(table, deal_cards(["Ts", "8h"], dealer=["As", "7d"]))
    rnd = play_round(table, [(alice, 1, 100)], [(alice, "insurance", {"accept": True}), (alice, "stand", {})])
    row = PlayerRound.objects.get(round=rnd, user=alice)
    assert (row.decisions, row.deviations) == (2, 1)
    mistake = Mistake.objects.get(round=rnd)
    assert (mistake.action, mistake.best, mistake.cards, mistake.dealer_up) == (
        "insure",
        "decline",
        "Ts8h",
        "As",
    )
    p = 95 / 309  # ten-valued cards left among the 309 unseen of six decks
    assert mistake.ev_cost == pytest.approx((1 - 3 * p) * 50)


def test_even_money_on_a_three_to_two_blackjack_costs_a_little(table, alice, scripted_shoe, play_round):
    scripted_shoe(table, deal_cards(["As", "Kh"], dealer=["Ad", "7d"]))
    rnd = play_round(table, [(alice, 1, 100)], [(alice, "even_money", {"accept": True})])
    mistake = Mistake.objects.get(round=rnd)
    assert (mistake.action, mistake.best) == ("even money", "decline")
    p = 95 / 309
    assert mistake.ev_cost == pytest.approx(((1 - p) * 1.5 - 1) * 100)
    assert PlayerRound.objects.get(round=rnd).blackjacks == 0  # even money is paid as a win, not a blackjack


def test_standing_on_twelve_against_a_two_is_priced_from_the_strategy_table(
    table, alice, scripted_shoe, play_round
):
    scripted_shoe(table, [*deal_cards(["Ts", "2h"], dealer=["2d", "9c"]), "8s"])
    rnd = play_round(table, [(alice, 1, 50)], [(alice, "stand", {})])
    mistake = Mistake.objects.get(round=rnd)
    values = basic_strategy(PRESETS["Vegas Strip"]).expected_values(["Ts", "2h"], "2d")
    assert (mistake.action, mistake.best) == ("stand", "hit")
    assert mistake.ev_cost == pytest.approx((values["hit"] - values["stand"]) * 50)
    stats = PlayerStats.objects.get(user=alice)
    assert (stats.decisions, stats.deviations) == (1, 1)
    assert stats.ev_cost == pytest.approx(mistake.ev_cost)


def test_a_hand_the_clock_stood_is_not_a_decision(table, alice, scripted_shoe, play_round):
    scripted_shoe(table, [*deal_cards(["Ts", "2h"], dealer=["2d", "9c"]), "8s"])
    rnd = play_round(table, [(alice, 1, 50)])  # alice never acts: the turn times out and she stands
    row = PlayerRound.objects.get(round=rnd)
    assert (row.decisions, row.deviations) == (0, 0)
    assert not Mistake.objects.exists()
