"""The insurance window: insurance, even money, the dealer's peek, and the no-hole-card game's insurance."""

import pytest

from blackjack.engine import RuleSet, allowed_actions

from .conftest import act, refused, results, start

EUROPEAN = RuleSet(dealer_peek=False, surrender="none")


def insure(seat, accept=True):
    return {"action": "insurance", "seat": seat, "accept": accept}


def even_money(seat, accept=True):
    return {"action": "even_money", "seat": seat, "accept": accept}


def test_ace_up_opens_the_window():
    state = start([("Ts", "9h"), ("As", "Kh")], "Ac", "7d")
    assert state.phase == "insurance"
    assert state.turn is None
    assert allowed_actions(state, 1) == ["insurance"]
    assert allowed_actions(state, 2) == ["even_money"]
    refused(state, {"action": "stand", "seat": 1}, "illegal_action")
    refused(state, even_money(1), "illegal_action")
    refused(state, insure(2), "illegal_action")
    refused(state, {"action": "insurance", "seat": 1, "accept": "yes"}, "bad_message")
    refused(state, {"action": "insurance", "seat": 1}, "bad_message")


def test_insurance_pays_2_to_1_on_a_dealer_blackjack():
    state = act(start([("Ts", "9h")], "Ac", "Kd"), insure(1))
    assert state.phase == "settled"
    assert state.hole_revealed
    assert results(state) == [(1, "lose", 0)]
    seat = state.seats[1]
    assert (seat.insurance, seat.stake, seat.insurance_payout, seat.returned) == (5, 15, 15, 15)


def test_insurance_is_lost_without_a_dealer_blackjack_and_play_goes_on():
    state = act(start([("Ts", "9h")], "Ac", "7d"), insure(1))
    assert state.phase == "playing"
    assert not state.hole_revealed
    state = act(state, "stand")
    assert results(state) == [(1, "win", 20)]
    seat = state.seats[1]
    assert (seat.stake, seat.insurance_payout, seat.returned) == (15, 0, 20)


def test_declined_insurance_against_a_dealer_blackjack():
    state = act(start([("Ts", "9h")], "Ac", "Kd"), insure(1, accept=False))
    assert results(state) == [(1, "lose", 0)]
    assert (state.seats[1].stake, state.seats[1].returned) == (10, 0)


def test_insurance_on_an_odd_bet_costs_half_rounded_down():
    state = act(start([("Ts", "9h")], "Ac", "Kd", bets={1: 7}), insure(1))
    seat = state.seats[1]
    assert (seat.insurance, seat.stake, seat.returned) == (3, 10, 9)


def test_a_one_chip_bet_cannot_insure():
    state = start([("Ts", "9h")], "Ac", "7d", bets={1: 1})
    assert state.phase == "playing"
    state = start([("Ts", "9h")], "Ac", "Kd", bets={1: 1})
    assert state.phase == "settled"
    assert results(state) == [(1, "lose", 0)]


@pytest.mark.parametrize("hole", ["Kd", "7d"])
def test_even_money_is_a_sure_1_to_1(hole):
    state = act(start([("As", "Kh")], "Ac", hole), even_money(1))
    assert state.phase == "settled"
    assert results(state) == [(1, "win", 20)]


def test_declined_even_money_pushes_against_a_dealer_blackjack_and_pays_3_to_2_otherwise():
    state = act(start([("As", "Kh")], "Ac", "Kd"), even_money(1, accept=False))
    assert results(state) == [(1, "push", 10)]
    state = act(start([("As", "Kh")], "Ac", "7d"), even_money(1, accept=False))
    assert results(state) == [(1, "blackjack", 25)]


def test_the_window_waits_for_every_seat_and_a_timeout_declines_the_rest():
    state = start([("Ts", "9h"), ("8s", "8h"), ("As", "Qh")], "Ac", "7d")
    state = act(state, insure(2))
    assert state.phase == "insurance"
    refused(state, insure(2), "illegal_action")
    state = act(state, {"action": "timeout"})
    assert state.phase == "playing"
    assert [seat.insurance for seat in state.seats.values()] == [0, 5, 0]
    assert state.seats[3].hands[0].status == "blackjack"
    assert state.turn == (1, 0)


def test_peek_with_a_ten_up_ends_the_round_on_a_dealer_blackjack():
    state = start([("Ts", "9h"), ("As", "Kh")], "Tc", "Ad")
    assert state.phase == "settled"
    assert state.hole_revealed
    assert results(state) == [(1, "lose", 0), (2, "push", 10)]


def test_peek_with_a_ten_up_and_no_blackjack_plays_on():
    state = start([("Ts", "9h")], "Tc", "9d")
    assert state.phase == "playing"
    assert not state.hole_revealed


def test_no_hole_card_game_offers_insurance_and_settles_it_at_the_end():
    state = start([("Ts", "9h")], "Ac", draws=("Kd",), rules=EUROPEAN)
    assert state.dealer_cards == ["Ac"]
    state = act(state, insure(1))
    assert state.phase == "playing"
    state = act(state, "stand")
    assert state.dealer_cards == ["Ac", "Kd"]
    assert results(state) == [(1, "lose", 0)]
    assert state.seats[1].returned == 15


def test_no_hole_card_even_money_is_paid_whatever_the_dealer_draws():
    state = act(start([("As", "Kh")], "Ac", draws=("Kd",), rules=EUROPEAN), even_money(1))
    assert results(state) == [(1, "win", 20)]
    assert state.dealer_cards == ["Ac"]
